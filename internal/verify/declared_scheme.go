package verify

// The Scheme methods of a declared scheme: detection, identity, signing
// and verifying as its declaration says.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

func (s *declaredScheme) Name() string  { return s.d.Name }
func (s *declaredScheme) Title() string { return s.d.Title }

func (s *declaredScheme) Detects(h message.Headers) bool {
	for _, r := range s.detect {
		if !h.Has(r.header) || r.exact && h.Get(r.header) != r.value {
			return false
		}
	}
	return true
}

func (s *declaredScheme) Identity(req *message.Request) Identity {
	return Identity{Provider: s.d.Name, EventID: s.placeValue(req, s.id), EventType: s.placeValue(req, s.kind)}
}

func (s *declaredScheme) placeValue(req *message.Request, p *place) string {
	switch {
	case p == nil:
		return ""
	case p.header != "":
		return req.Headers.Get(p.header)
	}
	return jsonAt(req.Body, p.path)
}

func (s *declaredScheme) Tolerance() time.Duration { return s.d.Tolerance }

func (s *declaredScheme) SignatureHeaders() []string {
	if s.d.TimestampHeader != "" {
		return []string{s.d.TimestampHeader, s.d.SignatureHeader}
	}
	return []string{s.d.SignatureHeader}
}

func (s *declaredScheme) SignsURL() bool                     { return hasPlaceholder(s.signed, "url") }
func (s *declaredScheme) BodyEdited(*message.Request) string { return "" }
func (s *declaredScheme) IdentityInBody() bool               { return s.id != nil && s.id.header == "" }

func (s *declaredScheme) IdentitySigned() bool {
	switch {
	case s.id == nil:
		return false
	case s.id.header == "":
		return hasPlaceholder(s.signed, "body") || hasPlaceholder(s.signed, "sha256") || hasPlaceholder(s.signed, "sha256hex")
	}
	for _, p := range s.signed {
		if p.ph == "header" && strings.EqualFold(p.arg, s.id.header) {
			return true
		}
	}
	return false
}

func (s *declaredScheme) ResponseTimeout() time.Duration { return s.d.Timeout }

func (s *declaredScheme) Retries() Schedule {
	if len(s.d.Retries) == 0 {
		return Schedule{}
	}
	return Schedule{Retries: slices.Clone(s.d.Retries), Source: s.d.RetrySource, Final: s.d.RetryFinal}
}

func (s *declaredScheme) MarkRetry(*message.Request, int)   {}
func (s *declaredScheme) Challenge(*message.Request) string { return "" }
func (s *declaredScheme) Samples() []Fixture                { return nil }

// Sample dresses a body of the user's own (send --body): a JSON body is
// sent as application/json, and an event type kept in a header is set when
// the event is named. The event id and signature follow (Build).
func (s *declaredScheme) Sample(r *message.Request, event, _ string, _ time.Time) error {
	if len(r.Body) > 0 && json.Valid(r.Body) && !r.Headers.Has("Content-Type") {
		addHeaders(r, "Content-Type", "application/json")
	}
	if s.kind != nil && s.kind.header != "" && event != "" {
		r.Headers = r.Headers.Set(s.kind.header, event)
	}
	return nil
}

func (s *declaredScheme) NewEventID() string {
	var b strings.Builder
	for _, p := range s.newID {
		switch p.ph {
		case "":
			b.WriteString(p.lit)
		case "uuid":
			b.WriteString(newUUID())
		case "random":
			n, _ := strconv.Atoi(p.arg)
			b.WriteString(randomString(base62, n))
		case "digits":
			n, _ := strconv.Atoi(p.arg)
			b.WriteString(randomString("123456789", 1) + randomString("0123456789", n-1))
		}
	}
	return b.String()
}

