package verify

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

func mustDeclare(t *testing.T, d Declaration) Scheme {
	t.Helper()
	s, err := Declare(d)
	if err != nil {
		t.Fatalf("declare %s: %v", d.Name, err)
	}
	return s
}

// Every mistake is refused when declared, naming the field it is in.
func TestDeclareErrors(t *testing.T) {
	ok := Declaration{Name: "acme", SignatureHeader: "X-Acme-Signature"}
	for _, tc := range []struct {
		name  string
		edit  func(*Declaration)
		field string
		msg   string
	}{
		{"bad name", func(d *Declaration) { d.Name = "Acme Pay" }, "", "lower-case"},
		{"built-in name", func(d *Declaration) { d.Name = "stripe" }, "", "built-in"},
		{"generic", func(d *Declaration) { d.Name = "generic" }, "", "built-in"},
		{"auto", func(d *Declaration) { d.Name = "auto" }, "", "reserved"},
		{"compare", func(d *Declaration) { d.Compare = "strict" }, "compare", "want any or exact"},
		{"final without retries", func(d *Declaration) { d.RetryFinal = "gives up" }, "retry_final", "no retries"},
		{"no header", func(d *Declaration) { d.SignatureHeader = "" }, "signature_header", "give the header"},
		{"title with a control character", func(d *Declaration) { d.Title = "Acme\x1b[31m" }, "title", "printable"},
		{"header with a space", func(d *Declaration) { d.SignatureHeader = "X Sig" }, "signature_header", "give the header"},
		{"unknown placeholder", func(d *Declaration) { d.Signed = "{timestamp}.{bdy}" }, "signed", "placeholder {bdy}: unknown placeholder"},
		{"unclosed", func(d *Declaration) { d.Signed = "{body" }, "signed", "never closed"},
		{"lone brace", func(d *Declaration) { d.Signed = "body}" }, "signed", "lone }"},
		{"header without name", func(d *Declaration) { d.Signed = "{header:}.{body}" }, "signed", "header's name"},
		{"sha256 of what", func(d *Declaration) { d.Signed = "{sha256:url}" }, "signed", "only {sha256:body}"},
		{"timestamp unsigned source", func(d *Declaration) { d.Signed = "{timestamp}.{body}" }, "signed", "no header carries it"},
		{"unknown MAC", func(d *Declaration) { d.MAC = "hmac-md5" }, "mac", `unknown MAC "hmac-md5"`},
		{"bare hash", func(d *Declaration) { d.MAC = "sha256" }, "mac", "want hmac-sha256"},
		{"unknown encoding", func(d *Declaration) { d.Encoding = "base32" }, "encoding", `unknown encoding "base32"`},
		{"unknown secret encoding", func(d *Declaration) { d.SecretEncoding = "utf16" }, "secret_encoding", "want text"},
		{"unknown comparison", func(d *Declaration) { d.Compare = "loose" }, "compare", `unknown comparison "loose" (want any or exact)`},
		{"no signature in format", func(d *Declaration) { d.Format = "t={timestamp}" }, "format", "{signature} exactly once"},
		{"two signatures", func(d *Declaration) { d.Format = "{signature},{signature}" }, "format", "exactly once"},
		{"adjacent placeholders", func(d *Declaration) { d.Format = "{timestamp}{signature}" }, "format", "cannot be split back"},
		{"digit after timestamp", func(d *Declaration) { d.Format = "t={timestamp}1{signature}" }, "format", `"1" after {timestamp}`},
		{"hex after signature", func(d *Declaration) { d.Format = "{signature}a,t={timestamp}" }, "format", `"a" after {signature} could be part of the hex signature`},
		{"base64 after signature", func(d *Declaration) { d.Format = "{signature}=t={timestamp}"; d.Encoding = "base64" }, "format", "base64 signature"},
		{"body in format", func(d *Declaration) { d.Format = "{body}={signature}" }, "format", "unknown placeholder"},
		{"timestamp twice", func(d *Declaration) { d.Format = "t={timestamp},v1={signature}"; d.TimestampHeader = "X-Ts" }, "timestamp_header", "one or the other"},
		{"tolerance without timestamp", func(d *Declaration) { d.Tolerance = time.Minute }, "tolerance", "needs a timestamp"},
		{"tolerance over an unsigned timestamp", func(d *Declaration) { d.TimestampHeader = "X-Ts"; d.Tolerance = time.Minute }, "tolerance", "not signed"},
		{"unit", func(d *Declaration) {
			d.TimestampHeader = "X-Ts"
			d.Signed = "{timestamp}{body}"
			d.TimestampUnit = "us"
		}, "timestamp_unit", "want s or ms"},
		{"event id path", func(d *Declaration) { d.EventID = "$..id" }, "event_id", "empty key"},
		{"event id index", func(d *Declaration) { d.EventID = "$.items[x]" }, "event_id", "neither an array index"},
		{"event type header", func(d *Declaration) { d.EventType = "header:" }, "event_type", "not a header name"},
		{"new id without id", func(d *Declaration) { d.NewEventID = "evt_{random:10}" }, "new_event_id", "no event_id"},
		{"new id placeholder", func(d *Declaration) { d.EventID = "$.id"; d.NewEventID = "{random:0}" }, "new_event_id", "count from 1 to 64"},
		{"detect", func(d *Declaration) { d.Detect = []string{"X-Acme"} }, "detect", "want header:NAME"},
		{"retries decreasing", func(d *Declaration) { d.Retries = []time.Duration{time.Hour, time.Minute} }, "retries", "increasing"},
		{"source without retries", func(d *Declaration) { d.RetrySource = "docs" }, "retry_source", "no retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ok
			tc.edit(&d)
			_, err := Declare(d)
			var de *DeclarationError
			if !errors.As(err, &de) || de.Field != tc.field || !strings.Contains(de.Msg, tc.msg) {
				t.Fatalf("got %v (%#v), want field %q with %q", err, de, tc.field, tc.msg)
			}
		})
	}
	if _, err := Declare(ok); err != nil {
		t.Fatal(err)
	}
}

