package verify

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// stripeScheme: Stripe-Signature: t=<unix>,v1=<hex>[,v1=...][,v0=...], HMAC-SHA256
// of "<t>.<body>" keyed with the whole secret string (whsec_... is not decoded).
type stripeScheme struct{}

const stripeHeader = "Stripe-Signature"

func (stripeScheme) Name() string               { return "stripe" }
func (stripeScheme) Tolerance() time.Duration   { return 300 * time.Second }
func (stripeScheme) SignatureHeaders() []string { return []string{stripeHeader} }
func (stripeScheme) IdentityInBody() bool       { return true }
func (stripeScheme) NewEventID() string         { return "evt_" + randomString(base62, 24) }
func (stripeScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	return Identity{Provider: "stripe", EventID: str(m, "id"), EventType: str(m, "type")}
}

// stripeSig is a parsed Stripe-Signature header.
type stripeSig struct {
	t    time.Time
	hasT bool
	v1   []string
	v0   int
}

// parseStripeHeader parses "t=...,v1=...,v0=..."; unknown keys are ignored
// as Stripe's libraries do. It fails only when t is missing or not an integer.
func parseStripeHeader(h string) (stripeSig, error) {
	var s stripeSig
	for _, part := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return s, errors.New("malformed Stripe-Signature header: t is not a unix timestamp")
			}
			s.t, s.hasT = time.Unix(n, 0), true
		case "v1":
			s.v1 = append(s.v1, v)
		case "v0":
			s.v0++
		}
	}
	if !s.hasT {
		return s, errors.New("malformed Stripe-Signature header: no t=<timestamp>")
	}
	return s, nil
}

func (stripeScheme) SignedAt(r *message.Request) (time.Time, bool) {
	s, err := parseStripeHeader(r.Headers.Get(stripeHeader))
	if err != nil {
		return time.Time{}, false
	}
	return s.t, true
}

func stripeMAC(secret string, t time.Time, body []byte) []byte {
	return macSHA256([]byte(secret), []byte(strconv.FormatInt(t.Unix(), 10)), []byte("."), body)
}

func (sc stripeScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(stripeHeader) {
		return missing("stripe", stripeHeader), nil
	}
	s, err := parseStripeHeader(r.Headers.Get(stripeHeader))
	if err != nil {
		return invalid("stripe", "v1", err.Error()), nil
	}
	if len(s.v1) == 0 {
		reason := "no v1 signature in Stripe-Signature header"
		if s.v0 > 0 {
			reason += " (only v0, which is not verified)"
		}
		return invalid("stripe", "v1", reason), nil
	}
	want := stripeMAC(secret, s.t, r.Body)
	ok := false
	for _, sig := range s.v1 {
		if equalHex(sig, want) {
			ok = true
		}
	}
	if !ok {
		res := invalid("stripe", "v1", "signature mismatch")
		res.SignedAt, res.CheckedAt = s.t, opt.Now
		return res, nil
	}
	return checkAge(valid("stripe", "v1", s.t, opt.Now), s.t, opt.Now, tolOr(opt, sc.Tolerance()), true), nil
}

func (stripeScheme) Sign(r *message.Request, secret string, opt Options) error {
	t := opt.Now
	v := "t=" + strconv.FormatInt(t.Unix(), 10) + ",v1=" + hex.EncodeToString(stripeMAC(secret, t, r.Body))
	r.Headers = r.Headers.Set(stripeHeader, v)
	return nil
}

func (stripeScheme) Reidentify(r *message.Request, newID string) error {
	b, err := replaceTopLevelString(r.Body, "id", newID)
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}
