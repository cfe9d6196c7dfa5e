package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

const birdKey = "secureSigningKey"

// birdHand signs as Bird's documented code does (PHP's
// hash_hmac('sha256', sprintf("%s\n%s\n%s", $ts, $url, hash('sha256', $body, true)), $key, true)),
// written out independently of the scheme; hexBody hashes the body to hex
// instead, the mistake the docs' "binary result" rules out.
func birdHand(ts, rawURL string, body []byte, hexBody bool) string {
	sum := sha256.Sum256(body)
	h := string(sum[:])
	if hexBody {
		h = hex.EncodeToString(sum[:])
	}
	m := hmac.New(sha256.New, []byte(birdKey))
	m.Write([]byte(ts + "\n" + rawURL + "\n" + h))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func birdReq(sig, ts string) *message.Request {
	body := []byte(`{"service":"channels","event":"sms.inbound","payload":{"id":"6b2f1c0e-8d4a-4e5b-9c3f-2a7d1e9b4c60","status":"delivered","body":{"type":"text","text":{"text":"STOP"}}}}`)
	return &message.Request{Method: "POST", Target: "/webhook/bird", Body: body, Headers: message.Headers{
		{Name: "Host", Value: "domain.com"}, {Name: "Content-Type", Value: "application/json"},
		{Name: "messagebird-request-id", Value: "f3b1c2d4-0000-4000-8000-000000000001"},
		{Name: "messagebird-request-timestamp", Value: ts}, {Name: "messagebird-signature", Value: sig}}}
}

func TestBirdSignature(t *testing.T) {
	const ts = "1726070400"
	const u = "https://domain.com/webhook/bird"
	body := birdReq("", ts).Body
	now := time.Unix(1726070403, 0)
	good := birdHand(ts, u, body, false)
	for _, tc := range []struct {
		name, sig, url string
		valid          bool
		reason         string
	}{
		{"documented", good, u, true, ""},
		{"URL from the Host header", good, "", true, ""},
		{"unpadded base64 (the docs compare decoded bytes)", strings.TrimRight(good, "="), u, true, ""},
		{"body hashed to hex", birdHand(ts, u, body, true), u, false, "signature mismatch"},
		{"another URL", good, "https://domain.com/other", false, "signature mismatch"},
		{"signed for another URL, none given", birdHand(ts, "https://elsewhere.example/hook", body, false), "", false, "Bird signs the full URL"},
		{"not base64", "%%%", u, false, "not base64"},
	} {
		r, err := Verify(birdReq(tc.sig, ts), "", birdKey, Options{Now: now, URL: tc.url})
		if err != nil || r.Valid != tc.valid || !strings.Contains(r.Reason, tc.reason) {
			t.Errorf("%s: %+v %v", tc.name, r, err)
		}
	}
	if r, _ := Verify(birdReq(good, "1726070400"), "bird", birdKey, Options{Now: now.Add(5 * time.Hour), URL: u}); !r.Valid {
		t.Errorf("no tolerance unless asked for (Bird's retries keep the first timestamp): %+v", r)
	}
	if r, _ := Verify(birdReq(good, "1726070400"), "bird", birdKey, Options{Now: now.Add(5 * time.Hour), URL: u, Tolerance: time.Hour}); r.Valid {
		t.Errorf("--tolerance 1h passed a 5 h old signature")
	}
	if r, _ := Verify(birdReq(good, "yesterday"), "bird", birdKey, Options{Now: now, URL: u}); r.Valid || !strings.Contains(r.Reason, "unix seconds") {
		t.Errorf("a malformed timestamp: %+v", r)
	}
}

// Signing covers the URL the copy goes to; a fresh event has a new
// payload.id and request id, the body otherwise kept byte for byte.
func TestBirdSignReidentify(t *testing.T) {
	req := birdReq("", "")
	c, err := Sign(req, "bird", birdKey, Options{Now: t0, URL: "http://127.0.0.1:8080/webhook/bird"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Headers.Get("messagebird-signature") != birdHand("1726070400", "http://127.0.0.1:8080/webhook/bird", c.Body, false) {
		t.Fatal("Sign does not sign as Bird's documented code verifies")
	}
	if _, err := Sign(&message.Request{Method: "POST", Target: "/", Body: req.Body}, "bird", birdKey, Options{Now: t0}); err == nil {
		t.Fatal("signing without a URL or Host")
	}
	f, err := Reidentify(c, "bird", "", birdKey, t0, Options{URL: "http://127.0.0.1:8080/webhook/bird"})
	if err != nil {
		t.Fatal(err)
	}
	was, now := Detect(c), Detect(f)
	if now.EventID == was.EventID || now.Extra["request_id"] == was.Extra["request_id"] || now.EventType != "sms.inbound" || now.Extra["status"] != "delivered" {
		t.Fatalf("fresh event %+v from %+v", now, was)
	}
	if string(f.Body) != strings.Replace(string(c.Body), was.EventID, now.EventID, 1) {
		t.Fatalf("body changed beyond payload.id:\n%s", f.Body)
	}
	if r, _ := Verify(f, "", birdKey, Options{URL: "http://127.0.0.1:8080/webhook/bird"}); !r.Valid {
		t.Fatalf("fresh event: %+v", r)
	}
	if headerless := (&message.Request{Headers: message.Headers{{Name: "messagebird-signature", Value: "x"}}}); Detect(headerless).Provider != Generic {
		t.Fatal("a signature without Bird's timestamp header is not Bird's")
	}
}

// Why a signature does not match: for a URL-signing scheme given a URL, the
// URL first; for Mercado Pago, whose body is not signed, no body causes.
func TestWhyMismatchURLAndUnsignedBody(t *testing.T) {
	req := birdReq(birdHand("1726070400", "https://domain.com/webhook/bird", birdReq("", "").Body, false), "1726070400")
	why := WhyMismatch(Lookup("bird"), req, birdKey, "--secret", Options{URL: "https://domain.com/other"})
	if !strings.HasPrefix(why, "the URL given is not the one Bird signed") {
		t.Errorf("bird with --url: %q", why)
	}
	mp := mpReq("/n?data.id=1", "ts=1,v1=00", "r1")
	why = WhyMismatch(Lookup("mercadopago"), mp, mpTestSecret, "--secret", Options{})
	if strings.Contains(why, "re-encoded") || !strings.Contains(why, "data.id or the x-request-id") {
		t.Errorf("mercadopago: %q", why)
	}
	if why := WhyMismatch(Lookup("github"), &message.Request{Body: []byte("x")}, "s", "--secret", Options{URL: "https://x"}); strings.Contains(why, "URL") {
		t.Errorf("github signs no URL: %q", why)
	}
}

// MessageBird's legacy signature (over the sorted query string, not the
// URL) is named, not taken for a wrong secret. The vector is MessageBird's
// Node SDK's own (messagebird 4.0.1, lib/test.js, "old webhook signature
// test": a status report GET with an empty body).
func TestBirdLegacySignatureNamed(t *testing.T) {
	req := &message.Request{Method: "GET", Headers: message.Headers{{Name: "Host", Value: "example.com"},
		{Name: "messagebird-request-timestamp", Value: "1547198231"},
		{Name: "messagebird-signature", Value: "KVBdcVdz2lYMwcBLZCRITgxUfA/WkwSi+T3Wxl2HL6w="}},
		Target: "/status?id=eef0ab57a9e049be946f3821568c2b2e&mccmnc=20408&ported=1&recipient=31612345678&reference=FOO&status=delivered&statusDatetime=2019-01-11T09%3A17%3A11%2B00%3A00"}
	r, err := Verify(req, "", "PlLrKaqvZNRR5zAjm42ZT6q1SQxgbbGd", Options{})
	if err != nil || r.Valid || r.Provider != "bird" || !strings.Contains(r.Reason, "MessageBird's legacy signature") {
		t.Fatalf("legacy vector: %+v %v", r, err)
	}
	if r, _ := Verify(req, "", "another-key", Options{}); !strings.HasPrefix(r.Reason, "signature mismatch") {
		t.Fatalf("legacy vector with another key: %+v", r)
	}
}
