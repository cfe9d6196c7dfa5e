package replay

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestRebuiltAbsoluteFormTargetGoesToTheNewHost: a delivery captured with an
// absolute-form request-target (capture used as a proxy) must be rebuilt in
// origin form for --to. Sent as stored, a server takes the host from the
// absolute URL (RFC 9112 §3.2.2) and ignores the rewritten Host header, so
// the handler would see the original host, and Twilio's signed URL would be
// nonsense.
func TestRebuiltAbsoluteFormTargetGoesToTheNewHost(t *testing.T) {
	var gotHost, gotURI string
	srv := startRecServer(t, func(w http.ResponseWriter, a arrival) {
		gotURI = a.Req.Target
		w.Write([]byte("ok"))
	})
	_, req := loadFixture(t, "absolute_form.http")
	srvHost := srv.URL.Host
	a := Send(context.Background(), srv.target(5*time.Second), req, SendOptions{})
	if a.Err != "" || a.Status != 200 {
		t.Fatalf("attempt: %+v", a)
	}
	hits := srv.arrivals()
	if len(hits) != 1 {
		t.Fatalf("arrivals: %d", len(hits))
	}
	gotHost = hits[0].Req.Headers.Get("Host")
	if gotURI != "/webhooks/stripe?acct=7" || gotHost != srvHost {
		t.Fatalf("arrived as %q with Host %q, want /webhooks/stripe?acct=7 on %s", gotURI, gotHost, srvHost)
	}

	for _, c := range []struct{ to, stored, want string }{
		{"http://h:1", "http://x.example/hooks?x=1", "/hooks?x=1"},
		{"http://h:1", "https://x.example", "/"},
		{"http://h:1/api", "http://x.example/hooks?x=1", "/api?x=1"},
		{"http://h:1?y=2", "http://x.example/hooks?x=1", "/hooks?y=2"},
	} {
		u, _ := url.Parse(c.to)
		if got := RequestTarget(u, c.stored); got != c.want {
			t.Errorf("RequestTarget(%s, %s) = %s, want %s", c.to, c.stored, got, c.want)
		}
	}
	u, _ := url.Parse("https://tunnel.example")
	if got, want := FullURL(u, "http://x.example/sms?a=1"), "https://tunnel.example/sms?a=1"; got != want {
		t.Errorf("FullURL = %s, want %s", got, want)
	}
}

// DialAddr keeps a URL's port and otherwise takes its scheme's: 443 for
// https, 80 for http, brackets kept around an IPv6 host.
func TestDialAddr(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/x": "127.0.0.1:8080",
		"http://example.com/x":    "example.com:80",
		"https://example.com":     "example.com:443",
		"https://[::1]/hook":      "[::1]:443",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := DialAddr(u); got != want {
			t.Errorf("DialAddr(%s) = %s, want %s", in, got, want)
		}
	}
}
