package verify

import (
	"encoding/base64"
	"strconv"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// squareScheme: x-square-hmacsha256-signature, base64 HMAC-SHA256 of the
// notification URL as configured followed by the body, keyed with the
// subscription's signature key; older deliveries also carry
// x-square-signature, the same over HMAC-SHA1. Like Twilio's, the
// signature covers the URL, so a copy sent elsewhere needs re-signing.
type squareScheme struct{}

var _ Scheme = squareScheme{}

const (
	squareSig256 = "X-Square-Hmacsha256-Signature"
	squareSig1   = "X-Square-Signature"
)

func (squareScheme) Name() string                       { return "square" }
func (squareScheme) Title() string                      { return "Square" }
func (squareScheme) Tolerance() time.Duration           { return 0 }
func (squareScheme) SignatureHeaders() []string         { return []string{squareSig256, squareSig1} }
func (squareScheme) SignsURL() bool                     { return true }
func (squareScheme) BodyEdited(*message.Request) string { return "" }
func (squareScheme) IdentityInBody() bool               { return true }
func (squareScheme) IdentitySigned() bool               { return true }
func (squareScheme) NewEventID() string                 { return newUUID() }
func (squareScheme) ResponseTimeout() time.Duration     { return 0 }
func (squareScheme) Challenge(*message.Request) string  { return "" }
func (squareScheme) Detects(h message.Headers) bool {
	return h.Has(squareSig256) || h.Has(squareSig1)
}
func (squareScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

func (squareScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	return Identity{Provider: "square", EventID: str(m, "event_id"), EventType: str(m, "type")}
}

func (squareScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	name, algo, macFn := squareSig256, "sha256", macSHA256
	if !r.Headers.Has(name) {
		name, algo, macFn = squareSig1, "sha1", macSHA1
	}
	if !r.Headers.Has(name) {
		return missing("square", squareSig256), nil
	}
	urls := twilioURLs(r, opt.URL)
	if len(urls) == 0 {
		return Result{}, &OptionError{Field: "URL", Provider: "square", Detail: "the request has no Host header"}
	}
	sig := r.Headers.Get(name)
	var want []byte
	for _, u := range urls {
		want = macFn([]byte(secret), []byte(u), r.Body)
		if equalBase64(sig, want) {
			return valid("square", algo, time.Time{}, opt.Now), nil
		}
	}
	reason := mismatch([]string{sig}, want, true)
	if opt.URL == "" {
		reason += " (Square signs the notification URL it was configured with, which was not given)"
	}
	return invalid("square", algo, reason), nil
}

// Sign writes the HMAC-SHA256 header, and the HMAC-SHA1 one when the
// request carries it (Square's older subscriptions send both).
func (squareScheme) Sign(r *message.Request, secret string, opt Options) error {
	urls := twilioURLs(r, opt.URL)
	if len(urls) == 0 {
		return &OptionError{Field: "URL", Provider: "square"}
	}
	u := []byte(urls[0])
	r.Headers = r.Headers.Set(squareSig256, base64.StdEncoding.EncodeToString(macSHA256([]byte(secret), u, r.Body)))
	if r.Headers.Has(squareSig1) {
		r.Headers = r.Headers.Set(squareSig1, base64.StdEncoding.EncodeToString(macSHA1([]byte(secret), u, r.Body)))
	}
	return nil
}

// MarkRetry: Square numbers its retries in Square-Retry-Number (0 on the
// first attempt), outside the signature.
func (squareScheme) MarkRetry(r *message.Request, n int) {
	r.Headers = r.Headers.Set("Square-Retry-Number", strconv.Itoa(n))
}

func (squareScheme) Reidentify(r *message.Request, newID string) error {
	b, err := replaceTopLevelString(r.Body, "event_id", newID)
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

// Retries: "Unsuccessful deliveries are retried for up to 24 hours. After
// 24 hours, the notification is discarded"; the number of retries and
// their intervals are not published. Modelled: 10 retries, the first after
// 1 minute, the last at 24 h.
func (squareScheme) Retries() Schedule {
	return Schedule{
		Retries: fittedBackoff(10, time.Minute, 24*time.Hour),
		Final:   "notification discarded (still listed by the Events API)",
		Source:  "https://developer.squareup.com/docs/webhooks/troubleshooting (retried for up to 24 hours, then discarded; count and intervals modelled)",
	}
}

func (squareScheme) Samples() []Fixture {
	return []Fixture{
		{"square", "payment.updated", "square/payment.updated.json", "a $10.00 card payment completed at the Coffee Bar location"},
		{"square", "order.created", "square/order.created.json", "an online order of two items created"},
	}
}

func (squareScheme) Sample(r *message.Request, _, _ string, now time.Time) error {
	addHeaders(r,
		"Content-Type", "application/json",
		"User-Agent", "Square Connect v2",
		"Square-Environment", "Production",
		"Square-Initial-Delivery-Timestamp", now.UTC().Format("2006-01-02T15:04:05.000000000Z"),
		"Square-Retry-Number", "0")
	return nil
}
