package verify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// hubspotScheme is HubSpot's webhooks, signature v3:
// X-HubSpot-Signature-v3 is the base64 HMAC-SHA256, keyed with the app's
// client secret, of method + URI + body + X-HubSpot-Request-Timestamp
// (milliseconds). The URI is the full URL HubSpot was configured with, so a
// copy sent elsewhere needs re-signing. Older deliveries carry
// X-HubSpot-Signature (v1: hex SHA-256 of secret + body; v2: of secret +
// method + URI + body) as X-HubSpot-Signature-Version says.
type hubspotScheme struct{}

var _ Scheme = hubspotScheme{}

const (
	hubspotSig3    = "X-HubSpot-Signature-v3"
	hubspotTS      = "X-HubSpot-Request-Timestamp"
	hubspotSig     = "X-HubSpot-Signature"
	hubspotVersion = "X-HubSpot-Signature-Version"
)

func (hubspotScheme) Name() string  { return "hubspot" }
func (hubspotScheme) Title() string { return "HubSpot" }
func (hubspotScheme) SignatureHeaders() []string {
	return []string{hubspotSig, hubspotVersion, hubspotSig3, hubspotTS}
}
func (hubspotScheme) SignsURL() bool                     { return true }
func (hubspotScheme) BodyEdited(*message.Request) string { return "" }
func (hubspotScheme) IdentityInBody() bool               { return true }
func (hubspotScheme) IdentitySigned() bool               { return true }
func (hubspotScheme) MarkRetry(*message.Request, int)    {}
func (hubspotScheme) Challenge(*message.Request) string  { return "" }
func (hubspotScheme) Detects(h message.Headers) bool {
	return h.Has(hubspotSig3) || h.Has(hubspotSig)
}

// Tolerance: HubSpot's docs and its Node SDK reject a v3 timestamp older
// than 5 minutes (the SDK accepts one from the future).
func (hubspotScheme) Tolerance() time.Duration { return 300 * time.Second }

// ResponseTimeout: a notification not answered within 5 seconds failed.
func (hubspotScheme) ResponseTimeout() time.Duration { return 5 * time.Second }

// NewEventID: HubSpot's event ids are integers.
func (hubspotScheme) NewEventID() string {
	return "4" + randomString("0123456789", 9)
}

// hubspotEvents returns the byte spans of each event's eventId value in a
// HubSpot body, a JSON array of up to 100 event objects.
func hubspotEvents(body []byte) ([][2]int, error) {
	if !json.Valid(body) {
		return nil, errors.New("body is not JSON")
	}
	i := skipWS(body, 0)
	if i >= len(body) || body[i] != '[' {
		return nil, errors.New("body is not a JSON array of events")
	}
	var spans [][2]int
	i = skipWS(body, i+1)
	for i < len(body) && body[i] != ']' {
		if body[i] == ',' {
			i = skipWS(body, i+1)
			continue
		}
		end := skipValue(body, i)
		if body[i] == '{' {
			if s, e, err := topLevelValue(body[i:end], "eventId"); err == nil {
				spans = append(spans, [2]int{i + s, i + e})
			}
		}
		i = skipWS(body, end)
	}
	if len(spans) == 0 {
		return nil, errors.New("body has no event with an eventId")
	}
	return spans, nil
}

func (hubspotScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: "hubspot"}
	spans, err := hubspotEvents(r.Body)
	if err != nil {
		return id
	}
	var ids []string
	for _, sp := range spans {
		ids = append(ids, strings.Trim(string(r.Body[sp[0]:sp[1]]), `"`))
	}
	id.EventID = ids[0]
	if len(ids) > 1 {
		id.Extra = map[string]string{ExtraEventIDs: strings.Join(ids, " ")}
	}
	var events []map[string]any
	if json.Unmarshal(r.Body, &events) == nil && len(events) > 0 {
		id.EventType = str(events[0], "subscriptionType")
	}
	return id
}

// Reidentify gives the first event the id newID and every other event of
// the batch a fresh one, rewriting only the numbers.
func (s hubspotScheme) Reidentify(r *message.Request, newID string) error {
	if _, err := strconv.ParseInt(newID, 10, 64); err != nil {
		return errors.New("a HubSpot event id is an integer, not " + strconv.Quote(newID))
	}
	spans, err := hubspotEvents(r.Body)
	if err != nil {
		return err
	}
	b := r.Body
	for k := len(spans) - 1; k >= 0; k-- {
		id := newID
		if k > 0 {
			id = s.NewEventID()
		}
		if b[spans[k][0]] == '"' {
			id = strconv.Quote(id)
		}
		b = splice(b, spans[k][0], spans[k][1], []byte(id))
	}
	r.Body = b
	return nil
}

// hubspotDecode undoes the percent-encodings HubSpot decodes in the URI it
// signs (its docs list them).
var hubspotDecode = strings.NewReplacer("%3A", ":", "%2F", "/", "%3F", "?", "%40", "@", "%21", "!", "%24", "$",
	"%27", "'", "%28", "(", "%29", ")", "%2A", "*", "%2C", ",", "%3B", ";")

func hubspotV3(secret, method, uri string, body []byte, ts string) []byte {
	return macSHA256([]byte(secret), []byte(method+uri), body, []byte(ts))
}

