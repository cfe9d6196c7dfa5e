package verify

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// calendlyScheme: Calendly-Webhook-Signature: t=<unix>,v1=<hex>, hex
// HMAC-SHA256 of "<t>.<body>" keyed with the webhook signing key. A
// delivery carries no event id: the invitee it is about (the last segment
// of payload.uri) is what handlers key on.
type calendlyScheme struct{}

var _ Scheme = calendlyScheme{}

const calendlySig = "Calendly-Webhook-Signature"

func (calendlyScheme) Name() string                       { return "calendly" }
func (calendlyScheme) Title() string                      { return "Calendly" }
func (calendlyScheme) Detects(h message.Headers) bool     { return h.Has(calendlySig) }
func (calendlyScheme) SignatureHeaders() []string         { return []string{calendlySig} }
func (calendlyScheme) SignsURL() bool                     { return false }
func (calendlyScheme) BodyEdited(*message.Request) string { return "" }
func (calendlyScheme) IdentityInBody() bool               { return true }
func (calendlyScheme) IdentitySigned() bool               { return true }
func (calendlyScheme) NewEventID() string                 { return newUUID() }
func (calendlyScheme) ResponseTimeout() time.Duration     { return 0 }
func (calendlyScheme) MarkRetry(*message.Request, int)    {}
func (calendlyScheme) Challenge(*message.Request) string  { return "" }

// Tolerance: Calendly's docs verify with a 3-minute tolerance.
func (calendlyScheme) Tolerance() time.Duration { return 3 * time.Minute }

// Retries: Calendly publishes no retry timetable; none is modelled.
func (calendlyScheme) Retries() Schedule { return Schedule{} }

func calendlyURI(body []byte) string {
	p, _ := jsonObject(body)["payload"].(map[string]any)
	return str(p, "uri")
}

func (calendlyScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: "calendly", EventType: str(jsonObject(r.Body), "event")}
	if u := calendlyURI(r.Body); u != "" {
		id.EventID = u[strings.LastIndex(u, "/")+1:]
		id.Extra = map[string]string{"uri": u}
	}
	return id
}

// calendlySig parses "t=…,v1=…": the timestamp and every v1.
func calendlyParse(h string) (ts string, v1 []string) {
	for _, part := range strings.Split(h, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = append(v1, v)
		}
	}
	return ts, v1
}

func (calendlyScheme) SignedAt(r *message.Request) (time.Time, bool) {
	ts, _ := calendlyParse(r.Headers.Get(calendlySig))
	return parseUnix(ts)
}

func (s calendlyScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(calendlySig) {
		return missing("calendly", calendlySig), nil
	}
	ts, v1 := calendlyParse(r.Headers.Get(calendlySig))
	t, ok := parseUnix(ts)
	if !ok || len(v1) == 0 {
		return invalid("calendly", "v1", "malformed "+calendlySig+" header: want t=…,v1=…"), nil
	}
	want := macSHA256([]byte(secret), []byte(ts+"."), r.Body)
	for _, sig := range v1 {
		if equalHex(sig, want) {
			return checkAge(valid("calendly", "v1", t, opt.Now), t, opt.Now, tolOr(opt, s.Tolerance()), true), nil
		}
	}
	res := invalid("calendly", "v1", mismatch(v1, want, false))
	res.SignedAt, res.CheckedAt = t, opt.Now
	return res, nil
}

func (calendlyScheme) Sign(r *message.Request, secret string, opt Options) error {
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	r.Headers = r.Headers.Set(calendlySig, "t="+ts+",v1="+hex.EncodeToString(macSHA256([]byte(secret), []byte(ts+"."), r.Body)))
	return nil
}

// Reidentify gives the invitee a fresh id in payload.uri, the only bytes
// that change.
func (s calendlyScheme) Reidentify(r *message.Request, newID string) error {
	u := calendlyURI(r.Body)
	if u == "" {
		return errors.New("body has no payload.uri")
	}
	b, _, err := replaceStrings(r.Body, map[string]string{u: u[:strings.LastIndex(u, "/")+1] + newID})
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

func (calendlyScheme) Samples() []Fixture {
	return []Fixture{
		{"calendly", "invitee.created", "calendly/invitee.created.json", "a 30-minute intro call booked"},
		{"calendly", "invitee.canceled", "calendly/invitee.canceled.json", "that call canceled by the invitee"},
	}
}

func (calendlyScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json; charset=utf-8")
	return nil
}
