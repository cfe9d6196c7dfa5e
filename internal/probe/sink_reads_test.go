package probe

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A read is not an effect: by default the sink counts the calls whose
// method is not safe; a pattern may still select a read that does work.
func TestSinkCountsNoReadsByDefault(t *testing.T) {
	s, err := StartSink(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, m := range []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "get"} {
		req, _ := http.NewRequest(m, s.URL()+"/v1/x", strings.NewReader(""))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if n := s.Counted(); n != 4 || s.Patterns() {
		t.Fatalf("default: %d counted (want POST, PUT, PATCH, DELETE), patterns %v", n, s.Patterns())
	}
	p, _ := ParseCallPattern("GET /v1/*")
	s.SetMatch([]CallPattern{p})
	if n := s.Counted(); n != 2 || !s.Patterns() { // GET and get
		t.Fatalf("'GET /v1/*': %d counted, want 2", n)
	}
}
