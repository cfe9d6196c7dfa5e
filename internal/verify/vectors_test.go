package verify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// vector is one published example from a provider's documentation or
// reference library, stored in testdata/providers/vectors with its source.
type vector struct {
	Source         string      `json:"source"`
	Provider       string      `json:"provider"`
	Secret         string      `json:"secret"`
	URL            string      `json:"url"`
	Body           string      `json:"body"`
	Headers        [][2]string `json:"headers"`
	Now            int64       `json:"now"`
	Valid          bool        `json:"valid"`
	Reason         string      `json:"reason"`
	SignReproduces []string    `json:"sign_reproduces"`
}

// readVector reads the provider's published test vector in file.
func readVector(t *testing.T, file string) vector {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v vector
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOfficialVectors(t *testing.T) {
	files, err := filepath.Glob("../../testdata/providers/vectors/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("vectors: %v %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			v := readVector(t, file)
			if v.Source == "" {
				t.Fatal("vector without a source")
			}
			req := &message.Request{Method: "POST", Target: "/", Body: []byte(v.Body)}
			for _, h := range v.Headers {
				req.Headers = append(req.Headers, message.Header{Name: h[0], Value: h[1]})
			}
			opt := Options{Now: time.Unix(v.Now, 0), URL: v.URL}
			r, err := Verify(req, v.Provider, v.Secret, opt)
			if err != nil {
				t.Fatal(err)
			}
			if r.Valid != v.Valid || r.Reason != v.Reason {
				t.Fatalf("got valid=%v reason=%q, want valid=%v reason=%q (%s)", r.Valid, r.Reason, v.Valid, v.Reason, v.Source)
			}
			if len(v.SignReproduces) == 0 {
				return
			}
			// Signing the same bytes at the same instant reproduces the published headers.
			bare := req.Clone()
			for _, h := range v.SignReproduces {
				if h != "webhook-id" && h != "svix-id" {
					bare.Headers = bare.Headers.Del(h)
				}
			}
			at, ok := SignedAt(req, v.Provider)
			if !ok {
				at = time.Unix(v.Now, 0)
			}
			s, err := Sign(bare, v.Provider, v.Secret, Options{Now: at, URL: v.URL})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range v.SignReproduces {
				if got, want := s.Headers.Get(h), req.Headers.Get(h); got != want {
					t.Errorf("signed %s = %q, published %q", h, got, want)
				}
			}
		})
	}
}
