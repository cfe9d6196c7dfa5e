package verify

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// metaScheme: Meta's Graph API webhooks (WhatsApp Cloud API, Messenger,
// Instagram), X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body
// keyed with the app secret>, and the legacy X-Hub-Signature: sha1=<hex>.
// The three differ only in the body's "object" ("whatsapp_business_account",
// "page", "instagram"), so each is registered with its own. GitHub signs with
// the same header: a Meta delivery carries no X-GitHub-Event or
// X-GitHub-Delivery, and its body is Meta's {"object": ..., "entry": [...]}
// envelope; detection needs the body, so metaScheme is a RequestDetector.
//
// Identity: every message id of the POST (WhatsApp's wamid.… in
// entry[].changes[].value.messages[] and statuses[], Messenger's and
// Instagram's message mids in entry[].messaging[]), the first as the event id
// and all of them in Extra["event_ids"] when there are several; Meta batches
// up to 1000 updates in one POST.
type metaScheme struct {
	name, title, object string
	// handshakes: this scheme claims Meta's GET verification request, which
	// names no object (WhatsApp's, the first of the three).
	handshakes bool
	// horizon and source: the retry policy Meta publishes for the product.
	horizon time.Duration
	source  string
	newID   func() string
}

var (
	_ Scheme          = metaScheme{}
	_ Handshaker      = metaScheme{}
	_ RequestDetector = metaScheme{}
)

const (
	metaSig256 = "X-Hub-Signature-256"
	metaSig1   = "X-Hub-Signature"
	// metaUA is the User-Agent of Meta's event notifications.
	metaUA = "facebookexternalua"
)

var (
	whatsappScheme = metaScheme{name: "whatsapp", title: "WhatsApp", object: "whatsapp_business_account", handshakes: true,
		horizon: 7 * 24 * time.Hour,
		source:  "https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks (failed deliveries retried with decreasing frequency for up to 7 days; intervals fitted)",
		newID:   newWamid}
	messengerScheme = metaScheme{name: "messenger", title: "Messenger", object: "page",
		horizon: 36 * time.Hour,
		source:  "https://developers.facebook.com/docs/graph-api/webhooks/getting-started (failed notifications retried immediately, then with decreasing frequency over 36 hours; intervals fitted)",
		newID:   func() string { return "m_" + randomString(base62+"-_", 86) }}
	instagramScheme = metaScheme{name: "instagram", title: "Instagram", object: "instagram",
		horizon: 36 * time.Hour,
		source:  messengerScheme.source,
		newID:   func() string { return "aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA" + randomString(base62, 56) }}
)

// newWamid is a WhatsApp message id: "wamid." and base64 of the protobuf Meta
// encodes the chat's phone number and a message key in.
func newWamid() string {
	b := []byte("\x1c\x18\x0b" + "15550783881" + "\x15\x02\x00\x12\x18\x14")
	b = append(b, []byte(randomString("0123456789ABCDEF", 20))...)
	b = append(b, 0)
	return "wamid." + base64.StdEncoding.EncodeToString(b)
}

