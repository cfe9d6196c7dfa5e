package verify

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// mailgunScheme is Mailgun's webhooks: the signature travels in the JSON
// body, {"signature": {"timestamp", "token", "signature"}, "event-data":
// {…}}, where signature is the hex HMAC-SHA256 of timestamp + token keyed
// with the HTTP webhook signing key. The event data itself is not signed,
// so a copy whose event data was changed still verifies: check forges the
// token instead (Forger).
type mailgunScheme struct{}

var (
	_ Scheme          = mailgunScheme{}
	_ Forger          = mailgunScheme{}
	_ RequestDetector = mailgunScheme{}
)

func (mailgunScheme) Name() string                                { return "mailgun" }
func (mailgunScheme) Title() string                               { return "Mailgun" }
func (mailgunScheme) SignatureHeaders() []string                  { return nil }
func (mailgunScheme) SignsURL() bool                              { return false }
func (mailgunScheme) BodyEdited(*message.Request) string          { return "" }
func (mailgunScheme) IdentityInBody() bool                        { return true }
func (mailgunScheme) IdentitySigned() bool                        { return false }
func (mailgunScheme) NewEventID() string                          { return randomString(base62[10:]+base62[:10], 22) }
func (mailgunScheme) ResponseTimeout() time.Duration              { return 0 }
func (mailgunScheme) MarkRetry(*message.Request, int)             {}
func (mailgunScheme) Challenge(*message.Request) string           { return "" }
func (mailgunScheme) Detects(message.Headers) bool                { return false }
func (mailgunScheme) Tolerance() time.Duration                    { return 0 }
func (mailgunScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

// mailgunBody is the part of a Mailgun webhook body hookreplay reads.
type mailgunBody struct {
	Signature *struct {
		Timestamp string `json:"timestamp"`
		Token     string `json:"token"`
		Signature string `json:"signature"`
	} `json:"signature"`
	EventData map[string]any `json:"event-data"`
}

func mailgunParse(body []byte) (mailgunBody, bool) {
	var b mailgunBody
	if json.Unmarshal(body, &b) != nil || b.Signature == nil || b.EventData == nil {
		return b, false
	}
	return b, true
}

// DetectsRequest: a JSON body with Mailgun's signature object and event-data.
func (mailgunScheme) DetectsRequest(r *message.Request) bool {
	_, ok := mailgunParse(r.Body)
	return ok
}

func (mailgunScheme) Identity(r *message.Request) Identity {
	b, _ := mailgunParse(r.Body)
	return Identity{Provider: "mailgun", EventID: str(b.EventData, "id"), EventType: str(b.EventData, "event")}
}

func (mailgunScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	b, ok := mailgunParse(r.Body)
	if !ok {
		return invalid("mailgun", "sha256", "the body has no Mailgun signature object"), nil
	}
	s := b.Signature
	want := macSHA256([]byte(secret), []byte(s.Timestamp+s.Token))
	if !equalHex(s.Signature, want) {
		return invalid("mailgun", "sha256", mismatch([]string{s.Signature}, want, false)), nil
	}
	return valid("mailgun", "sha256", time.Time{}, opt.Now), nil
}

// mailgunSetSignature writes timestamp, token and signature into the
// body's signature object, changing only those values.
func mailgunSetSignature(body []byte, vals map[string]string) ([]byte, error) {
	s, e, err := topLevelValue(body, "signature")
	if err != nil {
		return nil, err
	}
	obj := body[s:e]
	for _, k := range []string{"signature", "token", "timestamp"} {
		v, ok := vals[k]
		if !ok {
			continue
		}
		vs, ve, err := topLevelValue(obj, k)
		if err != nil {
			return nil, fmt.Errorf("signature: %w", err)
		}
		enc, _ := json.Marshal(v)
		obj = splice(obj, vs, ve, enc)
	}
	return splice(body, s, e, obj), nil
}

// Sign gives the body a fresh timestamp and token, as Mailgun does on each
// delivery, and their signature.
func (mailgunScheme) Sign(r *message.Request, secret string, opt Options) error {
	if _, ok := mailgunParse(r.Body); !ok {
		return errors.New("the body has no Mailgun signature object to sign")
	}
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	token := hex.EncodeToString([]byte(randomString(base62, 25)))
	b, err := mailgunSetSignature(r.Body, map[string]string{
		"timestamp": ts, "token": token, "signature": hex.EncodeToString(macSHA256([]byte(secret), []byte(ts+token))),
	})
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

// Forge changes one character of the signed token, keeping the signature:
// a copy Mailgun's own check refuses.
func (mailgunScheme) Forge(r *message.Request) (string, bool) {
	b, ok := mailgunParse(r.Body)
	if !ok || b.Signature.Token == "" {
		return "", false
	}
	t := []byte(b.Signature.Token)
	if t[0] == 'a' {
		t[0] = 'b'
	} else {
		t[0] = 'a'
	}
	nb, err := mailgunSetSignature(r.Body, map[string]string{"token": string(t)})
	if err != nil {
		return "", false
	}
	r.Body = nb
	return "the signed token changed after signing", true
}

// Reidentify sets event-data.id.
func (s mailgunScheme) Reidentify(r *message.Request, newID string) error {
	es, ee, err := topLevelValue(r.Body, "event-data")
	if err != nil {
		return err
	}
	is, ie, err := topLevelValue(r.Body[es:ee], "id")
	if err != nil {
		return fmt.Errorf("event-data: %w", err)
	}
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false)
	if err := je.Encode(newID); err != nil {
		return err
	}
	r.Body = splice(r.Body, es+is, es+ie, bytes.TrimRight(enc.Bytes(), "\n"))
	return nil
}

// Retries: unless answered 200 (or 406, which stops them), Mailgun retries
// "during 8 hours" at intervals of 5 min, 10 min, 15 min, 1 h, 2 h and 4 h
// (its Automatic Retries page), each after the failure before it.
func (mailgunScheme) Retries() Schedule {
	return Schedule{
		Retries: cumulative(5*time.Minute, 10*time.Minute, 15*time.Minute, time.Hour, 2*time.Hour, 4*time.Hour),
		Final:   "webhook dropped (answer 406 Not Acceptable to stop retries at once)",
		Source:  "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-retries (retries during 8 hours at 5 min, 10 min, 15 min, 1 h, 2 h, 4 h)",
	}
}

func (mailgunScheme) Samples() []Fixture {
	return []Fixture{
		{"mailgun", "delivered", "mailgun/delivered.json", "a receipt email delivered"},
		{"mailgun", "failed", "mailgun/failed.json", "a receipt email failed permanently (no such mailbox)"},
	}
}

func (mailgunScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json")
	return nil
}
