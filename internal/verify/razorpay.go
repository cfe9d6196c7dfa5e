package verify

import (
	"encoding/hex"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// razorpayScheme: X-Razorpay-Signature, hex HMAC-SHA256 of the body keyed
// with the webhook secret set in the Dashboard (not the API key secret);
// the event id travels unsigned in X-Razorpay-Event-Id.
type razorpayScheme struct{}

var _ Scheme = razorpayScheme{}

const (
	razorpaySig     = "X-Razorpay-Signature"
	razorpayEventID = "X-Razorpay-Event-Id"
)

func (razorpayScheme) Name() string                                { return "razorpay" }
func (razorpayScheme) Title() string                               { return "Razorpay" }
func (razorpayScheme) Detects(h message.Headers) bool              { return h.Has(razorpaySig) }
func (razorpayScheme) Tolerance() time.Duration                    { return 0 }
func (razorpayScheme) SignatureHeaders() []string                  { return []string{razorpaySig} }
func (razorpayScheme) SignsURL() bool                              { return false }
func (razorpayScheme) BodyEdited(*message.Request) string          { return "" }
func (razorpayScheme) IdentityInBody() bool                        { return false }
func (razorpayScheme) IdentitySigned() bool                        { return false }
func (razorpayScheme) NewEventID() string                          { return randomString(base62, 14) }
func (razorpayScheme) ResponseTimeout() time.Duration              { return 0 }
func (razorpayScheme) MarkRetry(*message.Request, int)             {}
func (razorpayScheme) Challenge(*message.Request) string           { return "" }
func (razorpayScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

func (razorpayScheme) Identity(r *message.Request) Identity {
	return Identity{Provider: "razorpay", EventID: r.Headers.Get(razorpayEventID), EventType: str(jsonObject(r.Body), "event")}
}

func (razorpayScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(razorpaySig) {
		return missing("razorpay", razorpaySig), nil
	}
	sig := r.Headers.Get(razorpaySig)
	if want := macSHA256([]byte(secret), r.Body); !equalHex(sig, want) {
		return invalid("razorpay", "sha256", mismatch([]string{sig}, want, false)), nil
	}
	return valid("razorpay", "sha256", time.Time{}, opt.Now), nil
}

func (razorpayScheme) Sign(r *message.Request, secret string, _ Options) error {
	r.Headers = r.Headers.Set(razorpaySig, hex.EncodeToString(macSHA256([]byte(secret), r.Body)))
	return nil
}

// Reidentify sets X-Razorpay-Event-Id, the id Razorpay tells handlers to
// deduplicate on; the signature does not cover it.
func (razorpayScheme) Reidentify(r *message.Request, newID string) error {
	r.Headers = r.Headers.Set(razorpayEventID, newID)
	return nil
}

// Retries: "we retry the delivery in exponential backoff policy for 24
// hours after event creation timestamp"; a webhook still failing after 24
// hours is disabled. Intervals not published: 10 retries modelled, the
// first after 1 minute, the last at 24 h.
func (razorpayScheme) Retries() Schedule {
	return Schedule{
		Retries: fittedBackoff(10, time.Minute, 24*time.Hour),
		Final:   "webhook disabled after 24 h of failures (alert email sent); missed events can be replayed from the Dashboard for 7 days",
		Source:  "https://razorpay.com/docs/webhooks/best-practices (exponential backoff for 24 h after the event, then the webhook is disabled; count and intervals modelled)",
	}
}

func (razorpayScheme) Samples() []Fixture {
	return []Fixture{
		{"razorpay", "payment.captured", "razorpay/payment.captured.json", "a ₹500.00 UPI payment captured"},
		{"razorpay", "order.paid", "razorpay/order.paid.json", "an order of ₹500.00 paid by that payment"},
	}
}

func (razorpayScheme) Sample(r *message.Request, _, id string, now time.Time) error {
	stampTime(r, "created_at", now)
	addHeaders(r,
		"Content-Type", "application/json",
		razorpayEventID, id)
	return nil
}
