package verify

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// sendgridScheme is SendGrid's signed Event Webhook:
// X-Twilio-Email-Event-Webhook-Signature is the base64 DER ECDSA P-256
// signature (SHA-256) of X-Twilio-Email-Event-Webhook-Timestamp followed by
// the body, made with SendGrid's private key; handlers verify it with the
// public key Mail Settings shows (base64 DER). hookreplay verifies with that
// public key and signs only with a test key pair's private key (KeyPair).
type sendgridScheme struct{}

var (
	_ Scheme  = sendgridScheme{}
	_ KeyPair = sendgridScheme{}
)

const (
	sendgridSig = "X-Twilio-Email-Event-Webhook-Signature"
	sendgridTS  = "X-Twilio-Email-Event-Webhook-Timestamp"
)

func (sendgridScheme) Name() string                       { return "sendgrid" }
func (sendgridScheme) Title() string                      { return "SendGrid Event Webhook" }
func (sendgridScheme) SignatureHeaders() []string         { return []string{sendgridSig, sendgridTS} }
func (sendgridScheme) SignsURL() bool                     { return false }
func (sendgridScheme) BodyEdited(*message.Request) string { return "" }
func (sendgridScheme) IdentityInBody() bool               { return true }
func (sendgridScheme) IdentitySigned() bool               { return true }
func (sendgridScheme) MarkRetry(*message.Request, int)    {}
func (sendgridScheme) Challenge(*message.Request) string  { return "" }
func (sendgridScheme) ResponseTimeout() time.Duration     { return 0 }
func (sendgridScheme) NewEventID() string                 { return randomString(base62, 22) }
func (sendgridScheme) Detects(h message.Headers) bool     { return h.Has(sendgridSig) }

// Tolerance: SendGrid's libraries check the signature, not the
// timestamp's age, so neither does hookreplay, and SignedAt reports no
// timestamp (check sends no hour-old copy a correct handler would accept).
func (sendgridScheme) Tolerance() time.Duration                    { return 0 }
func (sendgridScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

// sendgridEvents decodes the body: a JSON array of events (one object is
// taken as one event).
func sendgridEvents(body []byte) []map[string]any {
	var events []map[string]any
	if json.Unmarshal(body, &events) == nil {
		return events
	}
	if m := jsonObject(body); m != nil {
		return []map[string]any{m}
	}
	return nil
}

func (sendgridScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: "sendgrid"}
	var ids []string
	for _, e := range sendgridEvents(r.Body) {
		if v := str(e, "sg_event_id"); v != "" {
			ids = append(ids, v)
		}
		if id.EventType == "" {
			id.EventType = str(e, "event")
		}
	}
	if len(ids) > 0 {
		id.EventID = ids[0]
	}
	if len(ids) > 1 {
		id.Extra = map[string]string{ExtraEventIDs: strings.Join(ids, " ")}
	}
	return id
}

// Reidentify gives the first event the id newID and every other event of
// the batch a fresh one, rewriting only those strings.
func (s sendgridScheme) Reidentify(r *message.Request, newID string) error {
	ids := strings.Fields(strings.Join(EventIDs(s.Identity(r).EventID, s.Identity(r).Extra), " "))
	if len(ids) == 0 {
		return errors.New("body has no sg_event_id")
	}
	repl := map[string]string{ids[0]: newID}
	for _, id := range ids[1:] {
		repl[id] = s.NewEventID()
	}
	b, _, err := replaceStrings(r.Body, repl)
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

func (sendgridScheme) CanSign(secret string) bool {
	priv, _, err := ecdsaKey(secret)
	return err == nil && priv != nil
}

func sendgridDigest(ts string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(ts))
	h.Write(body)
	return h.Sum(nil)
}

func (sendgridScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	_, pub, err := ecdsaKey(secret)
	if err != nil {
		return Result{}, err
	}
	for _, h := range []string{sendgridSig, sendgridTS} {
		if !r.Headers.Has(h) {
			return missing("sendgrid", h), nil
		}
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(r.Headers.Get(sendgridSig)))
	if err != nil {
		return invalid("sendgrid", "ecdsa", "malformed "+sendgridSig+" header: not base64"), nil
	}
	if !ecdsa.VerifyASN1(pub, sendgridDigest(r.Headers.Get(sendgridTS), r.Body), sig) {
		return invalid("sendgrid", "ecdsa", "signature mismatch"), nil
	}
	return valid("sendgrid", "ecdsa", time.Time{}, opt.Now), nil
}

func (sendgridScheme) Sign(r *message.Request, secret string, opt Options) error {
	priv, _, err := ecdsaKey(secret)
	if err != nil {
		return err
	}
	if priv == nil {
		return publicKeyOnly("SendGrid")
	}
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	sig, err := ecdsa.SignASN1(rand.Reader, priv, sendgridDigest(ts, r.Body))
	if err != nil {
		return err
	}
	r.Headers = r.Headers.Set(sendgridSig, base64.StdEncoding.EncodeToString(sig))
	r.Headers = r.Headers.Set(sendgridTS, ts)
	return nil
}

// Retries: a POST answered with anything but a 2xx is retried "for up to 24
// hours"; events still undelivered then are dropped. Intervals not
// published: 10 retries modelled, the first after 1 minute, the last at 24 h.
func (sendgridScheme) Retries() Schedule {
	return Schedule{
		Retries: fittedBackoff(10, time.Minute, 24*time.Hour),
		Final:   "events dropped",
		Source:  "https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook (retried for up to 24 hours; count and intervals modelled)",
	}
}

func (sendgridScheme) Samples() []Fixture {
	return []Fixture{
		{"sendgrid", "delivered", "sendgrid/delivered.json", "one POST with three events of one message: processed, delivered, open"},
		{"sendgrid", "bounce", "sendgrid/bounce.json", "a hard bounce of a receipt email"},
	}
}

func (sendgridScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json", "User-Agent", "SendGrid Event API")
	return nil
}
