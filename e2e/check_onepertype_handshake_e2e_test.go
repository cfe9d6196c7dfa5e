package e2e

// check --one-per-type leaves out the providers' handshakes (Meta's GET
// hub.mode=subscribe): the newest delivery of "hub.subscribe" is no event,
// and checking it made a nightly check of a correct WhatsApp handler exit 3.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

func TestCheckOnePerTypeLeavesOutHandshakes(t *testing.T) {
	t.Parallel() // waits on a process and probes, not on CPU: see TestMain
	base := startNode(t, "testdata/handlers/whatsapp.js", "SECRET="+waSecret, "MODE=correct")
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	ev := checkInsertSample(t, db, "whatsapp", "messages", waSecret)
	hs := checkInsert(t, db, &message.Request{Method: "GET", Target: "/webhook?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock",
		Proto: "HTTP/1.1", Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "User-Agent", Value: "facebookplatform/1.0 (+http://developers.facebook.com)"}}})
	file := filepath.Join(dir, "day.jsonl")
	if r := runBin(t, db, nil, "export", "-o", file); r.Code != 0 {
		t.Fatalf("export: %d %s", r.Code, r.Stderr)
	}
	check := []string{"--to", base + "/webhook", "--probe-http", base + "/work", "--secret", waSecret,
		"--phases", "first,dups", "-n", "2", "--settle", "50ms", "--one-per-type", "--since", "1h", "--provider", "whatsapp"}
	left := fmt.Sprintf("--one-per-type left out delivery %d (whatsapp hub.subscribe): Meta's webhook verification request", hs)
	for _, from := range [][]string{nil, {"--from", file}} {
		r, c := checkRunJSON(t, db, append(check, from...)...)
		if r.Code != 0 || c == nil {
			t.Fatalf("%v: want exit 0 with the handshake left out, got %d\n%s\n%s", from, r.Code, r.Stdout, r.Stderr)
		}
		if len(c.Deliveries) != 1 || c.Deliveries[0].DeliveryID != ev {
			t.Fatalf("%v: want only delivery %d checked, got %d deliveries", from, ev, len(c.Deliveries))
		}
		if len(c.Notes) == 0 || !strings.HasPrefix(c.Notes[0], left) || !strings.Contains(r.Stderr, left) {
			t.Fatalf("%v: the report's first note and stderr should say the handshake was left out (%q): %q\n%s", from, left, c.Notes, r.Stderr)
		}
	}
	// Only handshakes match: one line, exit 2, saying so.
	r := runBin(t, db, nil, append([]string{"check"}, append(check, "--type", "hub.*")...)...)
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "handshakes, not events") {
		t.Fatalf("only handshakes selected: want exit 2 and one line saying so, got %d %q", r.Code, r.Stderr)
	}
}
