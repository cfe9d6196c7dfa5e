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

// Text that Postgres's text cannot hold (bytes that are not UTF-8, NUL) is
// stored on both backends — capture must never answer 503 for it — and a
// delivery's target reads back with its wire bytes (from the raw request).
func TestUnstorableTextStored(t *testing.T) { eachBackend(t, testUnstorableTextStored) }

func testUnstorableTextStored(t *testing.T, loc string) {
	s := deliveriesOpen(t, loc)
	ctx := context.Background()
	raw := []byte("POST /caf\xe9?x=\xff HTTP/1.1\r\nHost: h\r\nX-GitHub-Event: pu\xe9sh\r\nContent-Length: 2\r\n\r\n{}")
	d := &Delivery{Method: "POST", Target: "/caf\xe9?x=\xff", Raw: raw, Body: []byte("{}"),
		EventType: "pu\xe9sh", EventID: "e\x00vt", Headers: message.ParseHeaderBlock(raw), Verification: "invalid: \xff"}
	w := writerOpen(t, s)
	if err := w.Commit(ctx, []*Delivery{d}, []Response{}); err != nil {
		t.Fatalf("capture's writer refused the delivery: %v", err)
	}
	got, err := s.GetDelivery(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Target != d.Target || !bytes.Equal(got.Raw, raw) || got.Headers.Get("X-GitHub-Event") != "pu\xe9sh" {
		t.Fatalf("read back target %q, header %q", got.Target, got.Headers.Get("X-GitHub-Event"))
	}
	// The other tables too, and a filter given the same text finds it.
	run := &Run{Kind: "check", Target: "http://h/\xff"}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertAttempt(ctx, &Attempt{RunID: run.ID, Err: "reset \x00 \xfe", EventID: "e\x00vt"}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertProbeReading(ctx, &ProbeReading{RunID: run.ID, Probe: "cmd", Value: "out\xff\x00"}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertVerdict(ctx, &VerdictRow{RunID: run.ID, Phase: "dups", Status: "fail", Message: "\xff"}); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.ListDeliveries(ctx, Filter{EventID: "e\x00vt"}); err != nil || len(ds) != 1 {
		t.Fatalf("filter by the event id: %d, %v", len(ds), err)
	}
	// list and the TUI read summaries, without the raw request: the
	// target is the wire's there too (on Postgres it was "/caf\uFFFD?x=\uFFFD").
	sums, err := s.ListSummaries(ctx, Filter{}, Page{Limit: 10})
	if err != nil || len(sums) != 1 || sums[0].Target != d.Target {
		t.Fatalf("summaries %+v (%v), want target %q", sums, err, d.Target)
	}
}
