package verify

// Cross-checks against independent implementations: Stripe's own Go library
// and the Standard Webhooks reference library. What we sign they accept;
// what they sign we accept; what they reject we reject.

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookreplay/hookreplay/internal/message"
)

func stripeFixtures(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range Fixtures() {
		if f.Provider == "stripe" {
			b, err := FixtureBody("stripe", f.Event)
			if err != nil {
				t.Fatal(err)
			}
			out[f.Event] = b
		}
	}
	return out
}

func TestStripeCrossCheck(t *testing.T) {
	const secret = "whsec_cross_check_3f9a0c"
	now := time.Now()
	for event, body := range stripeFixtures(t) {
		t.Run(event, func(t *testing.T) {
			// Ours -> stripe-go.
			req := &message.Request{Method: "POST", Target: "/", Body: body}
			signed, err := Sign(req, "stripe", secret, Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			hdr := signed.Headers.Get("Stripe-Signature")
			if err := webhook.ValidatePayload(body, hdr, secret); err != nil {
				t.Fatalf("stripe-go rejects our signature %q: %v", hdr, err)
			}
			ev, err := webhook.ConstructEventWithOptions(body, hdr, secret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
			if err != nil || string(ev.Type) != event {
				t.Fatalf("ConstructEvent: %v %v", ev.Type, err)
			}
			// A re-identified, re-signed copy is accepted too, and stripe-go sees the new id.
			re, err := Reidentify(req, "stripe", "evt_crosscheck123", secret, now, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ev, err = webhook.ConstructEventWithOptions(re.Body, re.Headers.Get("Stripe-Signature"), secret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
			if err != nil || ev.ID != "evt_crosscheck123" {
				t.Fatalf("re-identified: %q %v", ev.ID, err)
			}
			// Our hour-old signature (check's tamper phase) is rejected by both.
			old, _ := Sign(req, "stripe", secret, Options{Now: now.Add(-time.Hour)})
			if err := webhook.ValidatePayload(body, old.Headers.Get("Stripe-Signature"), secret); err != webhook.ErrTooOld {
				t.Fatalf("stripe-go on an hour-old signature: %v", err)
			}
			if r, _ := Verify(old, "stripe", secret, Options{Now: now}); r.Valid {
				t.Fatal("we accept an hour-old signature")
			}

			// stripe-go -> ours.
			sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: now})
			in := &message.Request{Headers: message.Headers{{Name: "Stripe-Signature", Value: sp.Header}}, Body: body}
			if r, err := Verify(in, "stripe", secret, Options{Now: now}); err != nil || !r.Valid {
				t.Fatalf("we reject stripe-go's signature: %+v %v", r, err)
			}
			if r, _ := Verify(in, "stripe", secret+"x", Options{Now: now}); r.Valid || r.Reason != "signature mismatch" {
				t.Fatalf("wrong secret: %+v", r)
			}
			// A v0 scheme header from stripe-go carries no v1: both reject.
			v0 := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: now, Scheme: "v0"})
			in.Headers = in.Headers.Set("Stripe-Signature", v0.Header)
			if err := webhook.ValidatePayload(body, v0.Header, secret); err == nil {
				t.Fatal("stripe-go accepts v0")
			}
			if r, _ := Verify(in, "stripe", secret, Options{Now: now}); r.Valid {
				t.Fatal("we accept v0")
			}
			// Same signature bytes either way.
			if want := hex.EncodeToString(webhook.ComputeSignature(now, body, secret)); hdr != "t="+strconv.FormatInt(now.Unix(), 10)+",v1="+want {
				t.Fatalf("header %q, stripe-go computes %s", hdr, want)
			}
		})
	}
}

