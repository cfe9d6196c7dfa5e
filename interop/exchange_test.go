//go:build interop

package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// sdkCase is one provider's SDK and what exchange needs to talk to it.
type sdkCase struct {
	provider string // hookreplay's provider name
	script   string // node/cases/SCRIPT.js
	// signKey signs (hookreplay's and the SDK's copies); verifyKey verifies
	// them (hookreplay's and the SDK's), the same secret for an HMAC scheme,
	// the public key of signKey's pair for an asymmetric one.
	signKey, verifyKey string
	// wrongKey is a well-formed signing key that is not signKey.
	wrongKey string
	// sdkSigns: the SDK can sign a body itself.
	sdkSigns bool
	// url is the handler URL, for schemes that sign it.
	url string
}

// sdkCopy is one request both sides judge, and whether it must be accepted.
type sdkCopy struct {
	what   string
	req    *message.Request
	accept bool
}

// exchange runs the whole exchange of c for every sample event of its
// provider: detection of each sample, and the copies hookreplay makes (the
// delivery, a re-signed and a re-identified copy; a body changed after
// signing, a wrong key, an hour-old timestamp) judged alike by hookreplay and
// the SDK; then, when the SDK signs, its signature accepted by hookreplay.
func exchange(t *testing.T, c sdkCase) {
	t.Helper()
	now := time.Now()
	opt := verify.Options{Now: now, URL: c.url}
	var samples []verify.Fixture
	for _, f := range verify.Fixtures() {
		if f.Provider == c.provider {
			samples = append(samples, f)
		}
	}
	if len(samples) == 0 {
		t.Fatalf("%s has no sample events", c.provider)
	}
	var copies []sdkCopy
	var ops []sdkOp
	add := func(cp sdkCopy) {
		copies = append(copies, cp)
		ops = append(ops, verifyOp(cp.req, c.verifyKey, c.url))
	}
	var signed []*message.Request
	for _, f := range samples {
		req, err := verify.BuildDeliveryTo(c.provider, f.Event, c.signKey, c.url, now)
		if err != nil {
			t.Fatalf("build %s %s: %v", c.provider, f.Event, err)
		}
		if got := verify.Detect(req).Provider; got != c.provider {
			t.Errorf("sample %s is detected as %s, want %s", f.Event, got, c.provider)
		}
		signed = append(signed, req)
		add(sdkCopy{f.Event + ": the delivery hookreplay signed", req, true})
		re, err := verify.Resign(req, c.provider, c.signKey, now.Add(2*time.Second), opt)
		if err != nil {
			t.Fatal(err)
		}
		add(sdkCopy{f.Event + ": a re-signed copy", re, true})
		fresh, err := verify.Reidentify(req, c.provider, "", c.signKey, now, opt)
		if err != nil {
			t.Fatal(err)
		}
		add(sdkCopy{f.Event + ": a re-identified copy", fresh, true})
		if fg, ok := verify.Lookup(c.provider).(verify.Forger); ok {
			// The body is not signed (Mercado Pago): forge what is, as check's tamper does.
			forged := req.Clone()
			what, ok := fg.Forge(forged)
			if !ok {
				t.Fatalf("%s: nothing to forge", f.Event)
			}
			add(sdkCopy{f.Event + ": a copy whose " + strings.TrimPrefix(what, "the "), forged, false})
		} else {
			add(sdkCopy{f.Event + ": a copy whose body was changed after signing", tamperBody(t, req), false})
		}
		wrong, err := verify.Sign(req, c.provider, c.wrongKey, opt)
		if err != nil {
			t.Fatal(err)
		}
		add(sdkCopy{f.Event + ": a copy signed with another key", wrong, false})
		// An hour-old signature is a forgery only where the provider sets a
		// tolerance; Mercado Pago and Bird sign a timestamp and set none.
		if _, ok := verify.SignedAt(req, c.provider); ok && verify.Lookup(c.provider).Tolerance() > 0 {
			old, err := verify.Sign(req, c.provider, c.signKey, verify.Options{Now: now.Add(-time.Hour), URL: c.url})
			if err != nil {
				t.Fatal(err)
			}
			add(sdkCopy{f.Event + ": a copy signed an hour ago", old, false})
		}
	}
	nVerify := len(ops)
	if c.sdkSigns {
		for _, req := range signed {
			ops = append(ops, sdkOp{Op: "sign", Body: string(req.Body), Secret: c.signKey, URL: c.url, Method: req.Method,
				ID: verify.Detect(req).EventID, Timestamp: now.Unix(), Headers: headerMap(req.Headers)})
		}
	}
	results := runCase(t, c.script, ops)
	for i, cp := range copies {
		r, err := verify.Verify(cp.req, c.provider, c.verifyKey, opt)
		if err != nil {
			t.Errorf("%s: hookreplay: %v", cp.what, err)
			continue
		}
		sdk := results[i]
		if r.Valid != cp.accept {
			t.Errorf("%s: hookreplay says %s, want accepted=%v", cp.what, r.Describe(""), cp.accept)
		}
		if sdk.Accepted != cp.accept {
			t.Errorf("%s: the %s SDK accepted=%v (%s), want %v", cp.what, c.script, sdk.Accepted, sdk.Error, cp.accept)
		}
		id := verify.Detect(cp.req)
		if sdk.ID != "" && sdk.ID != id.EventID {
			t.Errorf("%s: the SDK reads event id %q, hookreplay %q", cp.what, sdk.ID, id.EventID)
		}
		if sdk.Type != "" && sdk.Type != id.EventType {
			t.Errorf("%s: the SDK reads event type %q, hookreplay %q", cp.what, sdk.Type, id.EventType)
		}
	}
	for k, res := range results[nVerify:] {
		req := signed[k].Clone()
		if len(res.Headers) == 0 {
			t.Errorf("the %s SDK signed nothing", c.script)
			continue
		}
		for _, name := range verify.Lookup(c.provider).SignatureHeaders() {
			req.Headers = req.Headers.Del(name)
		}
		for name, v := range res.Headers {
			req.Headers = req.Headers.Set(name, v)
		}
		if got := verify.Detect(req).Provider; got != c.provider {
			t.Errorf("a delivery the SDK signed is detected as %s, want %s", got, c.provider)
		}
		if r, err := verify.Verify(req, c.provider, c.verifyKey, opt); err != nil || !r.Valid {
			t.Errorf("hookreplay rejects the SDK's signature %v: %s %v", res.Headers, r.Describe(""), err)
		}
		if r, err := verify.Verify(tamperBody(t, req), c.provider, c.verifyKey, opt); err != nil || r.Valid {
			t.Errorf("hookreplay accepts the SDK's signature over a changed body: %s %v", r.Describe(""), err)
		}
	}
}

// verifyOp asks the SDK to verify req.
func verifyOp(req *message.Request, key, url string) sdkOp {
	return sdkOp{Op: "verify", Body: string(req.Body), Headers: headerMap(req.Headers), Secret: key, URL: url, Method: req.Method, Target: req.Target}
}

func headerMap(h message.Headers) map[string]string {
	m := map[string]string{}
	for _, x := range h {
		m[strings.ToLower(x.Name)] = x.Value
	}
	return m
}

// tamperBody returns a copy of req whose body has its last digit changed,
// as check's tamper phase changes a number after signing.
func tamperBody(t *testing.T, req *message.Request) *message.Request {
	t.Helper()
	c := req.Clone()
	for i := len(c.Body) - 1; i >= 0; i-- {
		if d := c.Body[i]; d >= '0' && d <= '9' {
			c.Body = append([]byte(nil), c.Body...)
			c.Body[i] = '0' + (d-'0'+1)%10
			return c
		}
	}
	t.Fatalf("no digit to change in %q", c.Body)
	return nil
}
