package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// birdScheme: Bird's webhook subscriptions (the Notifications API),
// messagebird-signature: base64 HMAC-SHA256 keyed with the subscription's
// signing key of "<messagebird-request-timestamp>\n<URL>\n<SHA-256 of the
// body, the 32 raw bytes>". The URL is the one the subscription was created
// with, so a copy sent elsewhere needs re-signing, as Twilio's does.
//
// Identity: the body's payload.id (the message or interaction), type the
// body's "event" (sms.inbound, whatsapp.outbound, …); the request id
// (messagebird-request-id) is renewed with it.
type birdScheme struct{}

var _ Scheme = birdScheme{}

const (
	birdSig   = "messagebird-signature"
	birdTS    = "messagebird-request-timestamp"
	birdReqID = "messagebird-request-id"
)

func (birdScheme) Name() string                       { return "bird" }
func (birdScheme) Title() string                      { return "Bird" }
func (birdScheme) Detects(h message.Headers) bool     { return h.Has(birdSig) && h.Has(birdTS) }
func (birdScheme) SignatureHeaders() []string         { return []string{birdTS, birdSig} }
func (birdScheme) SignsURL() bool                     { return true }
func (birdScheme) BodyEdited(*message.Request) string { return "" }
func (birdScheme) IdentityInBody() bool               { return true }
func (birdScheme) IdentitySigned() bool               { return true }
func (birdScheme) NewEventID() string                 { return newUUID() }
func (birdScheme) MarkRetry(*message.Request, int)    {}
func (birdScheme) Challenge(*message.Request) string  { return "" }

// Tolerance: Bird signs a timestamp but sets no window (integrators report
// retries arriving with the first attempt's timestamp, hours old); none is
// applied unless asked for.
func (birdScheme) Tolerance() time.Duration { return 0 }

// ResponseTimeout: Bird publishes none.
func (birdScheme) ResponseTimeout() time.Duration { return 0 }

var _ Refuser = birdScheme{}

// LibraryRefusal: a handler written from Bird's sample code verifies
// against the URL it is given, often a fixed public one, while hookreplay
// signs each copy for the URL it sends it to.
func (birdScheme) LibraryRefusal(*message.Request) string {
	return "it verifies against another URL than the one the copy was sent to (hookreplay signs each copy for the URL it sends it to, as Bird signs the subscription's; " +
		"a handler that verifies against a fixed public URL, or rebuilds it from X-Forwarded-* headers, computes another: let it build the URL from the request, or have the copies signed for that URL)"
}

