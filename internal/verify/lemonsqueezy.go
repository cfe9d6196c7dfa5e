package verify

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// lemonsqueezyScheme: X-Signature, hex HMAC-SHA256 of the body keyed with
// the webhook's signing secret; X-Event-Name repeats meta.event_name. A
// delivery carries no event id of its own: handlers key on the object
// (data.type, data.id) and the event name.
type lemonsqueezyScheme struct{}

var _ Scheme = lemonsqueezyScheme{}

const (
	lemonSig   = "X-Signature"
	lemonEvent = "X-Event-Name"
)

func (lemonsqueezyScheme) Name() string                                { return "lemonsqueezy" }
func (lemonsqueezyScheme) Title() string                               { return "Lemon Squeezy" }
func (lemonsqueezyScheme) Tolerance() time.Duration                    { return 0 }
func (lemonsqueezyScheme) SignatureHeaders() []string                  { return []string{lemonSig} }
func (lemonsqueezyScheme) SignsURL() bool                              { return false }
func (lemonsqueezyScheme) BodyEdited(*message.Request) string          { return "" }
func (lemonsqueezyScheme) IdentityInBody() bool                        { return true }
func (lemonsqueezyScheme) IdentitySigned() bool                        { return true }
func (lemonsqueezyScheme) ResponseTimeout() time.Duration              { return 0 }
func (lemonsqueezyScheme) MarkRetry(*message.Request, int)             {}
func (lemonsqueezyScheme) Challenge(*message.Request) string           { return "" }
func (lemonsqueezyScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

// Detects: X-Event-Name with X-Signature (X-Signature alone is too common a name).
func (lemonsqueezyScheme) Detects(h message.Headers) bool {
	return h.Has(lemonSig) && h.Has(lemonEvent)
}

// NewEventID: Lemon Squeezy's object ids are integers, sent as strings.
func (lemonsqueezyScheme) NewEventID() string { return "9" + randomString("0123456789", 6) }

func (lemonsqueezyScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	data, _ := m["data"].(map[string]any)
	meta, _ := m["meta"].(map[string]any)
	id := Identity{Provider: "lemonsqueezy", EventID: str(data, "id"), EventType: str(meta, "event_name")}
	if id.EventType == "" {
		id.EventType = r.Headers.Get(lemonEvent)
	}
	return id
}

func (lemonsqueezyScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(lemonSig) {
		return missing("lemonsqueezy", lemonSig), nil
	}
	sig := r.Headers.Get(lemonSig)
	if want := macSHA256([]byte(secret), r.Body); !equalHex(sig, want) {
		return invalid("lemonsqueezy", "sha256", mismatch([]string{sig}, want, false)), nil
	}
	return valid("lemonsqueezy", "sha256", time.Time{}, opt.Now), nil
}

func (lemonsqueezyScheme) Sign(r *message.Request, secret string, _ Options) error {
	r.Headers = r.Headers.Set(lemonSig, hex.EncodeToString(macSHA256([]byte(secret), r.Body)))
	return nil
}

// Reidentify gives the object (data.id) the id newID: a fresh order,
// subscription or payment, which is what a new event is to a handler
// keying on it.
func (lemonsqueezyScheme) Reidentify(r *message.Request, newID string) error {
	s, e, err := topLevelValue(r.Body, "data")
	if err != nil {
		return err
	}
	if r.Body[s] != '{' {
		return fmt.Errorf("top-level %q is not an object", "data")
	}
	is, ie, err := topLevelValue(r.Body[s:e], "id")
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	var enc bytes.Buffer
	if err := json.NewEncoder(&enc).Encode(newID); err != nil {
		return err
	}
	if r.Body[s+is] != '"' { // a number id stays a number
		if _, err := strconv.ParseInt(newID, 10, 64); err != nil {
			return fmt.Errorf("data.id is a number and %q is not", newID)
		}
		enc.Reset()
		enc.WriteString(newID)
	}
	r.Body = splice(r.Body, s+is, s+ie, bytes.TrimRight(enc.Bytes(), "\n"))
	return nil
}

// Retries: a delivery not answered 200 is retried 3 more times with
// exponential backoff (5, 25 and 125 seconds).
func (lemonsqueezyScheme) Retries() Schedule {
	return Schedule{
		Retries: cumulative(5*time.Second, 25*time.Second, 125*time.Second),
		Final:   "delivery marked failed; it can be resent from the dashboard",
		Source:  "https://docs.lemonsqueezy.com/help/webhooks (3 retries with exponential backoff: 5 s, 25 s, 125 s)",
	}
}

func (lemonsqueezyScheme) Samples() []Fixture {
	return []Fixture{
		{"lemonsqueezy", "order_created", "lemonsqueezy/order_created.json", "a $29.00 order of the Pro license"},
		{"lemonsqueezy", "subscription_payment_success", "lemonsqueezy/subscription_payment_success.json", "a monthly subscription renewal paid"},
	}
}

func (lemonsqueezyScheme) Sample(r *message.Request, event, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json", lemonEvent, event)
	return nil
}
