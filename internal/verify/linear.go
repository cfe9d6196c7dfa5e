package verify

import (
	"encoding/hex"
	"strconv"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// linearScheme: Linear-Signature, hex HMAC-SHA256 of the body keyed with
// the webhook's signing secret. The timestamp is inside the signed body
// (webhookTimestamp, milliseconds), so a fresh signature means a fresh
// body timestamp: Sign stamps it. Linear-Delivery names the delivery,
// Linear-Event the entity type.
type linearScheme struct{}

var _ Scheme = linearScheme{}

const (
	linearSig      = "Linear-Signature"
	linearDelivery = "Linear-Delivery"
	linearEvent    = "Linear-Event"
)

func (linearScheme) Name() string                       { return "linear" }
func (linearScheme) Title() string                      { return "Linear" }
func (linearScheme) SignatureHeaders() []string         { return []string{linearSig} }
func (linearScheme) SignsURL() bool                     { return false }
func (linearScheme) BodyEdited(*message.Request) string { return "" }
func (linearScheme) IdentityInBody() bool               { return false }
func (linearScheme) IdentitySigned() bool               { return false }
func (linearScheme) NewEventID() string                 { return newUUID() }
func (linearScheme) MarkRetry(*message.Request, int)    {}
func (linearScheme) Challenge(*message.Request) string  { return "" }
func (linearScheme) Detects(h message.Headers) bool {
	return h.Has(linearSig) || h.Has(linearDelivery)
}

// Tolerance: Linear's SDK refuses a webhookTimestamp more than a minute
// from now, either way, as its docs recommend.
func (linearScheme) Tolerance() time.Duration { return 60 * time.Second }

// ResponseTimeout: a delivery not answered 200 within 5 seconds failed.
func (linearScheme) ResponseTimeout() time.Duration { return 5 * time.Second }

func (linearScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	id := Identity{Provider: "linear", EventID: r.Headers.Get(linearDelivery), EventType: str(m, "type")}
	if id.EventType == "" {
		id.EventType = r.Headers.Get(linearEvent)
	}
	if a := str(m, "action"); a != "" && id.EventType != "" {
		id.EventType += "." + a
	}
	return id
}

func (linearScheme) SignedAt(r *message.Request) (time.Time, bool) {
	m := jsonObject(r.Body)
	ms, ok := m["webhookTimestamp"].(float64)
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(ms)), true
}

func (s linearScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(linearSig) {
		return missing("linear", linearSig), nil
	}
	sig := r.Headers.Get(linearSig)
	want := macSHA256([]byte(secret), r.Body)
	t, hasTS := s.SignedAt(r)
	if !equalHex(sig, want) {
		res := invalid("linear", "sha256", mismatch([]string{sig}, want, false))
		if hasTS {
			res.SignedAt, res.CheckedAt = t, opt.Now
		}
		return res, nil
	}
	if !hasTS {
		return invalid("linear", "sha256", "the body has no webhookTimestamp (Linear's SDK refuses a payload without one)"), nil
	}
	return checkAge(valid("linear", "sha256", t, opt.Now), t, opt.Now, tolOr(opt, s.Tolerance()), false), nil
}

// Sign stamps the body's webhookTimestamp with opt.Now (milliseconds) when
// it has one, as Linear does on every delivery, and signs the body.
func (linearScheme) Sign(r *message.Request, secret string, opt Options) error {
	if b, err := replaceTopLevelRaw(r.Body, "webhookTimestamp", []byte(strconv.FormatInt(opt.Now.UnixMilli(), 10))); err == nil {
		r.Body = b
	}
	r.Headers = r.Headers.Set(linearSig, hex.EncodeToString(macSHA256([]byte(secret), r.Body)))
	return nil
}

func (linearScheme) Reidentify(r *message.Request, newID string) error {
	r.Headers = r.Headers.Set(linearDelivery, newID)
	return nil
}

// Retries: a failed delivery is retried three times, "with a backoff of 1
// minute, 1 hour and 6 hours", taken here as each delay after the failure
// before it; a webhook that keeps failing is disabled.
func (linearScheme) Retries() Schedule {
	return Schedule{
		Retries: cumulative(time.Minute, time.Hour, 6*time.Hour),
		Final:   "delivery dropped (a webhook that keeps failing is disabled)",
		Source:  "https://linear.app/developers/webhooks (3 retries: after 1 minute, 1 hour and 6 hours)",
	}
}

func (linearScheme) Samples() []Fixture {
	return []Fixture{
		{"linear", "Issue.create", "linear/issue.create.json", "an issue created in the ENG team"},
		{"linear", "Comment.create", "linear/comment.create.json", "a comment added to that issue"},
	}
}

func (linearScheme) Sample(r *message.Request, event, _ string, _ time.Time) error {
	entity := event
	if i := len(entity) - len(".create"); i > 0 && entity[i:] == ".create" {
		entity = entity[:i]
	}
	addHeaders(r,
		"Content-Type", "application/json; charset=utf-8",
		"User-Agent", "Linear-Webhook",
		linearEvent, entity)
	return nil
}