func (s metaScheme) Name() string                              { return s.name }
func (s metaScheme) Title() string                             { return s.title }
func (metaScheme) Tolerance() time.Duration                    { return 0 }
func (metaScheme) SignatureHeaders() []string                  { return []string{metaSig1, metaSig256} }
func (metaScheme) SignsURL() bool                              { return false }
func (metaScheme) BodyEdited(*message.Request) string          { return "" }
func (metaScheme) IdentityInBody() bool                        { return true }
func (metaScheme) IdentitySigned() bool                        { return true }
func (s metaScheme) NewEventID() string                        { return s.newID() }
func (metaScheme) MarkRetry(*message.Request, int)             {}
func (metaScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

// ResponseTimeout: Meta publishes none for webhooks.
func (metaScheme) ResponseTimeout() time.Duration { return 0 }

// Detects: headers alone cannot tell Meta from GitHub (or the three Meta
// products apart); DetectsRequest decides.
func (metaScheme) Detects(message.Headers) bool { return false }

// DetectsRequest: a POST signed with X-Hub-Signature(-256) or sent by
// facebookexternalua, with no GitHub header, whose body is Meta's envelope
// for this scheme's object; or, for WhatsApp, Meta's GET verification request.
func (s metaScheme) DetectsRequest(r *message.Request) bool {
	h := r.Headers
	if h.Has("X-GitHub-Event") || h.Has(githubDelivery) {
		return false
	}
	if metaHandshake(r) {
		return s.handshakes
	}
	if !h.Has(metaSig256) && !h.Has(metaSig1) && !strings.HasPrefix(strings.ToLower(h.Get("User-Agent")), metaUA) {
		return false
	}
	obj, ok := metaObject(r.Body)
	return ok && obj == s.object
}

// metaObject reads the "object" of Meta's {"object": …, "entry": [...]}
// envelope without building the entries (detection asks it of every
// signed request); ok is false for any other body.
func metaObject(body []byte) (string, bool) {
	var env struct {
		Object string            `json:"object"`
		Entry  []json.RawMessage `json:"entry"`
	}
	if json.Unmarshal(body, &env) != nil || env.Entry == nil {
		return "", false
	}
	return env.Object, true
}

// metaHandshake reports whether r is Meta's verification request: a GET
// with hub.mode=subscribe and a hub.challenge to echo.
func metaHandshake(r *message.Request) bool {
	if !strings.EqualFold(r.Method, "GET") {
		return false
	}
	_, q, _ := strings.Cut(r.Target, "?")
	v, err := url.ParseQuery(q)
	return err == nil && v.Get("hub.mode") == "subscribe" && v.Has("hub.challenge")
}

// Handshake: the GET Meta sends when the callback URL is set (and to
// re-verify it) is not an event.
func (s metaScheme) Handshake(r *message.Request) string {
	if !metaHandshake(r) {
		return ""
	}
	return "Meta's webhook verification request (GET hub.mode=subscribe, sent when the callback URL is set; the handler answers hub.challenge after checking hub.verify_token)"
}

// Challenge: Meta wants hub.challenge back as the bare body, not inside
// capture's JSON: see BareChallenge.
func (metaScheme) Challenge(*message.Request) string { return "" }

// maxMetaIDs is the most event ids a Meta delivery's identity lists: Meta
// batches at most 1000 updates in one POST.
const maxMetaIDs = 1000

var _ BareChallenger = metaScheme{}

// maxChallenge bounds the hub.challenge capture echoes: Meta's are short
// numbers; a longer one is no handshake of Meta's.
const maxChallenge = 256

// BareChallenge: Meta enables a callback URL only when its GET answers
// hub.challenge as the body.
func (metaScheme) BareChallenge(r *message.Request) string {
	if !metaHandshake(r) {
		return ""
	}
	_, q, _ := strings.Cut(r.Target, "?")
	v, _ := url.ParseQuery(q)
	if c := v.Get("hub.challenge"); len(c) <= maxChallenge {
		return c
	}
	return ""
}

// metaItems walks a Meta envelope: for each change its field and value,
// for each messaging item its kind and the object carrying its mid.
func metaItems(body []byte, visit func(kind string, ids []string)) {
	m := jsonObject(body)
	entries, _ := m["entry"].([]any)
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		changes, _ := entry["changes"].([]any)
		for _, c := range changes {
			ch, _ := c.(map[string]any)
			field := str(ch, "field")
			value, _ := ch["value"].(map[string]any)
			if field == "" {
				continue
			}
			msgs := stringsAt(value, "messages", "id")
			sts := stringsAt(value, "statuses", "id")
			switch {
			case len(msgs) > 0 || len(sts) > 0:
				if len(msgs) > 0 {
					visit(field, msgs)
				}
				if len(sts) > 0 {
					visit("statuses", sts)
				}
			case str(value, "id") != "":
				visit(field, []string{str(value, "id")})
			default:
				visit(field, nil)
			}
		}
		messaging, _ := entry["messaging"].([]any)
		for _, it := range messaging {
			item, _ := it.(map[string]any)
			kind, id := metaMessagingKind(item)
			if kind == "" {
				continue
			}
			var ids []string
			if id != "" {
				ids = []string{id}
			}
			visit(kind, ids)
		}
	}
}

