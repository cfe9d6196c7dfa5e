package verify

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// paddleScheme is Paddle Billing: Paddle-Signature: ts=<unix>;h1=<hex>,
// hex HMAC-SHA256 of "<ts>:<body>" keyed with the notification
// destination's secret key (pdl_ntfset_…, used as it is written).
type paddleScheme struct{}

var _ Scheme = paddleScheme{}

const paddleHeader = "Paddle-Signature"

func (paddleScheme) Name() string                       { return "paddle" }
func (paddleScheme) Title() string                      { return "Paddle Billing" }
func (paddleScheme) Detects(h message.Headers) bool     { return h.Has(paddleHeader) }
func (paddleScheme) SignatureHeaders() []string         { return []string{paddleHeader} }
func (paddleScheme) SignsURL() bool                     { return false }
func (paddleScheme) BodyEdited(*message.Request) string { return "" }
func (paddleScheme) IdentityInBody() bool               { return true }
func (paddleScheme) IdentitySigned() bool               { return true }
func (paddleScheme) MarkRetry(*message.Request, int)    {}
func (paddleScheme) Challenge(*message.Request) string  { return "" }

// Tolerance: Paddle's SDKs refuse a signature more than 5 seconds old (and
// accept one from the future), as its docs recommend.
func (paddleScheme) Tolerance() time.Duration { return 5 * time.Second }

// ResponseTimeout: "respond with HTTP 200 within five seconds".
func (paddleScheme) ResponseTimeout() time.Duration { return 5 * time.Second }

// paddleAlphabet is the lower-case base32 of Paddle's ids (evt_01h…, ntf_01h…).
const paddleAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

func (paddleScheme) NewEventID() string { return "evt_01" + randomString(paddleAlphabet, 24) }

func (paddleScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	id := Identity{Provider: "paddle", EventID: str(m, "event_id"), EventType: str(m, "event_type")}
	if n := str(m, "notification_id"); n != "" {
		id.Extra = map[string]string{"notification_id": n}
	}
	return id
}

// paddleSig parses "ts=…;h1=…[;h1=…]": every h1 (a rotated secret signs
// twice), the timestamp, and whether the header had both.
func paddleSig(h string) (ts string, h1 []string, ok bool) {
	for _, part := range strings.Split(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case v == "":
		case k == "ts":
			ts = v
		case k == "h1":
			h1 = append(h1, v)
		}
	}
	return ts, h1, ts != "" && len(h1) > 0
}

func paddleMAC(secret, ts string, body []byte) []byte {
	return macSHA256([]byte(secret), []byte(ts+":"), body)
}

func (paddleScheme) SignedAt(r *message.Request) (time.Time, bool) {
	ts, _, ok := paddleSig(r.Headers.Get(paddleHeader))
	if !ok {
		return time.Time{}, false
	}
	return parseUnix(ts)
}

func (s paddleScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(paddleHeader) {
		return missing("paddle", paddleHeader), nil
	}
	ts, h1, ok := paddleSig(r.Headers.Get(paddleHeader))
	if !ok {
		return invalid("paddle", "h1", "malformed "+paddleHeader+" header: want ts=…;h1=…"), nil
	}
	t, ok := parseUnix(ts)
	if !ok {
		return invalid("paddle", "h1", "malformed "+paddleHeader+" header: ts is not a unix timestamp"), nil
	}
	want := paddleMAC(secret, ts, r.Body)
	for _, sig := range h1 {
		if equalHex(sig, want) {
			return checkAge(valid("paddle", "h1", t, opt.Now), t, opt.Now, tolOr(opt, s.Tolerance()), true), nil
		}
	}
	res := invalid("paddle", "h1", mismatch(h1, want, false))
	res.SignedAt, res.CheckedAt = t, opt.Now
	return res, nil
}

func (paddleScheme) Sign(r *message.Request, secret string, opt Options) error {
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	r.Headers = r.Headers.Set(paddleHeader, "ts="+ts+";h1="+hex.EncodeToString(paddleMAC(secret, ts, r.Body)))
	return nil
}

// Reidentify sets the body's event_id and gives the notification a fresh
// notification_id: Paddle's event id names the event, the notification id
// one destination's copy of it, so a new event has new values for both.
func (paddleScheme) Reidentify(r *message.Request, newID string) error {
	b, err := replaceTopLevelString(r.Body, "event_id", newID)
	if err != nil {
		return err
	}
	if nb, err := replaceTopLevelString(b, "notification_id", "ntf_01"+randomString(paddleAlphabet, 24)); err == nil {
		b = nb
	}
	r.Body = b
	return nil
}

// Retries: live accounts are retried "up to 60 times over 3 days" with
// exponential backoff (sandbox: 3 times within 15 minutes); intervals not
// published. Fitted: 60 retries, the first after 1 minute, the last at 72 h.
func (paddleScheme) Retries() Schedule {
	return Schedule{
		Retries: fittedBackoff(60, time.Minute, 72*time.Hour),
		Final:   "notification marked failed; it can be replayed through the API (POST /notifications/{id}/replay)",
		Source:  "https://developer.paddle.com/webhooks/respond-to-webhooks (live: 60 retries over 3 days, exponential backoff; sandbox: 3 within 15 min; intervals fitted)",
	}
}

func (paddleScheme) Samples() []Fixture {
	return []Fixture{
		{"paddle", "transaction.completed", "paddle/transaction.completed.json", "a completed checkout: one Pro plan seat, paid by card"},
		{"paddle", "subscription.created", "paddle/subscription.created.json", "a monthly Pro plan subscription created by that checkout"},
	}
}

func (paddleScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json")
	return nil
}
