package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// twilioScheme: X-Twilio-Signature, base64 HMAC-SHA1 keyed with the auth
// token of the full URL as configured, followed for form posts by each
// parameter name+value sorted by name. JSON bodies are not signed directly:
// the URL carries bodySHA256=<hex sha256 of the body>, which must match too.
type twilioScheme struct{}

var _ Scheme = twilioScheme{}

const (
	twilioSig      = "X-Twilio-Signature"
	twilioToken    = "I-Twilio-Idempotency-Token"
	twilioSettings = "X-Twilio-Webhooks-Signature-Settings"
)

// twilioAlgo returns the HMAC Twilio used: SHA-1 with the auth token, unless
// a Webhooks Rule matched, in which case X-Twilio-Webhooks-Signature-Settings
// names the algorithm (key=<sid>,algorithm=HMAC_SHA256) and the secret is
// that setting's shared key. The signed string is the same.
func twilioAlgo(r *message.Request) (func(key []byte, parts ...[]byte) []byte, string, error) {
	v := r.Headers.Get(twilioSettings)
	if v == "" {
		return macSHA1, "sha1", nil
	}
	for _, part := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		if strings.EqualFold(k, "algorithm") {
			switch strings.ToUpper(val) {
			case "HMAC_SHA1":
				return macSHA1, "sha1", nil
			case "HMAC_SHA256":
				return macSHA256, "sha256", nil
			}
			return nil, "", fmt.Errorf("unsupported algorithm %q in %s", val, twilioSettings)
		}
	}
	return macSHA1, "sha1", nil
}

func (twilioScheme) Name() string                      { return "twilio" }
func (twilioScheme) Title() string                     { return "Twilio" }
func (twilioScheme) Detects(h message.Headers) bool    { return h.Has(twilioSig) }
func (twilioScheme) Tolerance() time.Duration          { return 0 }
func (twilioScheme) SignatureHeaders() []string        { return []string{twilioSig} }
func (twilioScheme) SignsURL() bool                    { return true }
func (twilioScheme) IdentityInBody() bool              { return false }
func (twilioScheme) NewEventID() string                { return newUUID() }
func (twilioScheme) ResponseTimeout() time.Duration    { return 15 * time.Second }
func (twilioScheme) MarkRetry(*message.Request, int)   {}
func (twilioScheme) Challenge(*message.Request) string { return "" }

// IdentitySigned: a fresh event is a new message, whose sid is in the
// signed form (see Reidentify).
func (twilioScheme) IdentitySigned() bool { return true }

// BodyEdited: Twilio covers a non-form body through bodySHA256 in the URL,
// which must follow the edited body.
func (twilioScheme) BodyEdited(r *message.Request) string {
	t, changed := UpdateBodySHA256(r.Target, r.Body)
	if !changed {
		return ""
	}
	r.Target = t
	return "bodySHA256 in the URL updated for the edited body"
}

// Retries: connection overrides, rc (retry count) defaults to 1 and goes
// up to 3; retries are immediate.
func (twilioScheme) Retries() Schedule {
	return Schedule{
		Retries:    []time.Duration{0},
		Final:      "request failed (fallback URL used when configured)",
		Source:     "https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides (#rc retry count, default 1)",
		MaxRetries: 3,
	}
}

func (twilioScheme) Samples() []Fixture {
	return []Fixture{
		{"twilio", "message.received", "twilio/message.received.form", "incoming SMS webhook (form POST)"},
	}
}

// Sample: Twilio posts form parameters; a JSON body (which Twilio signs
// through bodySHA256 in the URL) is sent as JSON.
func (twilioScheme) Sample(r *message.Request, _, id string, _ time.Time) error {
	ct := "application/x-www-form-urlencoded"
	if json.Valid(r.Body) {
		ct = "application/json"
	}
	addHeaders(r,
		"Accept", "*/*",
		"Content-Type", ct,
		twilioToken, id,
		"User-Agent", "TwilioProxy/1.1",
		"X-Home-Region", "us1")
	return nil
}
func (twilioScheme) SignedAt(*message.Request) (time.Time, bool) {
	return time.Time{}, false
}

func (twilioScheme) Identity(r *message.Request) Identity {
	return Identity{Provider: "twilio", EventID: r.Headers.Get(twilioToken)}
}

// twilioURLs are the URLs to try: the configured one, or the request's own
// on https and http when none is known.
func twilioURLs(r *message.Request, configured string) []string {
	if configured != "" {
		return []string{configured}
	}
	if strings.HasPrefix(r.Target, "http://") || strings.HasPrefix(r.Target, "https://") {
		return []string{r.Target}
	}
	host := r.Headers.Get("Host")
	if host == "" {
		return nil
	}
	return []string{"https://" + host + r.Target, "http://" + host + r.Target}
}

