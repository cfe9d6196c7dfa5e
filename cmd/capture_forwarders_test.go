package cmd

import (
	"strings"
	"testing"
)

func TestForwarderHints(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:9000", []string{
			"stripe listen --forward-to 127.0.0.1:9000/webhooks/stripe",
			"gh webhook forward --repo=OWNER/REPO --events=push --url=http://127.0.0.1:9000/webhooks/github",
			"smee --url https://smee.io/CHANNEL --target http://127.0.0.1:9000/webhooks/github",
			"ngrok http 127.0.0.1:9000",
			"cloudflared tunnel --url http://127.0.0.1:9000",
		}},
		// a wildcard listener is reached on loopback
		{"0.0.0.0:8080", []string{"stripe listen --forward-to 127.0.0.1:8080/webhooks/stripe", "cloudflared tunnel --url http://127.0.0.1:8080"}},
		{"[::]:8080", []string{"ngrok http 127.0.0.1:8080"}},
		{"[::1]:8080", []string{"stripe listen --forward-to [::1]:8080/webhooks/stripe", "cloudflared tunnel --url http://[::1]:8080"}},
	} {
		got := strings.Join(forwarderHints(tc.addr), "\n")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: hints lack %q:\n%s", tc.addr, w, got)
			}
		}
		if n := len(forwarderHints(tc.addr)); n > 6 {
			t.Errorf("%s: %d lines, want a compact block", tc.addr, n)
		}
	}
	if forwarderHints("not an address") != nil {
		t.Error("hints for a malformed address")
	}
}