func (hubspotScheme) SignedAt(r *message.Request) (time.Time, bool) {
	ms, err := strconv.ParseInt(strings.TrimSpace(r.Headers.Get(hubspotTS)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

func (s hubspotScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	method := r.Method
	if method == "" {
		method = "POST"
	}
	urls := twilioURLs(r, opt.URL)
	if !r.Headers.Has(hubspotSig3) {
		return s.verifyOld(r, secret, method, urls, opt)
	}
	if len(urls) == 0 {
		return Result{}, &OptionError{Field: "URL", Provider: "hubspot", Detail: "the request has no Host header"}
	}
	if !r.Headers.Has(hubspotTS) {
		return missing("hubspot", hubspotTS), nil
	}
	t, ok := s.SignedAt(r)
	if !ok {
		return invalid("hubspot", "v3", "malformed "+hubspotTS+" header: not a unix timestamp in milliseconds"), nil
	}
	sig, ts := r.Headers.Get(hubspotSig3), strings.TrimSpace(r.Headers.Get(hubspotTS))
	var want []byte
	for _, u := range urls {
		for _, uri := range []string{hubspotDecode.Replace(u), u} {
			want = hubspotV3(secret, method, uri, r.Body, ts)
			if equalBase64(sig, want) {
				return checkAge(valid("hubspot", "v3", t, opt.Now), t, opt.Now, tolOr(opt, s.Tolerance()), true), nil
			}
		}
	}
	reason := mismatch([]string{sig}, want, true)
	if opt.URL == "" {
		reason += " (HubSpot signs the full URL it was configured with, which was not given)"
	}
	res := invalid("hubspot", "v3", reason)
	res.SignedAt, res.CheckedAt = t, opt.Now
	return res, nil
}

// verifyOld checks X-HubSpot-Signature, v1 or v2 as X-HubSpot-Signature-Version says (v1 when absent).
func (hubspotScheme) verifyOld(r *message.Request, secret, method string, urls []string, opt Options) (Result, error) {
	if !r.Headers.Has(hubspotSig) {
		return missing("hubspot", hubspotSig3), nil
	}
	ver := strings.ToLower(strings.TrimSpace(r.Headers.Get(hubspotVersion)))
	if ver == "" {
		ver = "v1"
	}
	sig := r.Headers.Get(hubspotSig)
	var want []byte
	switch ver {
	case "v1":
		want = hubspotOld(secret, "", "", r.Body)
		if equalHex(sig, want) {
			return valid("hubspot", "v1", time.Time{}, opt.Now), nil
		}
	case "v2":
		if len(urls) == 0 {
			return Result{}, &OptionError{Field: "URL", Provider: "hubspot", Detail: "the request has no Host header"}
		}
		for _, u := range urls {
			if want = hubspotOld(secret, method, u, r.Body); equalHex(sig, want) {
				return valid("hubspot", "v2", time.Time{}, opt.Now), nil
			}
		}
	default:
		return invalid("hubspot", ver, "unknown "+hubspotVersion+" "+strconv.Quote(ver)), nil
	}
	return invalid("hubspot", ver, mismatch([]string{sig}, want, false)), nil
}

// hubspotOld is signature v1 (method and uri empty) or v2: a plain SHA-256, no HMAC.
func hubspotOld(secret, method, uri string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(secret + method + uri))
	h.Write(body)
	return h.Sum(nil)
}

// Sign writes v3 (signature and timestamp in milliseconds), and brings an
// X-HubSpot-Signature the request carries up to date in its version.
func (hubspotScheme) Sign(r *message.Request, secret string, opt Options) error {
	urls := twilioURLs(r, opt.URL)
	if len(urls) == 0 {
		return &OptionError{Field: "URL", Provider: "hubspot"}
	}
	method := r.Method
	if method == "" {
		method = "POST"
	}
	ts := strconv.FormatInt(opt.Now.UnixMilli(), 10)
	if r.Headers.Has(hubspotSig) {
		var old []byte
		if strings.EqualFold(strings.TrimSpace(r.Headers.Get(hubspotVersion)), "v2") {
			old = hubspotOld(secret, method, urls[0], r.Body)
		} else {
			old = hubspotOld(secret, "", "", r.Body)
		}
		r.Headers = r.Headers.Set(hubspotSig, hex.EncodeToString(old))
	}
	r.Headers = r.Headers.Set(hubspotSig3, base64.StdEncoding.EncodeToString(hubspotV3(secret, method, hubspotDecode.Replace(urls[0]), r.Body, ts)))
	r.Headers = r.Headers.Set(hubspotTS, ts)
	return nil
}

// Retries: "HubSpot will try to send a notification up to 10 times",
// "spread out over the next 24 hours, with varying delays"; a notification
// not answered within 5 seconds failed. Intervals not published: 10
// retries modelled, the first after 1 minute, the last at 24 h.
func (hubspotScheme) Retries() Schedule {
	return Schedule{
		Retries: fittedBackoff(10, time.Minute, 24*time.Hour),
		Final:   "notification dropped",
		Source:  "https://developers.hubspot.com/docs/api/webhooks#retries (up to 10 retries over 24 hours; 5 s timeout; intervals modelled)",
	}
}

func (hubspotScheme) Samples() []Fixture {
	return []Fixture{
		{"hubspot", "contact.creation", "hubspot/contact.creation.json", "a contact created in the CRM"},
		{"hubspot", "deal.propertyChange", "hubspot/deal.propertyChange.json", "one POST with two events: a deal's stage and amount changed"},
	}
}

func (hubspotScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json", "User-Agent", "HubSpot Connect 2.0 (http://dev.hubspot.com/)")
	return nil
}
