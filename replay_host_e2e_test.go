package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestReplayE2ESetHeaderHost: --set-header 'Host: …' is sent as given while
// the copies still go to --to (it used to be replaced by --to's host).
func TestReplayE2ESetHeaderHost(t *testing.T) {
	h := startReplayHandler(t, nil)
	db, ds := replayStore(t, "stripe_invoice_paid.http")
	doc, r := replayJSONRun(t, db, fmt.Sprint(ds[0].ID), "--to", h.URL, "-n", "2", "--set-header", "Host: shop.example.test")
	if r.Code != 0 || len(doc.Attempts) != 2 || doc.Summary.Classes["2xx"] != 2 {
		t.Fatalf("code %d, %+v\n%s", r.Code, doc.Summary, r.Stderr)
	}
	for _, a := range h.arrivals() {
		if hs := a.Req.Headers.Values("Host"); len(hs) != 1 || hs[0] != "shop.example.test" {
			t.Fatalf("handler saw Host %q:\n%s", hs, a.Raw)
		}
	}
	if !strings.Contains(doc.Attempts[0].Edit, "set-header Host") {
		t.Fatalf("edit not recorded: %q", doc.Attempts[0].Edit)
	}
	// Without it, the Host is --to's.
	if _, r := replayJSONRun(t, db, fmt.Sprint(ds[0].ID), "--to", h.URL); r.Code != 0 {
		t.Fatalf("code %d %s", r.Code, r.Stderr)
	}
	hits := h.arrivals()
	if got := hits[len(hits)-1].Req.Headers.Get("Host"); got != h.Host {
		t.Fatalf("Host %q, want %q", got, h.Host)
	}
}