func (s *declaredScheme) Reidentify(req *message.Request, newID string) error {
	switch {
	case s.id == nil:
		return fmt.Errorf("the declaration of %s gives no event_id", s.d.Name)
	case s.id.header != "":
		req.Headers = req.Headers.Set(s.id.header, newID)
		return nil
	}
	st, e, err := spanAt(req.Body, s.id.path)
	if err != nil {
		return fmt.Errorf("event id at %s: %v", s.id.text, err)
	}
	var repl []byte
	switch c := req.Body[st]; {
	case c == '"':
		repl, _ = json.Marshal(newID)
	case c == '-' || c >= '0' && c <= '9':
		if _, err := strconv.ParseUint(newID, 10, 64); err != nil {
			return fmt.Errorf("the event id at %s is a number and %q is not: declare new_event_id: \"{digits:%d}\"", s.id.text, newID, e-st)
		}
		repl = []byte(newID)
	default:
		return fmt.Errorf("the event id at %s is neither a string nor a number", s.id.text)
	}
	req.Body = splice(req.Body, st, e, repl)
	return nil
}

// key is the HMAC key the secret's text stands for.
func (s *declaredScheme) key(secret string) ([]byte, error) {
	switch s.d.SecretEncoding {
	case "base64":
		if b, ok := decodeBase64(strings.TrimSpace(secret)); ok {
			return b, nil
		}
		return nil, fmt.Errorf("%w: %s's secret is declared base64 and this one is not", ErrSecret, s.d.Name)
	case "hex":
		b, err := hex.DecodeString(strings.TrimSpace(secret))
		if err != nil {
			return nil, fmt.Errorf("%w: %s's secret is declared hex and this one is not", ErrSecret, s.d.Name)
		}
		return b, nil
	}
	return []byte(secret), nil
}

// formatTime and parseTime write and read the declared timestamp.
func (s *declaredScheme) formatTime(t time.Time) string {
	if s.d.TimestampUnit == "ms" {
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	return strconv.FormatInt(t.Unix(), 10)
}

func (s *declaredScheme) parseTime(v string) (time.Time, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, false
	}
	if s.d.TimestampUnit == "ms" {
		return time.UnixMilli(n), true
	}
	return time.Unix(n, 0), true
}

// signedBytes fills the signed template for req at timestamp ts and url.
func (s *declaredScheme) signedBytes(req *message.Request, ts, url string) []byte {
	var b []byte
	for _, p := range s.signed {
		switch p.ph {
		case "":
			b = append(b, p.lit...)
		case "timestamp":
			b = append(b, ts...)
		case "body":
			b = append(b, req.Body...)
		case "url":
			b = append(b, url...)
		case "method":
			b = append(b, req.Method...)
		case "header":
			b = append(b, req.Headers.Get(p.arg)...)
		case "query":
			b = append(b, queryParam(req.Target, p.arg)...)
		case "sha256":
			sum := sha256.Sum256(req.Body)
			b = append(b, sum[:]...)
		case "sha256hex":
			sum := sha256.Sum256(req.Body)
			b = append(b, hex.EncodeToString(sum[:])...)
		}
	}
	return b
}

func (s *declaredScheme) encode(sum []byte) string {
	switch s.d.Encoding {
	case "base64":
		return base64.StdEncoding.EncodeToString(sum)
	case "base64url":
		return base64.URLEncoding.EncodeToString(sum)
	}
	return hex.EncodeToString(sum)
}

// matches compares a received signature with want: any case of hex, any
// base64 alphabet and padding, since the receiving code is unknown.
func (s *declaredScheme) matches(sig string, want []byte) bool {
	switch {
	case s.d.Compare == "exact":
		return hmac.Equal([]byte(sig), []byte(s.encode(want)))
	case s.d.Encoding == "hex":
		return equalHexLoose(sig, want)
	}
	return equalBase64Loose(sig, want)
}

// urls are the URLs to try for {url}: the one given, else the request's
// own over https and http (as Twilio verification does).
func (s *declaredScheme) urls(req *message.Request, opt Options) []string {
	if !s.SignsURL() {
		return []string{""}
	}
	if opt.URL != "" {
		return []string{opt.URL}
	}
	host := req.Headers.Get("Host")
	if host == "" {
		return nil
	}
	return []string{"https://" + host + req.Target, "http://" + host + req.Target}
}

func (s *declaredScheme) SignedAt(req *message.Request) (time.Time, bool) {
	ts, ok := s.timestamp(req)
	if !ok {
		return time.Time{}, false
	}
	return s.parseTime(ts)
}

