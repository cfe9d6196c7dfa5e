package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// TestHeadersWithNonUTF8BytesRoundTrip: header values are kept as bytes on
// the wire (Latin-1 from older senders is common). The ordered header list is
// stored as JSON, which cannot hold invalid UTF-8, so read back it held
// U+FFFD and a rebuilt replay sent different header bytes than were captured.
// The raw request is the truth: the headers read back equal what was sent.
func TestHeadersWithNonUTF8BytesRoundTrip(t *testing.T) {
	eachBackend(t, testHeadersWithNonUTF8BytesRoundTrip)
}

func testHeadersWithNonUTF8BytesRoundTrip(t *testing.T, loc string) {
	raw, err := os.ReadFile(filepath.Join("testdata", "latin1_header.http"))
	if err != nil {
		t.Fatal(err)
	}
	want := message.ParseHeaderBlock(raw)
	if v := want.Get("X-Customer-Name"); v != "Jos\xe9 M\xfcller" {
		t.Fatalf("fixture header parsed as %q", v)
	}
	s := deliveriesOpen(t, loc)
	ctx := context.Background()
	d := &Delivery{Method: "POST", Target: "/hooks/legacy", Proto: "HTTP/1.1", Headers: want, Raw: raw, Body: []byte("{}")}
	if err := s.InsertDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetDelivery(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Headers) != len(want) {
		t.Fatalf("headers %q, want %q", got.Headers, want)
	}
	for i := range want {
		if got.Headers[i] != want[i] {
			t.Fatalf("header %d read back as %q, want %q", i, got.Headers[i], want[i])
		}
	}
	enc := got.Request().Encode("127.0.0.1:1", got.Target)
	if !bytes.Contains(enc, []byte("X-Customer-Name: Jos\xe9 M\xfcller\r\n")) {
		t.Fatalf("rebuilt request lost the header bytes:\n%q", enc)
	}
}
