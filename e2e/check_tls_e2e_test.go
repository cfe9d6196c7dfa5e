package e2e

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
)

// TestCheckInsecureSelfSignedHTTPS: check reaches an https handler with a
// self-signed certificate only with --insecure, and then judges it as usual.
func TestCheckInsecureSelfSignedHTTPS(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "wallet.db")
	h, closer, err := wallet.Handler(wallet.Options{Variant: wallet.Naive, DSN: dsn, Secret: checkSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	url := srv.URL + "/webhooks/stripe"

	r := runBin(t, db, nil, append([]string{"check"}, checkArgs(url, dsn, fmt.Sprint(id), "--phases", "first,dups")...)...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "--insecure") {
		t.Fatalf("self-signed without --insecure: want exit 2 naming --insecure, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r, c := checkRunJSON(t, db, checkArgs(url, dsn, fmt.Sprint(id), "--phases", "first,dups", "--insecure")...)
	if r.Code != 1 || c == nil || c.Verdict != "fail" {
		t.Fatalf("naive over https with --insecure: want exit 1 fail, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
