package verify

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// testSecrets are per-provider secrets in each provider's own format.
var testSecrets = map[string]string{
	"stripe":   "whsec_test_0123456789abcdef",
	"github":   "It's a Secret to Everybody",
	"shopify":  "shpss_0123456789abcdef0123456789ab",
	"slack":    "8f742231b10e8888abcd99yyyzzz85a5",
	"twilio":   "12345",
	"standard": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	"svix":     "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
	// A test key pair's private key (PKCS#8 PEM): SendGrid signs with it.
	"sendgrid": "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg03mMHp33THN1+L14\neFG+9tvRKtSB6zelPP0aRJfBumGhRANCAATDw/Jw4XmX1oXo9U0WCVi0tm8XXvW7\nTZ8Kg0VQu1u12bZaJbgQedUI82LUNphHo0gWu6RZPGUC4vzAVphJw3zc\n-----END PRIVATE KEY-----\n",
	// A test key pair's private key (seed and public key, hex): Discord signs with it.
	"discord": "4032fea2deb70c36ee1a85d0bee7d917bf15e5f3610b7e80a0932f975b15321263390c5bd70d3ca43c848918f1ff962206849e06fff691fe66843e707d978e19",
}

// wrongKeys are well-formed keys of other key pairs, for the key-pair schemes.
var wrongKeys = map[string]string{
	"sendgrid": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEpFq5qzN1+liNUV5NFAaHt/vyzJWnoSb3+pvUihyX8XZBA7rCukIWBGDLkF95AHE1yY5V/h6iOF7nEvjmBvX2Pg==",
	"discord":  "5f02878033ca984046c530d2f98e8c133ebb4216b22cb7547ce4909717af9088",
}

// secretOf is provider's test secret; a provider without its own format
// gets one that every HMAC scheme accepts (whsec_ + base64).
func secretOf(provider string) string {
	if s, ok := testSecrets[provider]; ok {
		return s
	}
	return "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
}

const testURL = "https://hooks.example.com/twilio/sms?tenant=7"

var t0 = time.Unix(1726070400, 0)

func build(t *testing.T, f Fixture, now time.Time) *message.Request {
	t.Helper()
	req, err := BuildDeliveryTo(f.Provider, f.Event, secretOf(f.Provider), testURL, now)
	if err != nil {
		t.Fatalf("build %s %s: %v", f.Provider, f.Event, err)
	}
	return req
}

func TestFixturesSignAndVerify(t *testing.T) {
	for _, f := range Fixtures() {
		t.Run(f.Provider+"/"+f.Event, func(t *testing.T) {
			req := build(t, f, t0)
			id := Detect(req)
			if id.Provider != f.Provider {
				t.Fatalf("detected %q, want %q", id.Provider, f.Provider)
			}
			if id.EventID == "" {
				t.Fatalf("no event id in %+v", id)
			}
			opt := Options{Now: t0.Add(3 * time.Second), URL: testURL}
			r, err := Verify(req, f.Provider, secretOf(f.Provider), opt)
			if err != nil || !r.Valid {
				t.Fatalf("verify: %+v %v", r, err)
			}
			if _, has := SignedAt(req, f.Provider); has && r.String() != "valid ("+f.Provider+", "+r.Scheme+", signed 3s before capture)" {
				t.Fatalf("result line %q", r.String())
			}
			// Detection and verification without naming the provider.
			if r, err := Verify(req, "", secretOf(f.Provider), opt); err != nil || !r.Valid {
				t.Fatalf("verify with detection: %+v %v", r, err)
			}
			// Wrong secret, tampered body.
			wrong := "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"
			if w, ok := wrongKeys[f.Provider]; ok {
				wrong = w // a key-pair scheme: another pair's public key
			}
			if r, err := Verify(req, f.Provider, wrong, opt); err != nil || r.Valid || r.Reason != "signature mismatch" {
				t.Fatalf("wrong secret: %+v %v", r, err)
			}
			tampered := req.Clone()
			tampered.Body = bytes.Replace(tampered.Body, []byte("0"), []byte("1"), 1)
			if fg, ok := Lookup(f.Provider).(Forger); ok {
				// The body is not signed: forge what is.
				tampered = req.Clone()
				if _, ok := fg.Forge(tampered); !ok {
					t.Fatal("nothing to forge in a sample")
				}
			}
			if r, err := Verify(tampered, f.Provider, secretOf(f.Provider), opt); err != nil || r.Valid || !strings.HasPrefix(r.Reason, "signature mismatch") {
				t.Fatalf("tampered body: %+v %v", r, err)
			}
			// A fresh build has a different identity.
			if other := Detect(build(t, f, t0)); other.EventID == id.EventID {
				t.Fatalf("two builds share event id %s", id.EventID)
			}
		})
	}
}

