package verify

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// standardScheme is Standard Webhooks (https://www.standardwebhooks.com) and
// Svix, which differ only in the header prefix: <p>-id, <p>-timestamp,
// <p>-signature: "v1,<base64> v1,<base64>", base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>" keyed with the base64-decoded secret after whsec_.
//
// Senders built on Svix (Resend, Clerk) sign exactly as Svix does; they are
// shown by their own names, told apart by the body (sender), and verified
// and signed as Svix.
type standardScheme struct {
	name   string // "standard", "svix", "resend", "clerk"
	title  string // "Standard Webhooks", "Svix", "Resend", "Clerk"
	prefix string // "webhook" or "svix"
	// sender names the Svix customer whose body shape this scheme claims
	// ("" for plain Svix and Standard Webhooks).
	sender string
}

var (
	_ Scheme          = standardScheme{}
	_ RequestDetector = standardScheme{}
)

// svixSender names the Svix customer whose events body is: Clerk's events
// are {"object":"event", "type":…, "data":…}; Resend's have types
// email.*, contact.* or domain.* and no "object". "" for any other.
func svixSender(body []byte) string {
	m := jsonObject(body)
	t := str(m, "type")
	switch {
	case m == nil || t == "":
		return ""
	case str(m, "object") == "event" && m["data"] != nil:
		return "clerk"
	case m["object"] == nil && m["data"] != nil &&
		(strings.HasPrefix(t, "email.") || strings.HasPrefix(t, "contact.") || strings.HasPrefix(t, "domain.")):
		return "resend"
	}
	return ""
}

// DetectsRequest: Svix's headers, and for a Svix customer its body shape
// (plain Svix claims what no customer does).
func (s standardScheme) DetectsRequest(r *message.Request) bool {
	if !s.Detects(r.Headers) {
		return false
	}
	if s.prefix != "svix" {
		return true
	}
	return svixSender(r.Body) == s.sender
}

func (s standardScheme) Name() string                     { return s.name }
func (s standardScheme) Title() string                    { return s.title }
func (standardScheme) Tolerance() time.Duration           { return 300 * time.Second }
func (standardScheme) SignsURL() bool                     { return false }
func (standardScheme) BodyEdited(*message.Request) string { return "" }
func (standardScheme) IdentityInBody() bool               { return false }
func (standardScheme) NewEventID() string                 { return "msg_" + randomString(base62, 27) }
func (standardScheme) ResponseTimeout() time.Duration     { return 15 * time.Second }
func (standardScheme) MarkRetry(*message.Request, int)    {}
func (standardScheme) Challenge(*message.Request) string  { return "" }

// IdentitySigned: the id header is part of the signed string.
func (standardScheme) IdentitySigned() bool { return true }

// Retries: Svix publishes its timetable exactly: after the first attempt,
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each counted from the
// failure of the attempt before, so the last retry comes 27 h 35 min 5 s
// after the first attempt. The Standard Webhooks specification leaves the
// timetable to the sender, and hookreplay models none for it (senders built
// on Svix, which sign svix-* headers, get Svix's).
func (s standardScheme) Retries() Schedule {
	if s.prefix != "svix" {
		return Schedule{}
	}
	var offsets []time.Duration
	var at time.Duration
	for _, d := range []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour} {
		at += d
		offsets = append(offsets, at)
	}
	sch := Schedule{
		Retries: offsets,
		Final:   "message marked Failed for the endpoint (operational webhook message.attempt.exhausted); an endpoint failing for 5 days is disabled",
		Source:  "https://docs.svix.com/retries (immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, each after the previous failure)",
	}
	switch s.sender {
	case "resend":
		sch.Final = "message marked failed; it can be replayed from the dashboard"
		sch.Source = "https://resend.com/docs/webhooks/retries-and-replays (Svix's timetable: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h)"
	case "clerk":
		sch.Source = "https://clerk.com/docs/webhooks/overview (delivered by Svix) and " + sch.Source
	}
	return sch
}

// Detects: Svix sends svix-* headers (and may add the webhook-* ones too),
// so a request with svix-id is Svix's; Standard Webhooks needs both its id
// and its signature header.
func (s standardScheme) Detects(h message.Headers) bool {
	if s.prefix == "svix" {
		return h.Has("svix-id")
	}
	return h.Has(s.idH()) && h.Has(s.sigH()) && !h.Has("svix-id")
}
func (s standardScheme) idH() string  { return s.prefix + "-id" }
func (s standardScheme) tsH() string  { return s.prefix + "-timestamp" }
func (s standardScheme) sigH() string { return s.prefix + "-signature" }
func (s standardScheme) SignatureHeaders() []string {
	return []string{s.idH(), s.tsH(), s.sigH()}
}

