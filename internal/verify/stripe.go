package verify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// stripeScheme: Stripe-Signature: t=<unix>,v1=<hex>[,v1=...][,v0=...], HMAC-SHA256
// of "<t>.<body>" keyed with the whole secret string (whsec_... is not decoded).
type stripeScheme struct{}

var _ Scheme = stripeScheme{}

const stripeHeader = "Stripe-Signature"

func (stripeScheme) Name() string                       { return "stripe" }
func (stripeScheme) Title() string                      { return "Stripe" }
func (stripeScheme) Detects(h message.Headers) bool     { return h.Has(stripeHeader) }
func (stripeScheme) Tolerance() time.Duration           { return 300 * time.Second }
func (stripeScheme) SignatureHeaders() []string         { return []string{stripeHeader} }
func (stripeScheme) SignsURL() bool                     { return false }
func (stripeScheme) BodyEdited(*message.Request) string { return "" }
func (stripeScheme) IdentityInBody() bool               { return true }
func (stripeScheme) IdentitySigned() bool               { return true }
func (stripeScheme) NewEventID() string                 { return "evt_" + randomString(base62, 24) }
func (stripeScheme) ResponseTimeout() time.Duration     { return 30 * time.Second }
func (stripeScheme) MarkRetry(*message.Request, int)    {}
func (stripeScheme) Challenge(*message.Request) string  { return "" }

var _ Refuser = stripeScheme{}

// LibraryRefusal: stripe-go's webhook.ConstructEvent (and stripe-dotnet's
// EventUtility.ConstructEvent) refuse an event whose api_version is not
// the one the library was built for, after the signature checked out; the
// handler of Stripe's Go sample answers that 400 with an empty body, as it
// answers a bad signature. Seen checking a stripe-go v82 handler with
// hookreplay send's sample (api_version 2024-06-20).
func (stripeScheme) LibraryRefusal(r *message.Request) string {
	v := str(jsonObject(r.Body), "api_version")
	if v == "" {
		return ""
	}
	return fmt.Sprintf("its Stripe library refuses the event's API version after the signature checked out (this delivery's api_version is %s: "+
		"stripe-go's webhook.ConstructEvent and stripe-dotnet's EventUtility.ConstructEvent refuse every version but the one the library was built for; "+
		"check a delivery your endpoint sent, or a sample whose body carries the library's api_version, "+
		"or construct events with IgnoreAPIVersionMismatch / throwOnApiVersionMismatch: false)", v)
}

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
	// spacedT and spacedV1 record " t=" and " v1=" parts (a space after
	// the comma), which Stripe's libraries read as unknown keys.
	spacedT, spacedV1 bool
}

// parseStripeHeader parses "t=...,v1=...,v0=..." as stripe-go does: every
// part is key=value, keys are matched exactly (" v1=" after a comma and a
// space is an unknown key) and unknown keys are ignored. It fails when a
// part is not key=value, or t is missing or not an integer.
func parseStripeHeader(h string) (stripeSig, error) {
	var s stripeSig
	for _, part := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.Contains(v, "=") {
			return s, fmt.Errorf("malformed Stripe-Signature header: %q is not key=value", part)
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
		default:
			switch strings.TrimSpace(k) {
			case "t":
				s.spacedT = true
			case "v1":
				s.spacedV1 = true
			}
		}
	}
	if !s.hasT {
		msg := "malformed Stripe-Signature header: no t=<timestamp>"
		if s.spacedT {
			msg += ` (" t=" after a space is not read as one by Stripe's libraries)`
		}
		return s, errors.New(msg)
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
		if s.spacedV1 {
			reason += ` (" v1=" after a space is not read as one by Stripe's libraries)`
		} else if s.v0 > 0 {
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
		res := invalid("stripe", "v1", mismatch(s.v1, want, false))
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

// Retries: live mode "attempts to deliver ... for up to three days with an
// exponential back off"; intervals are not published. 16 attempts,
// geometric factor 1.71, last at 72 h.
func (stripeScheme) Retries() Schedule {
	return Schedule{
		Retries: []time.Duration{
			1 * time.Minute,
			2*time.Minute + 42*time.Second,
			5*time.Minute + 37*time.Second,
			10*time.Minute + 36*time.Second,
			19*time.Minute + 6*time.Second,
			33*time.Minute + 37*time.Second,
			58*time.Minute + 24*time.Second,
			1*time.Hour + 40*time.Minute + 43*time.Second,
			2*time.Hour + 52*time.Minute + 58*time.Second,
			4*time.Hour + 56*time.Minute + 20*time.Second,
			8*time.Hour + 26*time.Minute + 59*time.Second,
			14*time.Hour + 26*time.Minute + 40*time.Second,
			24*time.Hour + 40*time.Minute + 49*time.Second,
			42*time.Hour + 9*time.Minute + 27*time.Second,
			72 * time.Hour,
		},
		Final:  "event marked failed; no more automatic retries",
		Source: "https://docs.stripe.com/webhooks#retries (live mode: exponential backoff for up to 3 days; intervals fitted)",
	}
}

func (stripeScheme) Samples() []Fixture {
	return []Fixture{
		{"stripe", "payment_intent.succeeded", "stripe/payment_intent.succeeded.json", "a $20.00 card payment succeeded"},
		{"stripe", "checkout.session.completed", "stripe/checkout.session.completed.json", "a Checkout subscription session completed"},
		{"stripe", "invoice.paid", "stripe/invoice.paid.json", "a $49.00 subscription invoice paid"},
		{"stripe", "invoice.payment_succeeded", "stripe/invoice.payment_succeeded.json", "amount_paid 5000 for customer cus_QpB3d9uYnWx2Ke"},
		{"stripe", "charge.refunded", "stripe/charge.refunded.json", "a $20.00 charge fully refunded"},
		{"stripe", "customer.subscription.created", "stripe/customer.subscription.created.json", "a $49.00/month Pro subscription started"},
		{"stripe", "customer.subscription.updated", "stripe/customer.subscription.updated.json", "the Pro subscription set to cancel at period end"},
		{"stripe", "customer.subscription.deleted", "stripe/customer.subscription.deleted.json", "the Pro subscription ended (canceled)"},
	}
}

func (stripeScheme) Sample(r *message.Request, _, _ string, now time.Time) error {
	addHeaders(r,
		"User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
		"Accept", "*/*; q=0.5, application/xml",
		"Cache-Control", "no-cache",
		"Content-Type", "application/json; charset=utf-8")
	stampTime(r, "created", now)
	return nil
}
