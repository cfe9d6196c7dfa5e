package cmd

// What capture prints at start-up for getting real deliveries in: the URL
// to paste into each forwarder or tunnel and a ready command for each.
// docs/guide.md ("Forwarders") says what each one changes in the request.

import (
	"fmt"
	"net"
)

// forwarderHints returns the start-up lines for a capture listening on
// addr (host:port as bound): local forwarders get the loopback URL with the
// route each provider's handler conventionally has; tunnels get the port.
func forwarderHints(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	// A wildcard listener (0.0.0.0, ::) is reached on loopback from this machine.
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	hp := net.JoinHostPort(host, port)
	base := "http://" + hp
	return []string{
		"forward real deliveries here (a path per provider; -q hides these lines):",
		fmt.Sprintf("  stripe listen --forward-to %s/webhooks/stripe", hp),
		fmt.Sprintf("  gh webhook forward --repo=OWNER/REPO --events=push --url=%s/webhooks/github", base),
		fmt.Sprintf("  smee --url https://smee.io/CHANNEL --target %s/webhooks/github", base),
		fmt.Sprintf("  ngrok http %s   |   cloudflared tunnel --url %s", hp, base),
		"  (tunnels print a public URL: give the provider that URL + /webhooks/PROVIDER)",
	}
}