func (s standardScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	return Identity{Provider: s.name, EventID: r.Headers.Get(s.idH()), EventType: str(m, "type")}
}

func (s standardScheme) SignedAt(r *message.Request) (time.Time, bool) {
	return parseUnix(r.Headers.Get(s.tsH()))
}

// standardKey decodes a Standard Webhooks secret: base64 after an optional whsec_.
func standardKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(secret), "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: secret is not whsec_ base64", ErrSecret)
	}
	return key, nil
}

// standardSigs parses a signature header into its v1 signatures and counts
// the v1a (ed25519) ones. Entries are space separated "version,signature";
// anything else is ignored, as the reference libraries do.
func standardSigs(h string) (v1 []string, v1a int) {
	for _, e := range strings.Fields(h) {
		ver, sig, ok := strings.Cut(e, ",")
		if !ok {
			continue
		}
		switch ver {
		case "v1":
			v1 = append(v1, sig)
		case "v1a":
			v1a++
		}
	}
	return v1, v1a
}

func standardMAC(key []byte, id, ts string, body []byte) []byte {
	return macSHA256(key, []byte(id+"."+ts+"."), body)
}

func (s standardScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	key, err := standardKey(secret)
	if err != nil {
		return Result{}, err
	}
	for _, h := range []string{s.idH(), s.tsH(), s.sigH()} {
		if !r.Headers.Has(h) {
			return missing(s.name, h), nil
		}
	}
	tsRaw := strings.TrimSpace(r.Headers.Get(s.tsH()))
	t, ok := parseUnix(tsRaw)
	if !ok {
		return invalid(s.name, "v1", "malformed "+s.tsH()+" header: not a unix timestamp"), nil
	}
	v1, v1a := standardSigs(r.Headers.Get(s.sigH()))
	if len(v1) == 0 {
		if v1a > 0 {
			return invalid(s.name, "v1a", "ed25519 signatures (v1a) are not supported"), nil
		}
		return invalid(s.name, "v1", "no v1 signature in "+s.sigH()+" header"), nil
	}
	// Sign over the timestamp as the reference libraries do: its decimal value.
	want := standardMAC(key, r.Headers.Get(s.idH()), strconv.FormatInt(t.Unix(), 10), r.Body)
	match := false
	for _, sig := range v1 {
		if equalBase64(sig, want) {
			match = true
		}
	}
	if !match {
		res := invalid(s.name, "v1", mismatch(v1, want, true))
		res.SignedAt, res.CheckedAt = t, opt.Now
		return res, nil
	}
	return checkAge(valid(s.name, "v1", t, opt.Now), t, opt.Now, tolOr(opt, s.Tolerance()), false), nil
}

func (s standardScheme) Sign(r *message.Request, secret string, opt Options) error {
	key, err := standardKey(secret)
	if err != nil {
		return err
	}
	id := r.Headers.Get(s.idH())
	if id == "" {
		id = s.NewEventID()
		r.Headers = r.Headers.Set(s.idH(), id)
	}
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	r.Headers = r.Headers.Set(s.tsH(), ts)
	r.Headers = r.Headers.Set(s.sigH(), "v1,"+base64.StdEncoding.EncodeToString(standardMAC(key, id, ts, r.Body)))
	return nil
}

func (s standardScheme) Reidentify(r *message.Request, newID string) error {
	r.Headers = r.Headers.Set(s.idH(), newID)
	return nil
}

func (s standardScheme) Samples() []Fixture {
	switch s.name {
	case "svix":
		return []Fixture{{s.name, "invoice.paid", s.name + "/invoice.paid.json", s.title + " invoice.paid"}}
	case "clerk":
		return []Fixture{{s.name, "user.created", s.name + "/user.created.json", "a user signed up with a verified email"}}
	case "resend":
		return []Fixture{
			{s.name, "email.delivered", s.name + "/email.delivered.json", "a receipt email delivered to its recipient"},
			{s.name, "email.bounced", s.name + "/email.bounced.json", "a receipt email bounced (mailbox does not exist)"},
		}
	}
	return []Fixture{
		{s.name, "invoice.paid", s.name + "/invoice.paid.json", s.title + " invoice.paid"},
		{s.name, "user.created", s.name + "/user.created.json", "Clerk user.created: a user signed up with a verified email"},
	}
}

func (s standardScheme) Sample(r *message.Request, _, id string, _ time.Time) error {
	ua := "hookreplay-standard-webhooks/1.0"
	if s.prefix == "svix" {
		ua = "Svix-Webhooks/1.24.0 (sender-hookreplay; +https://www.svix.com/http-sender/)"
	}
	addHeaders(r,
		"Content-Type", "application/json",
		"User-Agent", ua,
		s.idH(), id)
	return nil
}
