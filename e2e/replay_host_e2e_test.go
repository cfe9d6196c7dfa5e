package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestReplayE2ESetHeaderHost: --set-header 'Host: …' is sent as given while
// the copies still go to --to (it used to be replaced by --to's host).
func TestReplayE2ESetHeaderHost(t *testing.T) {
	t.Parallel()
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

// TestReplayE2EInsecureSelfSignedHTTPS: an https handler with a self-signed
// certificate is refused with a hint, and reached with --insecure.
func TestReplayE2EInsecureSelfSignedHTTPS(t *testing.T) {
	t.Parallel()
	var got atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); len(b) > 0 && r.TLS != nil {
			got.Add(1)
		}
		w.Write([]byte(`{"tls":true}`))
	}))
	defer srv.Close()
	db, ds := replayStore(t, "stripe_invoice_paid.http")
	id := fmt.Sprint(ds[0].ID)

	r := runBin(t, db, nil, "replay", id, "--to", srv.URL+"/webhooks/stripe")
	if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "certificate") || !strings.Contains(r.Stderr+r.Stdout, "--insecure") {
		t.Fatalf("self-signed certificate without --insecure: code %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got.Load() != 0 {
		t.Fatal("a request went through an unverified TLS connection")
	}

	doc, r := replayJSONRun(t, db, id, "--to", srv.URL+"/webhooks/stripe", "--insecure", "-n", "3", "--order", "burst")
	if r.Code != 0 || doc.Summary.Classes["2xx"] != 3 || got.Load() != 3 {
		t.Fatalf("--insecure: code %d, %+v, handler got %d\n%s", r.Code, doc.Summary, got.Load(), r.Stderr)
	}
	if doc.Run.Options["insecure"] != true {
		t.Fatalf("--insecure not recorded with the run: %v", doc.Run.Options)
	}
}