// twins declares schemes that built-ins implement, in the declaration
// format, to be held against the providers' published vectors.
var twins = map[string]Declaration{
	"github": {Name: "github-declared", SignatureHeader: "X-Hub-Signature-256", Format: "sha256={signature}", EventID: "header:X-GitHub-Delivery", EventType: "header:X-GitHub-Event"},
	"slack": {Name: "slack-declared", SignatureHeader: "X-Slack-Signature", Format: "v0={signature}", TimestampHeader: "X-Slack-Request-Timestamp",
		Signed: "v0:{timestamp}:{body}", Tolerance: 5 * time.Minute, EventID: "$.event_id", EventType: "$.event.type"},
	"stripe": {Name: "stripe-declared", SignatureHeader: "Stripe-Signature", Format: "t={timestamp},v1={signature}", Signed: "{timestamp}.{body}",
		Tolerance: 5 * time.Minute, EventID: "$.id", EventType: "$.type", NewEventID: "evt_{random:24}"},
	"shopify": {Name: "shopify-declared", SignatureHeader: "X-Shopify-Hmac-Sha256", Encoding: "base64", EventID: "header:X-Shopify-Event-Id", EventType: "header:X-Shopify-Topic"},
}

// A declaration of a built-in's scheme verifies the provider's published
// vectors and reproduces the published signature headers.
func TestDeclaredTwinsOfficialVectors(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/providers/vectors/*.json")
	ran := 0
	for _, file := range files {
		v := readVector(t, file)
		d, ok := twins[v.Provider]
		if !ok || !v.Valid && v.Reason != "signature mismatch" {
			continue // the declared comparison accepts any case of hex and base64 form
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			s := mustDeclare(t, d)
			req := &message.Request{Method: "POST", Target: "/", Body: []byte(v.Body)}
			for _, h := range v.Headers {
				req.Headers = append(req.Headers, message.Header{Name: h[0], Value: h[1]})
			}
			r, err := VerifyWith(s, req, v.Secret, Options{Now: time.Unix(v.Now, 0)})
			if err != nil || r.Valid != v.Valid {
				t.Fatalf("declared %s: %+v %v, want valid=%v", v.Provider, r, err, v.Valid)
			}
			if !v.Valid || len(v.SignReproduces) == 0 {
				return
			}
			at, ok := s.SignedAt(req)
			if !ok {
				at = time.Unix(v.Now, 0)
			}
			bare := req.Clone()
			for _, h := range v.SignReproduces {
				bare.Headers = bare.Headers.Del(h)
			}
			signed, err := SignWith(s, bare, v.Secret, Options{Now: at})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range v.SignReproduces {
				if got, want := signed.Headers.Get(h), req.Headers.Get(h); !strings.EqualFold(got, want) {
					t.Errorf("signed %s = %q, published %q", h, got, want)
				}
			}
		})
		ran++
	}
	if ran < 4 {
		t.Fatalf("only %d vectors ran", ran)
	}
}

// The declared twins and the built-ins agree on every fixture: each
// verifies what the other signs, and both name the same event.
func TestDeclaredTwinsAgreeWithBuiltins(t *testing.T) {
	now := time.Unix(1726070400, 0)
	for _, f := range Fixtures() {
		d, ok := twins[f.Provider]
		if !ok {
			continue
		}
		s := mustDeclare(t, d)
		body, err := FixtureBody(f.Provider, f.Event)
		if err != nil {
			t.Fatal(err)
		}
		secret := "twin-secret"
		req := &message.Request{Method: "POST", Target: "/hook", Headers: message.Headers{{Name: "Host", Value: "example.com"}}, Body: body}
		built, err := Sign(req, f.Provider, secret, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := VerifyWith(s, built, secret, Options{Now: now}); err != nil || !r.Valid {
			t.Errorf("%s %s: declared rejects the built-in's signature: %+v %v", f.Provider, f.Event, r, err)
		}
		mine, err := SignWith(s, req, secret, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := Verify(mine, f.Provider, secret, Options{Now: now}); err != nil || !r.Valid {
			t.Errorf("%s %s: built-in rejects the declared signature: %+v %v", f.Provider, f.Event, r, err)
		}
		if s.IdentityInBody() {
			if got, want := s.Identity(built).EventID, IdentityFor(f.Provider, built).EventID; got != want {
				t.Errorf("%s %s: event id %q, built-in %q", f.Provider, f.Event, got, want)
			}
		}
	}
}

// A declared scheme signs, verifies, ages, re-identifies and refuses
// tampering over every placeholder.
func TestDeclaredRoundTrip(t *testing.T) {
	now := time.Unix(1726070400, 0)
	for _, d := range []Declaration{
		{Name: "paddle-like", SignatureHeader: "Paddle-Signature", Format: "ts={timestamp};h1={signature}", Signed: "{timestamp}:{body}", Tolerance: 5 * time.Second, EventID: "$.event_id", EventType: "$.event_type"},
		{Name: "bird-like", SignatureHeader: "MessageBird-Signature", TimestampHeader: "MessageBird-Request-Timestamp", Signed: "{timestamp}\n{url}\n{sha256:body}", Encoding: "base64", EventID: "$.data.items[1].id"},
		{Name: "mp-like", SignatureHeader: "x-signature", Format: "ts={timestamp},v1={signature}", Signed: "id:{query:data.id};request-id:{header:x-request-id};ts:{timestamp};", EventID: "$.id", NewEventID: "{digits:10}"},
		{Name: "ms-like", SignatureHeader: "X-Sig", TimestampHeader: "X-Ts", TimestampUnit: "ms", Signed: "{method} {url}|{timestamp}|{sha256hex:body}", MAC: "hmac-sha512", Encoding: "base64url", Tolerance: time.Minute, EventID: "header:X-Event-Id"},
		{Name: "sha1-like", SignatureHeader: "X-Sig", MAC: "HMAC-SHA1", SecretEncoding: "base64"},
	} {
		t.Run(d.Name, func(t *testing.T) {
			s := mustDeclare(t, d)
			secret := "c2VjcmV0LWJ5dGVz"
			req := &message.Request{Method: "POST", Target: "/hook?data.id=123456", Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "X-Request-Id", Value: "req-1"}, {Name: "X-Event-Id", Value: "e-1"}},
				Body: []byte(`{"id": 1234567890, "event_id":"evt_1","event_type":"a.b","data":{"items":[{"id":"x"},{"id":"y"}]}}`)}
			opt := Options{Now: now, URL: "https://example.com/hook?data.id=123456"}
			signed, err := SignWith(s, req, secret, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Detects(signed.Headers) || s.Detects(req.Headers) && d.Detect == nil && !req.Headers.Has(d.SignatureHeader) {
				t.Fatal("detection")
			}
			if r, err := VerifyWith(s, signed, secret, opt); err != nil || !r.Valid {
				t.Fatalf("own signature: %+v %v", r, err)
			}
			if at, ok := s.SignedAt(signed); ok != (d.Format != "{signature}" && d.Format != "" || d.TimestampHeader != "") || ok && !at.Equal(now) {
				t.Fatalf("SignedAt = %v %v", at, ok)
			}
			tampered := signed.Clone()
			tampered.Body = append([]byte(nil), tampered.Body...)
			tampered.Body[len(tampered.Body)-2] = ' '
			if r, _ := VerifyWith(s, tampered, secret, opt); r.Valid == (s.IdentitySigned() || strings.Contains(d.Signed, "body") || d.Signed == "") {
				t.Fatalf("tampered body: %+v", r)
			}
			if r, err := VerifyWith(s, signed, "b3RoZXI=", opt); err != nil || r.Valid || r.Reason != "signature mismatch" {
				t.Fatalf("wrong secret: %+v", r)
			}
			if d.Tolerance > 0 {
				late := opt
				late.Now = now.Add(d.Tolerance + time.Second)
				if r, _ := VerifyWith(s, signed, secret, late); r.Valid || !strings.Contains(r.Reason, "outside tolerance") {
					t.Fatalf("late: %+v", r)
				}
			}
			if d.EventID == "" {
				if _, err := ReidentifyWith(s, signed, "", secret, now, opt); err == nil {
					t.Fatal("re-identified a scheme without an event id")
				}
				return
			}
			old := s.Identity(signed).EventID
			fresh, err := ReidentifyWith(s, signed, "", secret, now, opt)
			if err != nil {
				t.Fatal(err)
			}
			id := s.Identity(fresh).EventID
			if id == "" || id == old {
				t.Fatalf("fresh id %q (was %q)", id, old)
			}
			if r, err := VerifyWith(s, fresh, secret, opt); err != nil || !r.Valid {
				t.Fatalf("re-identified copy: %+v %v", r, err)
			}
			if s.IdentityInBody() && len(fresh.Body)-len(signed.Body) != len(id)-len(old) {
				t.Fatalf("re-identifying changed more than the id: %s", fresh.Body)
			}
		})
	}
}

// A number event id takes a number; anything else says what to declare.
func TestDeclaredNumberID(t *testing.T) {
	s := mustDeclare(t, Declaration{Name: "num", SignatureHeader: "X-Sig", EventID: "$.id"})
	req := &message.Request{Body: []byte(`{"id":42}`)}
	if err := s.Reidentify(req.Clone(), s.NewEventID()); err == nil || !strings.Contains(err.Error(), `new_event_id: "{digits:2}"`) {
		t.Fatalf("uuid into a number: %v", err)
	}
	c := req.Clone()
	if err := s.Reidentify(c, "77"); err != nil || string(c.Body) != `{"id":77}` {
		t.Fatalf("%s %v", c.Body, err)
	}
}

// Register puts declarations in the registry: found by name, listed before
// generic, and detected before the built-ins.
func TestRegister(t *testing.T) {
	t.Cleanup(func() { Register(nil) })
	hub := mustDeclare(t, Declaration{Name: "meta", SignatureHeader: "X-Hub-Signature-256", Format: "sha256={signature}", Detect: []string{"header:X-Hub-Signature-256", "header:User-Agent=facebookexternalua"}})
	if err := Register([]Scheme{hub, hub}); err == nil {
		t.Fatal("registered a name twice")
	}
	if err := Register([]Scheme{hub}); err != nil {
		t.Fatal(err)
	}
	if s, err := SchemeFor("Meta"); err != nil || s != hub {
		t.Fatalf("SchemeFor: %v", err)
	}
	names := Names()
	if names[len(names)-2] != "meta" || names[len(names)-1] != Generic {
		t.Fatalf("names %v", names)
	}
	h := message.Headers{{Name: "X-Hub-Signature-256", Value: "sha256=00"}, {Name: "User-Agent", Value: "facebookexternalua"}}
	if id := Detect(&message.Request{Headers: h}); id.Provider != "meta" {
		t.Fatalf("detected %s", id.Provider)
	}
	h = append(h[:1], message.Header{Name: "X-GitHub-Event", Value: "push"}, message.Header{Name: "X-GitHub-Delivery", Value: "d"})
	if id := Detect(&message.Request{Headers: h}); id.Provider != "github" {
		t.Fatalf("a GitHub delivery detected as %s", id.Provider)
	}
	Register(nil)
	if KnownProvider("meta") {
		t.Fatal("still registered")
	}
}

// Razorpay is a built-in written as a declaration: listed as built in, its
// declaration readable, and compared as Razorpay's SDK compares (exact
// lower-case hex), saying why an upper-case signature is refused.
func TestRazorpayIsADeclaration(t *testing.T) {
	s := Lookup("razorpay")
	if d, ok := DeclarationOf(s); !ok || d.SignatureHeader != "X-Razorpay-Signature" || Declared(s) {
		t.Fatalf("razorpay: declaration %+v %v, declared by the user %v", d, ok, Declared(s))
	}
	req := &message.Request{Method: "POST", Target: "/", Body: []byte(`{"event":"payment.captured"}`),
		Headers: message.Headers{{Name: "X-Razorpay-Event-Id", Value: "Evt1234567890ab"}}}
	signed, err := Sign(req, "razorpay", "rzp-secret", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := Verify(signed, "razorpay", "rzp-secret", Options{}); !r.Valid || r.String() != "valid (razorpay, sha256)" {
		t.Fatalf("own signature: %s", r)
	}
	upper := signed.Clone()
	upper.Headers = upper.Headers.Set("X-Razorpay-Signature", strings.ToUpper(signed.Headers.Get("X-Razorpay-Signature")))
	if r, _ := Verify(upper, "razorpay", "rzp-secret", Options{}); r.Valid || r.Reason != reasonHexCase {
		t.Fatalf("upper-case hex: %+v", r)
	}
	if id := Detect(signed); id.Provider != "razorpay" || id.EventID != "Evt1234567890ab" || id.EventType != "payment.captured" {
		t.Fatalf("identity %+v", id)
	}
	if n := s.NewEventID(); len(n) != 14 {
		t.Fatalf("fresh id %q", n)
	}
}