// portVariants returns u as given, without its port and, when it has none,
// with its scheme's default port: Twilio's libraries accept all three because
// Twilio itself has not always signed the URL the same way.
func portVariants(u string) []string {
	out := []string{u}
	i := strings.Index(u, "://")
	if i < 0 {
		return out
	}
	def := map[string]string{"https": "443", "http": "80"}[strings.ToLower(u[:i])]
	rest := u[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	hostport, tail := rest[:end], rest[end:]
	userinfo := ""
	if at := strings.LastIndex(hostport, "@"); at >= 0 {
		userinfo, hostport = hostport[:at+1], hostport[at+1:]
	}
	host, port := hostport, ""
	if c := strings.LastIndex(hostport, ":"); c >= 0 && !strings.Contains(hostport[c:], "]") {
		host, port = hostport[:c], hostport[c+1:]
	}
	base := u[:i+3] + userinfo
	if port != "" {
		out = append(out, base+host+tail)
	} else if def != "" {
		out = append(out, base+host+":"+def+tail)
	}
	return out
}

// twilioQueryEncoded returns u with its query percent-encoded as a WHATWG
// URL serialises it (the special-query percent-encode set: controls, space,
// non-ASCII bytes, ", <, > and '), which is what twilio-node signs and checks.
// Existing %XX escapes are kept.
func twilioQueryEncoded(u string) string {
	i := strings.IndexByte(u, '?')
	if i < 0 {
		return u
	}
	q, frag := u[i+1:], ""
	if j := strings.IndexByte(q, '#'); j >= 0 {
		q, frag = q[:j], q[j:]
	}
	var b strings.Builder
	b.WriteString(u[:i+1])
	for k := 0; k < len(q); k++ {
		c := q[k]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("\"<>'", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteString(frag)
	return b.String()
}

// twilioParams returns the form parameters Twilio signs, or nil for
// non-form bodies. dedup drops repeated identical values, as the official
// libraries do.
func twilioParams(r *message.Request) url.Values {
	ct, _, _ := mime.ParseMediaType(r.Headers.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" || strings.EqualFold(r.Method, "GET") {
		return nil
	}
	v, err := url.ParseQuery(string(r.Body))
	if err != nil {
		return nil
	}
	return v
}

func twilioData(u string, params url.Values, dedup bool) []byte {
	var b strings.Builder
	b.WriteString(u)
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		vals := append([]string(nil), params[k]...)
		sort.Strings(vals)
		for i, v := range vals {
			if dedup && i > 0 && vals[i-1] == v {
				continue
			}
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	return []byte(b.String())
}

// bodySHA256 returns the bodySHA256 query parameter of u, if any.
func bodySHA256(u string) (string, bool) {
	_, q, ok := strings.Cut(u, "?")
	if !ok {
		return "", false
	}
	q, _, _ = strings.Cut(q, "#")
	v, err := url.ParseQuery(q)
	if err != nil || !v.Has("bodySHA256") {
		return "", false
	}
	return v.Get("bodySHA256"), true
}

func (twilioScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(twilioSig) {
		return missing("twilio", twilioSig), nil
	}
	macFn, algo, err := twilioAlgo(r)
	if err != nil {
		return invalid("twilio", "", err.Error()), nil
	}
	sig := r.Headers.Get(twilioSig)
	if _, ok := decodeBase64(strings.TrimSpace(sig)); !ok || sig == "" {
		return invalid("twilio", algo, "malformed "+twilioSig+" header: signature is not base64"), nil
	}
	urls := twilioURLs(r, opt.URL)
	if len(urls) == 0 {
		return Result{}, &OptionError{Field: "URL", Provider: "twilio", Detail: "the request has no Host header"}
	}
	params := twilioParams(r)
	matchedURL, loose := "", false
	for _, base := range urls {
		// twilio-node signs new URL(url).toString(): the URL with its
		// query percent-encoded (O'Brien as O%27Brien); try that too.
		variants := portVariants(base)
		if enc := twilioQueryEncoded(base); enc != base {
			variants = append(variants, portVariants(enc)...)
		}
		for _, u := range variants {
			for _, dedup := range []bool{true, false} {
				want := macFn([]byte(secret), twilioData(u, params, dedup))
				if equalBase64(sig, want) {
					matchedURL = u
				} else if equalBase64Loose(sig, want) {
					loose = true
				}
			}
		}
	}
	if matchedURL == "" && loose {
		return invalid("twilio", algo, reasonBase64Pad), nil
	}
	if matchedURL == "" {
		reason := "signature mismatch"
		if opt.URL == "" {
			reason += " (Twilio signs the full URL it was configured with, which was not given)"
		}
		return invalid("twilio", algo, reason), nil
	}
	if want, ok := bodySHA256(matchedURL); ok && params == nil {
		got := sha256.Sum256(r.Body)
		if !hmac.Equal([]byte(strings.ToLower(want)), []byte(hex.EncodeToString(got[:]))) {
			return invalid("twilio", algo, "bodySHA256 in the URL does not match the body"), nil
		}
	} else if twilioBodyNeedsHash(r, params) {
		return invalid("twilio", algo, "the body is not signed: Twilio covers a non-form body with bodySHA256=<hex sha256 of the body> in the URL, and the URL has none"), nil
	}
	return valid("twilio", algo, time.Time{}, opt.Now), nil
}

func (twilioScheme) Sign(r *message.Request, secret string, opt Options) error {
	urls := twilioURLs(r, opt.URL)
	if len(urls) == 0 {
		return &OptionError{Field: "URL", Provider: "twilio"}
	}
	macFn, _, err := twilioAlgo(r)
	if err != nil {
		return err
	}
	params := twilioParams(r)
	if _, ok := bodySHA256(urls[0]); !ok && twilioBodyNeedsHash(r, params) {
		sum := sha256.Sum256(r.Body)
		return fmt.Errorf("twilio signs a non-form body through the URL: add bodySHA256=%s to the URL's query", hex.EncodeToString(sum[:]))
	}
	sig := base64.StdEncoding.EncodeToString(macFn([]byte(secret), twilioData(urls[0], params, true)))
	r.Headers = r.Headers.Set(twilioSig, sig)
	return nil
}

// Reidentify sets I-Twilio-Idempotency-Token and, in a form post, gives the
// message or call a new sid (MessageSid, SmsSid, SmsMessageSid, CallSid)
// derived from newID: a new event is a new message, and handlers commonly
// deduplicate on its sid. The form changes, so the copy must be re-signed.
func (twilioScheme) Reidentify(r *message.Request, newID string) error {
	r.Headers = r.Headers.Set(twilioToken, newID)
	if twilioParams(r) != nil {
		r.Body = twilioResid(r.Body, newID)
		if r.Headers.Has("Content-Length") {
			r.Headers = r.Headers.Set("Content-Length", fmt.Sprint(len(r.Body)))
		}
	}
	return nil
}

// twilioSidParams are the form parameters that name the message or call.
var twilioSidParams = map[string]bool{"MessageSid": true, "SmsSid": true, "SmsMessageSid": true, "CallSid": true}

// twilioResid returns form body with each sid parameter's value replaced by
// a sid derived from newID, keeping its two-letter prefix (SM, MM, CA) and
// the order and encoding of every other byte; equal sids stay equal.
func twilioResid(body []byte, newID string) []byte {
	parts := strings.Split(string(body), "&")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if !ok || err != nil || !twilioSidParams[name] {
			continue
		}
		old, err := url.QueryUnescape(v)
		if err != nil || len(old) < 2 {
			continue
		}
		sum := sha256.Sum256([]byte(newID + "\x00" + old[:2]))
		parts[i] = k + "=" + url.QueryEscape(old[:2]+hex.EncodeToString(sum[:16]))
	}
	return []byte(strings.Join(parts, "&"))
}

// twilioBodyNeedsHash reports whether r has a body Twilio's signature only
// covers through bodySHA256 in the URL: not a form post, not empty.
func twilioBodyNeedsHash(r *message.Request, params url.Values) bool {
	return params == nil && len(r.Body) > 0 && !strings.EqualFold(r.Method, "GET")
}

// UpdateBodySHA256 returns target (a request-target or URL) with its
// bodySHA256 query parameter set to the hex SHA-256 of body, and whether it
// changed. Twilio covers a non-form body only through that parameter, so a
// copy whose body was edited must carry the new hash for its re-signed URL to
// validate. A target without the parameter is returned unchanged.
func UpdateBodySHA256(target string, body []byte) (string, bool) {
	old, ok := bodySHA256(target)
	if !ok {
		return target, false
	}
	sum := sha256.Sum256(body)
	fresh := hex.EncodeToString(sum[:])
	if strings.EqualFold(old, fresh) {
		return target, false
	}
	path, query, _ := strings.Cut(target, "?")
	query, frag, hasFrag := strings.Cut(query, "#")
	parts := strings.Split(query, "&")
	for i, p := range parts {
		if k, _, _ := strings.Cut(p, "="); k == "bodySHA256" {
			parts[i] = "bodySHA256=" + fresh
		}
	}
	out := path + "?" + strings.Join(parts, "&")
	if hasFrag {
		out += "#" + frag
	}
	return out, true
}
