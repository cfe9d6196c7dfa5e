package verify

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
)

// The header parsers see attacker-controlled bytes: none may panic, and a
// request we sign must verify whatever the body. Seeds live in
// testdata/fuzz/<FuzzName>/ and run in every plain `go test`.

var fuzzNow = time.Unix(1726070400, 0)

func fuzzVerify(t *testing.T, provider, secret string, req *message.Request) {
	r, err := Verify(req, provider, secret, Options{Now: fuzzNow, URL: "https://example.com/hook?x=1", Header: "X-Sig"})
	if err != nil {
		return
	}
	if r.Valid && r.Reason != "" || !r.Valid && r.Reason == "" {
		t.Fatalf("inconsistent result %+v", r)
	}
	_ = r.String()
	SignedAt(req, provider)
}

func FuzzStripeSignatureHeader(f *testing.F) {
	f.Add("t=1726070400,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd,v0=00", []byte(`{"id":"evt_1"}`))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		req := &message.Request{Headers: message.Headers{{Name: "Stripe-Signature", Value: header}}, Body: body}
		fuzzVerify(t, "stripe", "whsec_x", req)
		parseStripeHeader(header)
		s, err := Sign(req, "stripe", "whsec_x", Options{Now: fuzzNow})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := Verify(s, "stripe", "whsec_x", Options{Now: fuzzNow}); !r.Valid {
			t.Fatalf("own signature rejected: %+v", r)
		}
	})
}

func FuzzStandardSignatureHeader(f *testing.F) {
	f.Add("msg_1", "1726070400", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1a,AAAA", []byte(`{"test": 2432232314}`))
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		req := &message.Request{Headers: message.Headers{{Name: "webhook-id", Value: id}, {Name: "webhook-timestamp", Value: ts}, {Name: "webhook-signature", Value: sig}}, Body: body}
		fuzzVerify(t, "standard", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", req)
		standardSigs(sig)
		s, err := Resign(req, "standard", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", fuzzNow, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := Verify(s, "standard", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Options{Now: fuzzNow}); !r.Valid && id != "" {
			t.Fatalf("own signature rejected: %+v", r)
		}
	})
}

func FuzzSlackHeaders(f *testing.F) {
	f.Add("v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503", "1531420618", []byte("token=x"))
	f.Fuzz(func(t *testing.T, sig, ts string, body []byte) {
		req := &message.Request{Headers: message.Headers{{Name: "X-Slack-Signature", Value: sig}, {Name: "X-Slack-Request-Timestamp", Value: ts}}, Body: body}
		fuzzVerify(t, "slack", "8f742231b10e8888abcd99yyyzzz85a5", req)
	})
}

func FuzzGitHubSignatureHeader(f *testing.F) {
	f.Add("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", "sha1=00", []byte("Hello, World!"))
	f.Fuzz(func(t *testing.T, sig256, sig1 string, body []byte) {
		req := &message.Request{Headers: message.Headers{{Name: "X-Hub-Signature-256", Value: sig256}, {Name: "X-Hub-Signature", Value: sig1}}, Body: body}
		fuzzVerify(t, "github", "It's a Secret to Everybody", req)
		fuzzVerify(t, "shopify", "k", &message.Request{Headers: message.Headers{{Name: "X-Shopify-Hmac-Sha256", Value: sig1}}, Body: body})
		fuzzVerify(t, "generic", "k", &message.Request{Headers: message.Headers{{Name: "X-Sig", Value: sig256}}, Body: body})
	})
}

func FuzzTwilioRequest(f *testing.F) {
	f.Add("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", "https://mycompany.com/myapp.php?foo=1&bar=2", "application/x-www-form-urlencoded", []byte("CallSid=CA1234567890ABCDE&Caller=%2B12349013030"))
	f.Fuzz(func(t *testing.T, sig, url, ct string, body []byte) {
		req := &message.Request{Method: "POST", Target: "/x", Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "Content-Type", Value: ct}, {Name: "X-Twilio-Signature", Value: sig}}, Body: body}
		Verify(req, "twilio", "12345", Options{URL: url})
		portVariants(url)
		bodySHA256(url)
		s, err := Sign(req, "twilio", "12345", Options{URL: url})
		if err != nil {
			if _, ok := bodySHA256(url); !ok && twilioBodyNeedsHash(req, twilioParams(req)) {
				return // refused: a non-form body needs bodySHA256 in the URL
			}
			t.Fatal(err)
		}
		if r, _ := Verify(s, "twilio", "12345", Options{URL: url}); !r.Valid && r.Reason == "signature mismatch" {
			t.Fatalf("own signature rejected: %+v", r)
		}
	})
}

func FuzzReidentifyBody(f *testing.F) {
	f.Add([]byte(`{ "data":{"id":"x"}, "id" : "evt_1", "type":"a"}`), "evt_2")
	f.Fuzz(func(t *testing.T, body []byte, newID string) {
		out, err := replaceTopLevelString(body, "id", newID)
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("rewrite produced invalid JSON %q from %q: %v", out, body, err)
		}
		if m["id"] != newID && utf8.ValidString(newID) {
			// Invalid UTF-8 in newID decodes to U+FFFD.
			t.Fatalf("id = %v, want %q", m["id"], newID)
		}
	})
}
