package replay

import (
	"bytes"
	"os"
	"testing"
)

// TestRawForBareLF: a request captured with bare LF line endings (which
// capture accepts, as net/http does) still gets its Host rewritten for --raw,
// and nothing else changes.
func TestRawForBareLF(t *testing.T) {
	raw, err := os.ReadFile("testdata/bare_lf.http")
	if err != nil {
		t.Fatal(err)
	}
	out, changed := RawFor(raw, "127.0.0.1:9")
	want := bytes.Replace(raw, []byte("Host: old.example\n"), []byte("Host: 127.0.0.1:9\n"), 1)
	if !changed || !bytes.Equal(out, want) {
		t.Fatalf("RawFor = %q (changed %v), want %q", out, changed, want)
	}
	// Host as the last header line, CRLF and LF.
	for _, r := range []string{"GET / HTTP/1.1\r\nX: 1\r\nHost: a\r\n\r\n", "GET / HTTP/1.1\nX: 1\nHost: a\n\n"} {
		o, ch := RawFor([]byte(r), "b")
		if w := bytes.Replace([]byte(r), []byte("Host: a"), []byte("Host: b"), 1); !ch || !bytes.Equal(o, w) {
			t.Fatalf("last-line Host: %q", o)
		}
	}
	// A body line that looks like a Host header is never touched.
	odd := []byte("POST / HTTP/1.1\nX: 1\nContent-Length: 9\n\nHost: abc")
	if o, ch := RawFor(odd, "z"); ch || !bytes.Equal(o, odd) {
		t.Fatalf("rewrote the body: %q", o)
	}
}
