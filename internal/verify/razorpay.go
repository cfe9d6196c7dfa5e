package verify

import (
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// razorpayScheme: X-Razorpay-Signature, hex HMAC-SHA256 of the body keyed
// with the webhook secret set in the Dashboard (not the API key secret);
// the event id travels unsigned in X-Razorpay-Event-Id. The scheme is a
// declaration, as a user would write it in hookreplay.yaml; its SDK
// compares the exact lower-case hex string.
var razorpayScheme = declareBuiltin(Declaration{
	Name:            "razorpay",
	Title:           "Razorpay",
	SignatureHeader: "X-Razorpay-Signature",
	Compare:         "exact",
	EventID:         "header:X-Razorpay-Event-Id",
	EventType:       "$.event",
	NewEventID:      "{random:14}",
	// "we retry the delivery in exponential backoff policy for 24 hours
	// after event creation timestamp"; a webhook still failing after 24
	// hours is disabled. Intervals not published: 10 retries modelled, the
	// first after 1 minute, the last at 24 h.
	Retries:     fittedBackoff(10, time.Minute, 24*time.Hour),
	RetryFinal:  "webhook disabled after 24 h of failures (alert email sent); missed events can be replayed from the Dashboard for 7 days",
	RetrySource: "https://razorpay.com/docs/webhooks/best-practices (exponential backoff for 24 h after the event, then the webhook is disabled; count and intervals modelled)",
}, []Fixture{
	{"razorpay", "payment.captured", "razorpay/payment.captured.json", "a ₹500.00 UPI payment captured"},
	{"razorpay", "order.paid", "razorpay/order.paid.json", "an order of ₹500.00 paid by that payment"},
}, func(r *message.Request, _, id string, now time.Time) error {
	stampTime(r, "created_at", now)
	addHeaders(r,
		"Content-Type", "application/json",
		"X-Razorpay-Event-Id", id)
	return nil
})

var _ Scheme = razorpayScheme
