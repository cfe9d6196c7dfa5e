package e2e

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestCommandLineErrorsE2E: usage errors through the binary are one line in
// hookreplay's words with exit 2, never cobra's or strconv's.
func TestCommandLineErrorsE2E(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	all := strings.Join(verify.ProviderNames(func(verify.Scheme) bool { return true }), ", ")
	sendable := strings.Join(verify.ProviderNames(func(s verify.Scheme) bool { return len(s.Samples()) > 0 }), ", ")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "hookreplay: show needs ID (usage: hookreplay show ID; see 'hookreplay show --help')"},
		{[]string{"replay", "1", "--to", "http://127.0.0.1:1/", "--timeout", "5"}, "hookreplay: --timeout 5: give a unit, e.g. 5s"},
		{[]string{"replay", "1", "--to", "http://127.0.0.1:1/", "-n", "x"}, "hookreplay: --copies x: not a whole number"},
		{[]string{"list", "--limit", "lots"}, "hookreplay: --limit lots: not a whole number"},
		{[]string{"completion", "tcsh"}, "hookreplay: completion tcsh: not a shell hookreplay writes completions for (bash, zsh, fish, powershell)"},
		{[]string{"list", "--provider", "stripee"}, `hookreplay: --provider: unknown provider "stripee" (known: ` + all + `)`},
		{[]string{"send", "--provider", "paypal", "--to", "http://127.0.0.1:1/"}, `hookreplay: --provider: unknown provider "paypal" (known: ` + sendable + `)`},
		{[]string{"send", "--provider", "generic", "--body", "x.json", "--to", "http://127.0.0.1:1/"}, `hookreplay: --provider: unknown provider "generic" (known: ` + sendable + `)`},
	} {
		r := runBin(t, db, nil, tt.args...)
		if r.Code != 2 || strings.TrimSpace(r.Stderr) != tt.want || r.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, r.Code, r.Stdout, r.Stderr, tt.want)
		}
	}
}

// TestBarePortAddressesE2E: --to takes a bare port with a path, as
// 'stripe listen --forward-to localhost:3000' does.
func TestBarePortAddressesE2E(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Path:
		default:
		}
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, to := range []string{port + "/webhooks/stripe", "localhost:" + port + "/webhooks/stripe"} {
		r := runBin(t, "", nil, "send", "--provider", "stripe", "--event", "invoice.paid", "--secret", "whsec_test", "--to", to)
		if r.Code != 0 {
			t.Fatalf("send --to %s: %+v", to, r)
		}
		if p := <-got; p != "/webhooks/stripe" {
			t.Errorf("send --to %s reached %q", to, p)
		}
	}
}