func TestStandardWebhooksCrossCheck(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	body, err := FixtureBody("standard", "invoice.paid")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// Ours -> reference library.
	for _, at := range []time.Duration{0, -4 * time.Minute, 4 * time.Minute} {
		req, err := BuildDelivery("standard", "invoice.paid", secret, now.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(req.Body, req.Headers.HTTP()); err != nil {
			t.Fatalf("reference library rejects our delivery signed at %v: %v", at, err)
		}
		re, err := Reidentify(req, "standard", "msg_crosscheck", secret, now, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(re.Body, re.Headers.HTTP()); err != nil || re.Headers.Get("webhook-id") != "msg_crosscheck" {
			t.Fatalf("re-identified copy: %v", err)
		}
		// Re-identified without re-signing: both reject.
		unsigned, _ := Reidentify(req, "standard", "msg_other", "", now, Options{})
		if wh.Verify(unsigned.Body, unsigned.Headers.HTTP()) == nil {
			t.Fatal("reference library accepts a changed id")
		}
		if r, _ := Verify(unsigned, "standard", secret, Options{Now: now}); r.Valid {
			t.Fatal("we accept a changed id")
		}
	}
	old, _ := BuildDelivery("standard", "invoice.paid", secret, now.Add(-time.Hour))
	if wh.Verify(old.Body, old.Headers.HTTP()) == nil {
		t.Fatal("reference library accepts an hour-old delivery")
	}
	// Reference library -> ours, including a secret given without whsec_.
	for _, id := range []string{"msg_p5jXN8AQM9LWM0D4loKWxJek", NewEventID("standard")} {
		sig, err := wh.Sign(id, now, body)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		h.Set("webhook-signature", sig)
		req := &message.Request{Body: body}
		for k, vs := range h {
			req.Headers = append(req.Headers, message.Header{Name: k, Value: vs[0]})
		}
		for _, s := range []string{secret, secret[len("whsec_"):]} {
			if r, err := Verify(req, "standard", s, Options{Now: now}); err != nil || !r.Valid {
				t.Fatalf("we reject the reference signature: %+v %v", r, err)
			}
		}
		if r, _ := Verify(req, "standard", "whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldY", Options{Now: now}); r.Valid {
			t.Fatal("wrong secret accepted")
		}
	}
}

// A body of the user's own (send --body) built by Build is accepted by
// stripe-go and the Standard Webhooks library: with a fresh id, and byte
// for byte with KeepID.
func TestBuildCustomBodyCrossCheck(t *testing.T) {
	stripeBody := []byte(`{"id":"evt_own_body_1","object":"event","api_version":"2024-06-20","created":1700000000,"type":"customer.subscription.deleted","data":{"object":{"id":"sub_1","object":"subscription","status":"canceled"}}}`)
	stdBody := []byte(`{"type":"user.deleted","object":"event","data":{"id":"user_2own","deleted":true,"object":"user"}}`)
	const stripeSecret, stdSecret = "whsec_cross_check_3f9a0c", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	for _, keep := range []bool{false, true} {
		req, err := Build(Delivery{Provider: "stripe", Body: stripeBody, KeepID: keep, URL: "http://127.0.0.1:3000/webhooks/stripe"}, stripeSecret)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := webhook.ConstructEventWithOptions(req.Body, req.Headers.Get("Stripe-Signature"), stripeSecret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
		if err != nil || string(ev.Type) != "customer.subscription.deleted" {
			t.Fatalf("keep %v: stripe-go: %v %v", keep, ev.Type, err)
		}
		if keep != (ev.ID == "evt_own_body_1") || keep != (string(req.Body) == string(stripeBody)) {
			t.Fatalf("keep %v: id %s body %s", keep, ev.ID, req.Body)
		}
		for _, p := range []string{"standard", "svix"} {
			req, err := Build(Delivery{Provider: p, Body: stdBody, KeepID: keep}, stdSecret)
			if err != nil {
				t.Fatal(err)
			}
			pre := map[string]string{"standard": "webhook-", "svix": "svix-"}[p]
			h := http.Header{}
			for _, k := range []string{"id", "timestamp", "signature"} {
				h.Set("webhook-"+k, req.Headers.Get(pre+k))
			}
			wh, _ := standardwebhooks.NewWebhook(stdSecret)
			if err := wh.Verify(req.Body, h); err != nil || string(req.Body) != string(stdBody) {
				t.Fatalf("%s keep %v: standardwebhooks: %v", p, keep, err)
			}
		}
	}
}