// metaMessagingKind names a Messenger/Instagram messaging item by the
// webhook field it is delivered for, and returns its message id.
func metaMessagingKind(item map[string]any) (string, string) {
	for _, k := range []struct{ key, field string }{
		{"message", "messages"}, {"postback", "messaging_postbacks"}, {"reaction", "message_reactions"},
		{"read", "message_reads"}, {"delivery", "message_deliveries"}, {"referral", "messaging_referrals"},
		{"optin", "messaging_optins"},
	} {
		if v, ok := item[k.key].(map[string]any); ok {
			field := k.field
			if b, _ := v["is_echo"].(bool); b {
				field = "message_echoes"
			}
			return field, str(v, "mid")
		}
	}
	return "", ""
}

// stringsAt returns the string field key of each object in m[list].
func stringsAt(m map[string]any, list, key string) []string {
	items, _ := m[list].([]any)
	var out []string
	for _, it := range items {
		if o, ok := it.(map[string]any); ok && str(o, key) != "" {
			out = append(out, str(o, key))
		}
	}
	return out
}

// metaIDs returns r's message ids in body order, each once.
func metaIDs(r *message.Request) []string {
	var ids []string
	seen := map[string]bool{}
	metaItems(r.Body, func(_ string, got []string) {
		for _, id := range got {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	})
	return ids
}

func (s metaScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: s.name}
	if metaHandshake(r) {
		id.EventType = "hub.subscribe"
		return id
	}
	var kinds []string
	seen := map[string]bool{}
	metaItems(r.Body, func(kind string, _ []string) {
		if !seen[kind] {
			seen[kind] = true
			kinds = append(kinds, kind)
		}
	})
	id.EventType = strings.Join(kinds, ",")
	ids := metaIDs(r)
	if len(ids) > 0 {
		id.EventID = ids[0]
	}
	if len(ids) > maxMetaIDs {
		// A body claiming more is not Meta's; its identity stays bounded.
		ids = ids[:maxMetaIDs]
	}
	if len(ids) > 1 {
		id.Extra = map[string]string{ExtraEventIDs: strings.Join(ids, " ")}
	}
	if st := metaStatuses(r.Body); st != "" {
		// A sent message's statuses (sent, delivered, read) share its
		// wamid: the status tells them apart.
		if id.Extra == nil {
			id.Extra = map[string]string{}
		}
		id.Extra["status"] = st
	}
	return id
}