func TestTolerance(t *testing.T) {
	for _, p := range []string{"stripe", "slack", "standard", "svix"} {
		f, _ := findFixture(p, map[string]string{"stripe": "invoice.paid", "slack": "event_callback", "standard": "invoice.paid", "svix": "invoice.paid"}[p])
		req := build(t, f, t0)
		if at, ok := SignedAt(req, p); !ok || !at.Equal(t0) {
			t.Fatalf("%s SignedAt = %v %v", p, at, ok)
		}
		if Lookup(p).Tolerance() != 300*time.Second {
			t.Fatalf("%s default tolerance %v", p, Lookup(p).Tolerance())
		}
		r, err := Verify(req, p, secretOf(p), Options{Now: t0.Add(412 * time.Second)})
		if err != nil || r.Valid || r.Reason != "timestamp 412s outside tolerance 300s" {
			t.Fatalf("%s old: %+v %v", p, r, err)
		}
		r, _ = Verify(req, p, secretOf(p), Options{Now: t0.Add(412 * time.Second), Tolerance: 10 * time.Minute})
		if !r.Valid {
			t.Fatalf("%s with 10m tolerance: %+v", p, r)
		}
		r, _ = Verify(req, p, secretOf(p), Options{Now: t0.Add(-400 * time.Second)})
		if p == "stripe" {
			// Stripe's libraries only reject old signatures.
			if !r.Valid {
				t.Fatalf("stripe future: %+v", r)
			}
		} else if r.Valid || r.Reason != "timestamp 400s in the future outside tolerance 300s" {
			t.Fatalf("%s future: %+v", p, r)
		}
		// Resign moves the timestamp.
		later := t0.Add(time.Hour)
		rs, err := Resign(req, p, secretOf(p), later, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := Verify(rs, p, secretOf(p), Options{Now: later}); !r.Valid {
			t.Fatalf("%s resigned: %+v", p, r)
		}
		if !bytes.Equal(rs.Body, req.Body) || len(rs.Headers) != len(req.Headers) {
			t.Fatalf("%s resign changed more than headers", p)
		}
	}
	for _, p := range []string{"github", "shopify", "twilio", "generic"} {
		if Lookup(p).Tolerance() != 0 {
			t.Fatalf("%s tolerance", p)
		}
	}
}

func TestSignHonoursNow(t *testing.T) {
	body, _ := FixtureBody("stripe", "invoice.paid")
	req := &message.Request{Method: "POST", Target: "/", Body: body}
	hourAgo := t0.Add(-time.Hour)
	s, err := Sign(req, "stripe", secretOf("stripe"), Options{Now: hourAgo})
	if err != nil {
		t.Fatal(err)
	}
	if at, _ := SignedAt(s, "stripe"); !at.Equal(hourAgo) {
		t.Fatalf("signed at %v", at)
	}
	r, _ := Verify(s, "stripe", secretOf("stripe"), Options{Now: t0})
	if r.Valid || r.Reason != "timestamp 3600s outside tolerance 300s" {
		t.Fatalf("%+v", r)
	}
	if req.Headers.Has("Stripe-Signature") {
		t.Fatal("Sign modified its input")
	}
}

func TestReidentifyKeepsOtherBytes(t *testing.T) {
	for _, f := range Fixtures() {
		t.Run(f.Provider+"/"+f.Event, func(t *testing.T) {
			req := build(t, f, t0)
			before := Detect(req)
			newID := NewEventID(f.Provider)
			c, err := Reidentify(req, f.Provider, newID, secretOf(f.Provider), t0.Add(time.Minute), Options{URL: testURL})
			if err != nil {
				t.Fatal(err)
			}
			after := Detect(c)
			if after.EventID != newID || after.EventType != before.EventType {
				t.Fatalf("identity %+v, want id %s type %s", after, newID, before.EventType)
			}
			if r, _ := Verify(c, f.Provider, secretOf(f.Provider), Options{Now: t0.Add(time.Minute), URL: testURL}); !r.Valid {
				t.Fatalf("re-signed copy: %+v", r)
			}
			if Lookup(f.Provider).IdentityInBody() {
				// Every id of the event is fresh (a WhatsApp POST's several
				// wamids), in the same places.
				was, now := EventIDs(before.EventID, before.Extra), EventIDs(after.EventID, after.Extra)
				if len(was) != len(now) {
					t.Fatalf("ids %q became %q", was, now)
				}
				want := req.Body
				if d := before.Extra["data_id"]; d != "" { // Mercado Pago's resource id, fresh too
					want = bytes.Replace(want, []byte(`"`+d+`"`), []byte(`"`+after.Extra["data_id"]+`"`), 1)
				}
				for i := range was {
					if was[i] == now[i] {
						t.Fatalf("id %s kept", was[i])
					}
					want = bytes.Replace(want, []byte(was[i]), []byte(now[i]), 1)
				}
				// A secondary id naming this delivery of the event
				// (Paddle's notification_id) is fresh as well.
				for k, v := range before.Extra {
					if k != ExtraEventIDs {
						want = bytes.Replace(want, []byte(v), []byte(after.Extra[k]), 1)
					}
				}
				if !bytes.Equal(withoutBodySignature(f.Provider, c.Body), withoutBodySignature(f.Provider, want)) {
					t.Fatalf("body changed beyond the id:\n%s\n%s", c.Body, want)
				}
			} else if f.Provider == "twilio" {
				// A fresh message: new sids, every other parameter kept.
				was, now := twilioSidless(t, req.Body), twilioSidless(t, c.Body)
				if was != now {
					t.Fatalf("form changed beyond the sids:\n%s\n%s", was, now)
				}
				if bytes.Equal(c.Body, req.Body) {
					t.Fatal("a fresh Twilio event kept the message sid")
				}
			} else if re, err := Resign(req, f.Provider, secretOf(f.Provider), t0.Add(time.Minute), Options{URL: testURL}); err != nil || !bytes.Equal(c.Body, re.Body) {
				// Only what re-signing itself stamps (Linear's webhookTimestamp) may differ.
				t.Fatalf("body changed beyond what re-signing stamps (%v)", err)
			}
			// Same header names in the same order.
			if len(c.Headers) != len(req.Headers) {
				t.Fatalf("headers %v -> %v", req.Headers, c.Headers)
			}
			for i := range c.Headers {
				if c.Headers[i].Name != req.Headers[i].Name {
					t.Fatalf("header %d %s -> %s", i, req.Headers[i].Name, c.Headers[i].Name)
				}
			}
			// Without a secret the copy keeps the old signature headers.
			u, err := Reidentify(req, f.Provider, "", "", t0, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if Detect(u).EventID == before.EventID {
				t.Fatal("empty newID kept the old id")
			}
		})
	}
}

func TestReidentifyByteLevel(t *testing.T) {
	// Odd spacing, escapes, nested "id" keys and a duplicate top-level key.
	body := []byte("{ \"data\" : {\"id\":\"obj_1\"},\n  \"id\"\t:  \"evt_\\u0031old\" , \"type\":\"x\", \"note\":\"id\" }")
	req := &message.Request{Headers: message.Headers{{Name: "Stripe-Signature", Value: "t=1,v1=00"}}, Body: body}
	c, err := Reidentify(req, "stripe", "evt_new\"q", "", t0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "{ \"data\" : {\"id\":\"obj_1\"},\n  \"id\"\t:  \"evt_new\\\"q\" , \"type\":\"x\", \"note\":\"id\" }"
	if string(c.Body) != want {
		t.Fatalf("got  %s\nwant %s", c.Body, want)
	}
	for _, bad := range []string{`not json`, `[1,2]`, `{"type":"x"}`, `{"id":42}`} {
		if _, err := Reidentify(&message.Request{Body: []byte(bad)}, "stripe", "evt_x", "", t0, Options{}); err == nil {
			t.Fatalf("reidentify %s: no error", bad)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	req := &message.Request{Body: []byte(`{}`), Headers: message.Headers{{Name: "webhook-id", Value: "msg_1"}}}
	cases := []struct {
		provider, secret string
		opt              Options
		want             string
	}{
		{"paypal", "x", Options{}, "unknown provider"},
		{"standard", "whsec_not base64!", Options{}, "secret is not whsec_ base64"},
		{"svix", "whsec_", Options{}, "secret is not whsec_ base64"},
		{"stripe", "", Options{}, "secret is empty"},
		// The package names no command-line flag: cmd words these (see cmd/verify.go).
		{"generic", "x", Options{}, "needs the name of the header"},
		{"generic", "x", Options{Header: "X-Sig", Algo: "md5"}, `unknown HMAC hash "md5"`},
		{"", "x", Options{}, "cannot tell the provider"},
	}
	for _, c := range cases {
		_, err := Verify(req, c.provider, c.secret, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Verify(%q, %q): %v, want %q", c.provider, c.secret, err, c.want)
		}
	}
}

func TestInvalidReasons(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"x"}`)
	cases := []struct {
		provider string
		headers  message.Headers
		want     string
	}{
		{"stripe", nil, "missing header Stripe-Signature"},
		{"stripe", message.Headers{{Name: "Stripe-Signature", Value: "v1=abc"}}, "malformed Stripe-Signature header: no t=<timestamp>"},
		{"stripe", message.Headers{{Name: "Stripe-Signature", Value: "t=abc,v1=00"}}, "malformed Stripe-Signature header: t is not a unix timestamp"},
		{"stripe", message.Headers{{Name: "Stripe-Signature", Value: "t=1726070400,v0=00"}}, "no v1 signature in Stripe-Signature header (only v0, which is not verified)"},
		{"github", nil, "missing header X-Hub-Signature-256"},
		{"github", message.Headers{{Name: "X-Hub-Signature-256", Value: "md5=00"}}, "malformed X-Hub-Signature-256 header: want sha256=<hex>"},
		{"shopify", nil, "missing header X-Shopify-Hmac-Sha256"},
		{"slack", message.Headers{{Name: "X-Slack-Signature", Value: "v0=00"}}, "missing header X-Slack-Request-Timestamp"},
		{"standard", message.Headers{{Name: "webhook-id", Value: "msg_1"}, {Name: "webhook-timestamp", Value: "1726070400"}, {Name: "webhook-signature", Value: "v1a,AAAA"}}, "ed25519 signatures (v1a) are not supported"},
		{"standard", message.Headers{{Name: "webhook-id", Value: "msg_1"}, {Name: "webhook-timestamp", Value: "soon"}, {Name: "webhook-signature", Value: "v1,AAAA"}}, "malformed webhook-timestamp header: not a unix timestamp"},
		{"svix", message.Headers{{Name: "svix-id", Value: "msg_1"}}, "missing header svix-timestamp"},
		{"twilio", nil, "missing header X-Twilio-Signature"},
	}
	for _, c := range cases {
		secret := secretOf(c.provider)
		r, err := Verify(&message.Request{Headers: c.headers, Body: body}, c.provider, secret, Options{Now: t0, URL: testURL})
		if err != nil || r.Valid || r.Reason != c.want {
			t.Errorf("%s %v: %+v %v, want reason %q", c.provider, c.headers, r, err, c.want)
		}
	}
}

func TestStripeAnyV1Passes(t *testing.T) {
	body, _ := FixtureBody("stripe", "invoice.paid")
	req, _ := Sign(&message.Request{Body: body}, "stripe", "whsec_new", Options{Now: t0})
	h := req.Headers.Get("Stripe-Signature")
	ts, sig, _ := strings.Cut(h, ",")
	// Secret rotation: an old-secret v1 first, unknown keys and a v0 around it.
	rotated := ts + ",v1=" + strings.Repeat("ab", 32) + ",v0=" + strings.Repeat("cd", 32) + ",scheme=x," + sig
	req.Headers = req.Headers.Set("Stripe-Signature", rotated)
	if r, _ := Verify(req, "stripe", "whsec_new", Options{Now: t0}); !r.Valid {
		t.Fatalf("rotated header: %+v", r)
	}
}

func TestGenericScheme(t *testing.T) {
	body := []byte(`{"hello":"world"}`)
	for _, opt := range []Options{
		{Header: "X-Signature"},
		{Header: "X-Signature", Algo: "sha1", Encoding: "base64"},
		{Header: "X-Hook-Sig", Algo: "sha512", Prefix: "sha512="},
	} {
		s, err := Sign(&message.Request{Body: body}, "generic", "k", opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Now = t0
		if r, err := Verify(s, "generic", "k", opt); err != nil || !r.Valid {
			t.Fatalf("%+v: %+v %v", opt, r, err)
		}
		if r, _ := Verify(s, "generic", "other", opt); r.Valid {
			t.Fatalf("%+v: wrong key accepted", opt)
		}
	}
}

func TestDescribe(t *testing.T) {
	r := Result{Valid: true, Provider: "stripe", Scheme: "v1", SignedAt: t0, CheckedAt: t0.Add(3 * time.Second)}
	if got := r.String(); got != "valid (stripe, v1, signed 3s before capture)" {
		t.Fatal(got)
	}
	if got := r.Describe(""); got != "valid (stripe, v1, signed 3s ago)" {
		t.Fatal(got)
	}
	if got := (Result{Valid: true, Provider: "github", Scheme: "sha256"}).String(); got != "valid (github, sha256)" {
		t.Fatal(got)
	}
	if got := (Result{Reason: "signature mismatch"}).String(); got != "invalid: signature mismatch" {
		t.Fatal(got)
	}
}

func TestTwilioSignatureSettings(t *testing.T) {
	body, _ := FixtureBody("twilio", "message.received")
	base := &message.Request{Method: "POST", Target: "/sms", Body: body, Headers: message.Headers{
		{Name: "Host", Value: "hooks.example.com"}, {Name: "Content-Type", Value: "application/x-www-form-urlencoded"}}}
	sha1Signed, _ := Sign(base, "twilio", "shared", Options{})
	withRule := base.Clone()
	withRule.Headers = append(withRule.Headers, message.Header{Name: "X-Twilio-Webhooks-Signature-Settings", Value: "key=HKxxx,algorithm=HMAC_SHA256"})
	s, err := Sign(withRule, "twilio", "shared", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := Verify(s, "twilio", "shared", Options{}); !r.Valid || r.Scheme != "sha256" {
		t.Fatalf("sha256 rule: %+v", r)
	}
	if s.Headers.Get("X-Twilio-Signature") == sha1Signed.Headers.Get("X-Twilio-Signature") {
		t.Fatal("same signature for both algorithms")
	}
	// A SHA-1 signature under a SHA-256 rule does not pass.
	s.Headers = s.Headers.Set("X-Twilio-Signature", sha1Signed.Headers.Get("X-Twilio-Signature"))
	if r, _ := Verify(s, "twilio", "shared", Options{}); r.Valid {
		t.Fatal("sha1 signature accepted under a sha256 rule")
	}
	s.Headers = s.Headers.Set("X-Twilio-Webhooks-Signature-Settings", "algorithm=HMAC_MD5")
	if r, _ := Verify(s, "twilio", "shared", Options{}); r.Valid || !strings.Contains(r.Reason, "unsupported algorithm") {
		t.Fatalf("%+v", r)
	}
}

// twilioSidless returns form body without its sid parameters.
func twilioSidless(t *testing.T, body []byte) string {
	t.Helper()
	v, err := url.ParseQuery(string(body))
	if err != nil {
		t.Fatal(err)
	}
	for k := range twilioSidParams {
		v.Del(k)
	}
	return v.Encode()
}

// The retention phase judges a handler's dedupe window against these
// horizons: Svix publishes its timetable (the last retry 27 h 35 min 5 s
// after the first attempt); the Standard Webhooks specification publishes
// none, so a plain Standard Webhooks sender is not judged.
func TestRetryHorizonSvixAndStandard(t *testing.T) {
	h, src, ok := RetryHorizon(Lookup("svix"))
	if !ok || h != 27*time.Hour+35*time.Minute+5*time.Second || !strings.Contains(src, "docs.svix.com/retries") {
		t.Errorf("svix: %v %q %v", h, src, ok)
	}
	if h, _, ok := RetryHorizon(Lookup("standard")); ok {
		t.Errorf("standard webhooks publishes no timetable, got %v", h)
	}
}

// withoutBodySignature drops the top-level "signature" object of a body
// whose scheme signs inside the body (Mailgun: no signature header), which
// re-signing renews; other bodies are returned as they are.
func withoutBodySignature(provider string, body []byte) []byte {
	if len(Lookup(provider).SignatureHeaders()) > 0 {
		return body
	}
	s, e, err := topLevelValue(body, "signature")
	if err != nil {
		return body
	}
	return splice(body, s, e, nil)
}