// timestamp is the timestamp text req carries, from its header or the
// signature header's format.
func (s *declaredScheme) timestamp(req *message.Request) (string, bool) {
	if s.d.TimestampHeader != "" {
		v := req.Headers.Get(s.d.TimestampHeader)
		return v, v != ""
	}
	if !hasPlaceholder(s.format, "timestamp") {
		return "", false
	}
	vals, ok := splitFormat(s.format, strings.TrimSpace(req.Headers.Get(s.d.SignatureHeader)))
	if !ok {
		return "", false
	}
	return vals["timestamp"], true
}

func (s *declaredScheme) Verify(req *message.Request, secret string, opt Options) (Result, error) {
	key, err := s.key(secret)
	if err != nil {
		return Result{}, err
	}
	name, scheme := s.d.Name, strings.TrimPrefix(s.d.MAC, "hmac-")
	if !req.Headers.Has(s.d.SignatureHeader) {
		return missing(name, s.d.SignatureHeader), nil
	}
	vals, ok := splitFormat(s.format, strings.TrimSpace(req.Headers.Get(s.d.SignatureHeader)))
	if !ok {
		return invalid(name, scheme, fmt.Sprintf("%s is not in the declared format %s", s.d.SignatureHeader, s.d.Format)), nil
	}
	var ts string
	var signedAt time.Time
	var wants [][]byte
	if s.timestamped() {
		if s.d.TimestampHeader != "" && !req.Headers.Has(s.d.TimestampHeader) {
			return missing(name, s.d.TimestampHeader), nil
		}
		ts, _ = s.timestamp(req)
		if signedAt, ok = s.parseTime(ts); !ok {
			return invalid(name, scheme, fmt.Sprintf("timestamp %q is not unix time in %s", ts, map[string]string{"s": "seconds", "ms": "milliseconds"}[s.d.TimestampUnit])), nil
		}
	}
	urls := s.urls(req, opt)
	if urls == nil {
		return Result{}, &OptionError{Field: "URL", Provider: name, Detail: "the request has no Host header"}
	}
	for _, u := range urls {
		want := mac(s.hash, key, s.signedBytes(req, ts, u))
		wants = append(wants, want)
		if s.matches(vals["signature"], want) {
			r := valid(name, scheme, time.Time{}, opt.Now)
			if !s.timestamped() {
				return r, nil
			}
			tol := tolOr(opt, s.d.Tolerance)
			if tol == 0 {
				tol = -1 // none declared: the age is shown, not judged
			}
			return checkAge(r, signedAt, opt.Now, tol, false), nil
		}
	}
	if s.d.Compare == "exact" && len(wants) == 1 && s.d.Encoding != "base64url" {
		// Say when the right bytes came in a form the exact comparison refuses.
		return invalid(name, scheme, mismatch([]string{vals["signature"]}, wants[0], s.d.Encoding == "base64")), nil
	}
	return invalid(name, scheme, "signature mismatch"), nil
}

func (s *declaredScheme) Sign(req *message.Request, secret string, opt Options) error {
	key, err := s.key(secret)
	if err != nil {
		return err
	}
	urls := s.urls(req, opt)
	if s.SignsURL() && opt.URL == "" {
		return &OptionError{Field: "URL", Provider: s.d.Name}
	}
	ts := ""
	if s.timestamped() {
		ts = s.formatTime(nowOr(opt.Now))
	}
	if s.d.TimestampHeader != "" {
		req.Headers = req.Headers.Set(s.d.TimestampHeader, ts)
	}
	sum := mac(s.hash, key, s.signedBytes(req, ts, urls[0]))
	req.Headers = req.Headers.Set(s.d.SignatureHeader, fillFormat(s.format, map[string]string{"signature": s.encode(sum), "timestamp": ts}))
	return nil
}

// queryParam is the first value of the query parameter name in target
// ("" when there is none).
func queryParam(target, name string) string {
	_, q, ok := strings.Cut(target, "?")
	if !ok {
		return ""
	}
	v, err := url.ParseQuery(q)
	if err != nil && len(v) == 0 {
		return ""
	}
	return v.Get(name)
}