func (birdScheme) SignedAt(r *message.Request) (time.Time, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(r.Headers.Get(birdTS)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

func birdMAC(secret, ts, rawURL string, body []byte) []byte {
	sum := sha256.Sum256(body)
	return macSHA256([]byte(secret), []byte(ts+"\n"+rawURL+"\n"), sum[:])
}

func (b birdScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(birdSig) {
		return missing("bird", birdSig), nil
	}
	ts := r.Headers.Get(birdTS)
	at, ok := b.SignedAt(r)
	if !ok {
		return invalid("bird", "", "malformed "+birdTS+" header: want unix seconds"), nil
	}
	// Bird's sample code base64-decodes the header and compares bytes.
	got, ok := decodeBase64(strings.TrimSpace(r.Headers.Get(birdSig)))
	if !ok {
		return invalid("bird", "", "malformed "+birdSig+" header: signature is not base64"), nil
	}
	urls := twilioURLs(r, opt.URL)
	if len(urls) == 0 {
		return Result{}, &OptionError{Field: "URL", Provider: "bird", Detail: "the request has no Host header"}
	}
	for _, u := range urls {
		if hmac.Equal(got, birdMAC(secret, ts, u, r.Body)) {
			res := valid("bird", "sha256", at, opt.Now)
			if opt.Tolerance > 0 {
				res = checkAge(res, at, opt.Now, opt.Tolerance, false)
			}
			return res, nil
		}
	}
	if birdLegacy(r, secret, ts, got) {
		res := invalid("bird", "legacy", "MessageBird's legacy signature (over the timestamp, the sorted query string and the body's SHA-256, not the URL): "+
			"hookreplay verifies and signs Bird's current scheme only; the secret is right")
		res.SignedAt, res.CheckedAt = at, opt.Now
		return res, nil
	}
	reason := "signature mismatch"
	if opt.URL == "" {
		reason += " (Bird signs the full URL the webhook subscription was created with, which was not given)"
	}
	res := invalid("bird", "sha256", reason)
	res.SignedAt, res.CheckedAt = at, opt.Now
	return res, nil
}

// birdLegacy reports whether got is MessageBird's legacy signature of r:
// HMAC-SHA256 of "<timestamp>\n<query parameters sorted by name, encoded as
// Node's querystring>\n<SHA-256 of the body>", as MessageBird's Node SDK
// (messagebird 4.x, lib/signature.js, deprecated) computes it.
func birdLegacy(r *message.Request, secret, ts string, got []byte) bool {
	_, q, _ := strings.Cut(r.Target, "?")
	v, err := url.ParseQuery(q)
	if err != nil {
		return false
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		val := v.Get(k)
		if k == "statusDatetime" {
			val = strings.ReplaceAll(val, " ", "+") // the SDK undoes a '+' read as a space
		}
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(nodeQueryEscape(k) + "=" + nodeQueryEscape(val))
	}
	sum := sha256.Sum256(r.Body)
	return hmac.Equal(got, macSHA256([]byte(secret), []byte(ts+"\n"+b.String()+"\n"), sum[:]))
}

// nodeQueryEscape escapes s as Node's querystring.escape does: everything
// but letters, digits and -_.!~*'() as %XX.
func nodeQueryEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// Sign writes the timestamp at opt.Now and the signature over the URL the
// copy is sent to (opt.URL, else the request's own Host and target on https).
func (birdScheme) Sign(r *message.Request, secret string, opt Options) error {
	urls := twilioURLs(r, opt.URL)
	if len(urls) == 0 {
		return &OptionError{Field: "URL", Provider: "bird"}
	}
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	r.Headers = r.Headers.Set(birdTS, ts)
	r.Headers = r.Headers.Set(birdSig, base64.StdEncoding.EncodeToString(birdMAC(secret, ts, urls[0], r.Body)))
	return nil
}

func (birdScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	payload, _ := m["payload"].(map[string]any)
	id := Identity{Provider: "bird", EventID: str(payload, "id"), EventType: str(m, "event")}
	if st := str(payload, "status"); st != "" && id.EventType != "" {
		// A message's status updates share its id: the status tells them apart.
		id.Extra = map[string]string{"status": st}
	}
	if rid := r.Headers.Get(birdReqID); rid != "" {
		if id.Extra == nil {
			id.Extra = map[string]string{}
		}
		id.Extra["request_id"] = rid
	}
	return id
}

// Reidentify gives the payload the id newID, rewriting only that string,
// and the delivery a fresh messagebird-request-id when it had one.
func (birdScheme) Reidentify(r *message.Request, newID string) error {
	m := jsonObject(r.Body)
	payload, _ := m["payload"].(map[string]any)
	old := str(payload, "id")
	if old == "" {
		return errors.New(`body has no payload.id`)
	}
	b, n, err := replaceStrings(r.Body, map[string]string{old: newID})
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("payload.id not found in the body")
	}
	r.Body = b
	if r.Headers.Has(birdReqID) {
		r.Headers = r.Headers.Set(birdReqID, newUUID())
	}
	return nil
}

// Retries: Bird's docs publish no retry timetable; integrators report the
// retries ending after about 24 hours: 10 retries fitted from 1 minute to
// 24 h.
func (birdScheme) Retries() Schedule {
	return Schedule{
		Retries: geometric(time.Minute, 24*time.Hour, 10),
		Final:   "delivery marked failed in the subscription's logs",
		Source:  "https://docs.bird.com/api/notifications-api/api-reference/webhook-subscriptions (no retry timetable published; 24 h modelled, 10 geometric retries)",
	}
}

func (birdScheme) Samples() []Fixture {
	return []Fixture{
		{"bird", "sms.inbound", "bird/sms.inbound.json", "an SMS received on a Bird number"},
		{"bird", "whatsapp.inbound", "bird/whatsapp.inbound.json", "a WhatsApp text received through Bird's channels"},
		{"bird", "sms.outbound", "bird/sms.outbound.json", "a sent SMS delivered (status update of an outbound message)"},
	}
}

// Sample dresses r as Bird's webhook dispatcher sends it: a request id per
// delivery, timestamp and signature added by Sign.
func (birdScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r,
		"Content-Type", "application/json",
		birdReqID, newUUID())
	return nil
}