// metaStatuses lists, comma-separated and each once, the status of every
// entry[].changes[].value.statuses[] item of a WhatsApp body.
func metaStatuses(body []byte) string {
	var env struct {
		Entry []struct {
			Changes []struct {
				Value struct {
					Statuses []struct {
						Status string `json:"status"`
					} `json:"statuses"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	var out []string
	for _, e := range env.Entry {
		for _, c := range e.Changes {
			for _, s := range c.Value.Statuses {
				if s.Status != "" && !slices.Contains(out, s.Status) {
					out = append(out, s.Status)
				}
			}
		}
	}
	return strings.Join(out, ",")
}

func (s metaScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if metaHandshake(r) && !r.Headers.Has(metaSig256) && !r.Headers.Has(metaSig1) {
		// Meta never signs its GET: "invalid" would read as tampering.
		return Result{}, fmt.Errorf("%w: Meta's webhook verification request (GET hub.mode=subscribe), which Meta never signs; the handler checks hub.verify_token", ErrUnsigned)
	}
	// As GitHub: the SHA-256 header wins; the SHA-1 one is legacy.
	if r.Headers.Has(metaSig256) {
		sig, bad := parseGitHubSignature(metaSig256, r.Headers.Get(metaSig256), "sha256")
		if bad != "" {
			return invalid(s.name, "sha256", bad), nil
		}
		if want := macSHA256([]byte(secret), r.Body); !equalHex(sig, want) {
			return invalid(s.name, "sha256", mismatch([]string{sig}, want, false)), nil
		}
		return valid(s.name, "sha256", time.Time{}, opt.Now), nil
	}
	if r.Headers.Has(metaSig1) {
		sig, bad := parseGitHubSignature(metaSig1, r.Headers.Get(metaSig1), "sha1")
		if bad != "" {
			return invalid(s.name, "sha1", bad), nil
		}
		if want := macSHA1([]byte(secret), r.Body); !equalHex(sig, want) {
			return invalid(s.name, "sha1", mismatch([]string{sig}, want, false)), nil
		}
		return valid(s.name, "sha1", time.Time{}, opt.Now), nil
	}
	return missing(s.name, metaSig256), nil
}

// Sign writes both headers, as Meta sends them; a request that carried only
// the SHA-256 one keeps only that. Meta's GET verification request is not
// signed, and a copy of it is not either.
func (metaScheme) Sign(r *message.Request, secret string, _ Options) error {
	if metaHandshake(r) && !r.Headers.Has(metaSig256) && !r.Headers.Has(metaSig1) {
		return nil
	}
	if r.Headers.Has(metaSig1) || !r.Headers.Has(metaSig256) {
		r.Headers = r.Headers.Set(metaSig1, "sha1="+hex.EncodeToString(macSHA1([]byte(secret), r.Body)))
	}
	r.Headers = r.Headers.Set(metaSig256, "sha256="+hex.EncodeToString(macSHA256([]byte(secret), r.Body)))
	return nil
}

// Reidentify gives every message of the POST a fresh id, newID to the
// first: a handler that dedupes on the message id would take a fresh event
// whose second message kept its id for a partial duplicate.
func (s metaScheme) Reidentify(r *message.Request, newID string) error {
	ids := metaIDs(r)
	if len(ids) == 0 {
		if metaHandshake(r) {
			return errors.New("Meta's verification request carries no event")
		}
		return errors.New("body has no message id (entry[].changes[].value.messages[].id, statuses[].id or entry[].messaging[].message.mid)")
	}
	repl := map[string]string{ids[0]: newID}
	for _, id := range ids[1:] {
		repl[id] = s.newID()
	}
	b, _, err := replaceStrings(r.Body, repl)
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

// Retries: Meta publishes the horizon, not the intervals: 12 retries,
// geometric from 1 minute to the horizon.
func (s metaScheme) Retries() Schedule {
	return Schedule{
		Retries: geometric(time.Minute, s.horizon, 12),
		Final:   "notification dropped",
		Source:  s.source,
	}
}

func (s metaScheme) Samples() []Fixture {
	switch s.name {
	case "whatsapp":
		return []Fixture{
			{"whatsapp", "messages", "whatsapp/messages.json", "a text message from a customer (Cloud API, field messages)"},
			{"whatsapp", "statuses", "whatsapp/statuses.json", "a sent message delivered (field messages, statuses[])"},
			{"whatsapp", "messages.batch", "whatsapp/messages.batch.json", "one POST with three messages (text, image, interactive reply), each its own wamid"},
		}
	case "messenger":
		return []Fixture{
			{"messenger", "messages", "messenger/messages.json", "a text message to a Facebook Page"},
			{"messenger", "messaging_postbacks", "messenger/messaging_postbacks.json", "a Get Started button tapped"},
		}
	}
	return []Fixture{
		{"instagram", "messages", "instagram/messages.json", "a direct message to an Instagram professional account"},
	}
}

// Sample dresses r as Meta sends an event notification.
func (metaScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r,
		"User-Agent", metaUA,
		"Accept", "*/*",
		"Accept-Encoding", "deflate, gzip",
		"Content-Type", "application/json")
	return nil
}

// geometric returns n offsets growing geometrically from first to last,
// rounded to the second: a timetable fitted to a published horizon.
func geometric(first, last time.Duration, n int) []time.Duration {
	if n < 2 {
		return []time.Duration{last}
	}
	out := make([]time.Duration, n)
	ratio := float64(last) / float64(first)
	for i := range out {
		f := float64(first) * math.Pow(ratio, float64(i)/float64(n-1))
		out[i] = time.Duration(f).Round(time.Second)
	}
	out[n-1] = last
	return out
}
