package verify

import (
	"encoding/hex"
	"errors"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// coinbaseScheme is Coinbase Commerce: X-CC-Webhook-Signature, hex
// HMAC-SHA256 of the body keyed with the endpoint's shared secret. The
// body wraps the event ({"id", "attempt_number", "event": {"id", "type", …}});
// the event's id is the one handlers deduplicate on.
type coinbaseScheme struct{}

var _ Scheme = coinbaseScheme{}

const coinbaseSig = "X-CC-Webhook-Signature"

func (coinbaseScheme) Name() string                                { return "coinbase" }
func (coinbaseScheme) Title() string                               { return "Coinbase Commerce" }
func (coinbaseScheme) Detects(h message.Headers) bool              { return h.Has(coinbaseSig) }
func (coinbaseScheme) Tolerance() time.Duration                    { return 0 }
func (coinbaseScheme) SignatureHeaders() []string                  { return []string{coinbaseSig} }
func (coinbaseScheme) SignsURL() bool                              { return false }
func (coinbaseScheme) BodyEdited(*message.Request) string          { return "" }
func (coinbaseScheme) IdentityInBody() bool                        { return true }
func (coinbaseScheme) IdentitySigned() bool                        { return true }
func (coinbaseScheme) NewEventID() string                          { return newUUID() }
func (coinbaseScheme) ResponseTimeout() time.Duration              { return 0 }
func (coinbaseScheme) MarkRetry(*message.Request, int)             {}
func (coinbaseScheme) Challenge(*message.Request) string           { return "" }
func (coinbaseScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

func coinbaseEvent(body []byte) map[string]any {
	ev, _ := jsonObject(body)["event"].(map[string]any)
	return ev
}

func (coinbaseScheme) Identity(r *message.Request) Identity {
	ev := coinbaseEvent(r.Body)
	return Identity{Provider: "coinbase", EventID: str(ev, "id"), EventType: str(ev, "type")}
}

func (coinbaseScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(coinbaseSig) {
		return missing("coinbase", coinbaseSig), nil
	}
	sig := r.Headers.Get(coinbaseSig)
	if want := macSHA256([]byte(secret), r.Body); !equalHex(sig, want) {
		return invalid("coinbase", "sha256", mismatch([]string{sig}, want, false)), nil
	}
	return valid("coinbase", "sha256", time.Time{}, opt.Now), nil
}

func (coinbaseScheme) Sign(r *message.Request, secret string, _ Options) error {
	r.Headers = r.Headers.Set(coinbaseSig, hex.EncodeToString(macSHA256([]byte(secret), r.Body)))
	return nil
}

// Reidentify rewrites the event's id where it appears as a string (the
// event's own "id"), and nothing else.
func (s coinbaseScheme) Reidentify(r *message.Request, newID string) error {
	old := s.Identity(r).EventID
	if old == "" {
		return errors.New("body has no event.id")
	}
	b, _, err := replaceStrings(r.Body, map[string]string{old: newID})
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

// Retries: a delivery not answered 2xx is retried with exponential backoff
// for up to 3 days; the intervals are not published. Modelled: 10 retries,
// the first after 1 minute, the last at 72 h.
func (coinbaseScheme) Retries() Schedule {
	return Schedule{
		Retries: fittedBackoff(10, time.Minute, 72*time.Hour),
		Final:   "delivery dropped",
		Source:  "https://docs.cdp.coinbase.com/commerce/docs/webhooks (exponential backoff for up to 3 days; count and intervals modelled)",
	}
}

func (coinbaseScheme) Samples() []Fixture {
	return []Fixture{
		{"coinbase", "charge:confirmed", "coinbase/charge.confirmed.json", "a $20.00 charge paid in USDC and confirmed"},
		{"coinbase", "charge:created", "coinbase/charge.created.json", "a $20.00 charge created for an order"},
	}
}

func (coinbaseScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json")
	return nil
}
