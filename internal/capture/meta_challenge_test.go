package capture

import (
	"testing"
)

// TestMetaVerificationAnswered: Meta enables a webhook callback URL only
// when its GET hub.mode=subscribe answers hub.challenge as the whole body.
// Capture pointed at directly answered {"id":N}; it now answers the
// challenge in plain text, and stores the request as usual.
func TestMetaVerificationAnswered(t *testing.T) {
	ts := startServer(t, Options{})
	req := "GET /webhooks/whatsapp?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock HTTP/1.1\r\n" +
		"Host: hooks.example.com\r\nUser-Agent: facebookplatform/1.0 (+http://developers.facebook.com)\r\n\r\n"
	ans, _, _ := exchange(t, ts.addr, []byte(req), 1)
	if ans[0].status != 200 || string(ans[0].body) != "1158201444" || ans[0].header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("answer %d %q %v, want 200 with the bare challenge", ans[0].status, ans[0].body, ans[0].header)
	}
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 || ds[0].Provider != "whatsapp" || ds[0].EventType != "hub.subscribe" {
		t.Fatalf("stored %+v", ds)
	}
	// A GET without hub.mode=subscribe is no handshake.
	ans, _, _ = exchange(t, ts.addr, []byte("GET /webhooks/whatsapp?hub.challenge=1 HTTP/1.1\r\nHost: h\r\n\r\n"), 1)
	if string(ans[0].body) != `{"id":2}` {
		t.Fatalf("plain answer %q", ans[0].body)
	}
}
