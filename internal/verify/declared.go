package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Declaration describes a provider's signature scheme in words a user can
// write (hookreplay.yaml's providers: section, or --declare): the long tail
// of providers that signs an HMAC over some of the request's parts. Declare
// turns it into a Scheme that works wherever a built-in one does.
type Declaration struct {
	Name  string // stored and typed name, lower case ("acme")
	Title string // as people write it ("Acme Pay"); default Name

	SignatureHeader string // header carrying the signature
	// Format is the signature header's value with {signature} and
	// optionally {timestamp} in it ("t={timestamp},v1={signature}");
	// default "{signature}".
	Format string
	// TimestampHeader carries the timestamp when it has a header of its own.
	TimestampHeader string
	// TimestampUnit is "s" (unix seconds, the default) or "ms".
	TimestampUnit string
	// Signed is the template of the signed bytes over {timestamp}, {body},
	// {url}, {method}, {header:NAME}, {query:NAME} (a parameter of the
	// request's query string), {sha256:body} (the raw digest) and
	// {sha256hex:body}; default "{body}".
	Signed string
	// MAC is hmac-sha256 (default), hmac-sha1 or hmac-sha512.
	MAC string
	// Encoding of the signature: hex (default), base64 or base64url.
	Encoding string
	// SecretEncoding is how the secret's text becomes the key: text (the
	// bytes as typed, the default), base64 or hex.
	SecretEncoding string
	// Tolerance is the allowed signature age (needs a timestamp; 0: not
	// checked).
	Tolerance time.Duration
	// Compare is "any" (the default: any case of hex, any base64 alphabet
	// and padding) or "exact" (the encoding's canonical string only, as
	// most providers' libraries compare).
	Compare string

	// EventID and EventType are where the event's id and type are:
	// "header:NAME" or a JSON path ("$.data.id").
	EventID, EventType string
	// NewEventID is the shape of a fresh event id over {uuid},
	// {random:N} and {digits:N}; default "{uuid}".
	NewEventID string
	// Detect lists what a delivery carries when it is this provider's:
	// "header:NAME" (present) or "header:NAME=VALUE"; default the
	// signature header (and the timestamp header).
	Detect []string

	Timeout     time.Duration   // how long the provider waits for an answer (0: unknown)
	Retries     []time.Duration // retry offsets from the first attempt, increasing
	RetrySource string          // where the retry policy is published
	RetryFinal  string          // what the provider does once the last retry failed
}

// DeclarationError is a mistake in a declaration: Field names the key it
// is in ("signed", "mac", …), so that a config file can point at its line.
type DeclarationError struct {
	Name  string
	Field string
	Msg   string
}

func (e *DeclarationError) Error() string {
	if e.Field == "" {
		return "provider " + e.Name + ": " + e.Msg
	}
	return "provider " + e.Name + ": " + e.Field + ": " + e.Msg
}

// declaredScheme is a Scheme made by Declare.
type declaredScheme struct {
	d        Declaration
	signed   []piece
	format   []piece
	newID    []piece
	hash     func() hash.Hash
	id, kind *place
	detect   []detectRule
}

var _ Scheme = (*declaredScheme)(nil)

type detectRule struct {
	header, value string
	exact         bool
}

var declaredName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

// Declare checks d and returns its scheme, or a *DeclarationError naming
// the field that is wrong. It does not register the scheme (see Register).
func Declare(d Declaration) (Scheme, error) {
	for _, s := range schemes {
		if s.Name() == d.Name {
			return nil, &DeclarationError{Name: d.Name, Msg: d.Name + " is a built-in provider: give the declaration another name"}
		}
	}
	s, err := declare(d)
	if err != nil {
		return nil, err
	}
	if !s.bodySigned() {
		return forgingDeclared{s}, nil
	}
	return s, nil
}

// declare is Declare without the check against the built-in names, for the
// built-in providers that are declarations themselves (it must not read
// schemes, which they initialise).
func declare(d Declaration) (*declaredScheme, error) {
	fail := func(field, format string, a ...any) (*declaredScheme, error) {
		return nil, &DeclarationError{Name: d.Name, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case !declaredName.MatchString(d.Name):
		return fail("", "the name must be lower-case letters, digits, - or _, starting with a letter (it is typed as --provider %s)", strings.ToLower(d.Name))
	case d.Name == Generic || d.Name == "auto":
		return fail("", "%q is reserved", d.Name)
	}
	s := &declaredScheme{d: d}
	if s.d.Title == "" {
		s.d.Title = d.Name
	}
	if !validHeaderName(d.SignatureHeader) {
		return fail("signature_header", "give the header carrying the signature, e.g. X-Acme-Signature")
	}
	var err error
	if s.d.Format == "" {
		s.d.Format = "{signature}"
	}
	if s.format, err = parseFormat(s.d.Format); err != nil {
		return fail("format", "%v", err)
	}
	if d.TimestampHeader != "" && !validHeaderName(d.TimestampHeader) {
		return fail("timestamp_header", "%q is not a header name", d.TimestampHeader)
	}
	if d.TimestampHeader != "" && hasPlaceholder(s.format, "timestamp") {
		return fail("timestamp_header", "the timestamp is in the signature header's format already: give one or the other")
	}
	switch s.d.TimestampUnit {
	case "":
		s.d.TimestampUnit = "s"
	case "s", "ms":
	default:
		return fail("timestamp_unit", "unknown unit %q (want s or ms)", d.TimestampUnit)
	}
	if s.d.Signed == "" {
		s.d.Signed = "{body}"
	}
	if s.signed, err = parseSigned(s.d.Signed); err != nil {
		return fail("signed", "%v", err)
	}
	if hasPlaceholder(s.signed, "timestamp") && !s.timestamped() {
		return fail("signed", "{timestamp} is signed but no header carries it: add {timestamp} to format, or give timestamp_header")
	}
	switch strings.ToLower(d.MAC) {
	case "", "hmac-sha256":
		s.hash = sha256.New
	case "hmac-sha1":
		s.hash = sha1.New
	case "hmac-sha512":
		s.hash = sha512.New
	default:
		return fail("mac", "unknown MAC %q (want hmac-sha256, hmac-sha1 or hmac-sha512)", d.MAC)
	}
	s.d.MAC = strings.ToLower(d.MAC)
	if s.d.MAC == "" {
		s.d.MAC = "hmac-sha256"
	}
	switch s.d.Encoding = strings.ToLower(d.Encoding); s.d.Encoding {
	case "":
		s.d.Encoding = "hex"
	case "hex", "base64", "base64url":
	default:
		return fail("encoding", "unknown encoding %q (want hex, base64 or base64url)", d.Encoding)
	}
	if err := s.separable(); err != nil {
		return fail("format", "%v", err)
	}
	switch s.d.SecretEncoding = strings.ToLower(d.SecretEncoding); s.d.SecretEncoding {
	case "":
		s.d.SecretEncoding = "text"
	case "text", "base64", "hex":
	default:
		return fail("secret_encoding", "unknown encoding %q (want text, base64 or hex)", d.SecretEncoding)
	}
	switch s.d.Compare = strings.ToLower(d.Compare); s.d.Compare {
	case "":
		s.d.Compare = "any"
	case "any", "exact":
	default:
		return fail("compare", "unknown comparison %q (want any or exact)", d.Compare)
	}
	if d.Tolerance < 0 {
		return fail("tolerance", "must not be negative")
	}
	if d.Tolerance > 0 && !s.timestamped() {
		return fail("tolerance", "needs a timestamp: add {timestamp} to format, or give timestamp_header")
	}
	if d.Tolerance > 0 && !hasPlaceholder(s.signed, "timestamp") {
		return fail("tolerance", "the timestamp is not signed (no {timestamp} in signed), so anyone could change it: a tolerance would prove nothing")
	}
	for _, f := range []struct {
		field, text string
		to          **place
	}{{"event_id", d.EventID, &s.id}, {"event_type", d.EventType, &s.kind}} {
		if f.text == "" {
			continue
		}
		p, err := parsePlace(f.text)
		if err != nil {
			return fail(f.field, "%v", err)
		}
		*f.to = &p
	}
	if s.d.NewEventID == "" {
		s.d.NewEventID = "{uuid}"
	}
	if s.newID, err = parseNewID(s.d.NewEventID); err != nil {
		return fail("new_event_id", "%v", err)
	}
	if d.NewEventID != "" && s.id == nil {
		return fail("new_event_id", "there is no event_id to give a fresh value")
	}
	rules := d.Detect
	if len(rules) == 0 {
		rules = []string{"header:" + d.SignatureHeader}
		if d.TimestampHeader != "" {
			rules = append(rules, "header:"+d.TimestampHeader)
		}
	}
	for _, r := range rules {
		name, ok := strings.CutPrefix(r, "header:")
		if !ok {
			return fail("detect", "%q: want header:NAME or header:NAME=VALUE", r)
		}
		name, value, exact := strings.Cut(name, "=")
		if !validHeaderName(name) {
			return fail("detect", "%q: %q is not a header name", r, name)
		}
		s.detect = append(s.detect, detectRule{header: name, value: value, exact: exact})
	}
	if d.Timeout < 0 {
		return fail("timeout", "must not be negative")
	}
	for i, r := range d.Retries {
		if r <= 0 || i > 0 && r <= d.Retries[i-1] {
			return fail("retries", "offsets from the first attempt must be above 0 and increasing (%s after %s)", r, d.Retries[max(i-1, 0)])
		}
	}
	if len(d.Retries) > 100 {
		return fail("retries", "%d retries: at most 100", len(d.Retries))
	}
	if d.RetrySource != "" && len(d.Retries) == 0 {
		return fail("retry_source", "there are no retries to cite a source for")
	}
	if d.RetryFinal != "" && len(d.Retries) == 0 {
		return fail("retry_final", "there are no retries to end")
	}
	return s, nil
}

func parseNewID(s string) ([]piece, error) {
	return parseTemplate(s, []string{"{uuid}", "{random:N}", "{digits:N}"}, func(ph, arg string) error {
		switch ph {
		case "uuid":
			if arg == "" {
				return nil
			}
		case "random", "digits":
			if n, err := strconv.Atoi(arg); err == nil && n > 0 && n <= 64 {
				return nil
			}
			return fmt.Errorf("{%s:N} wants a count from 1 to 64", ph)
		}
		return errUnknownPlaceholder
	})
}

// DeclarationOf returns the declaration s was made from, when s is a
// declared scheme.
func DeclarationOf(s Scheme) (Declaration, bool) {
	switch d := s.(type) {
	case *declaredScheme:
		return d.d, true
	case forgingDeclared:
		return d.d, true
	case builtinDeclaration:
		return d.d, true
	}
	return Declaration{}, false
}

// separable refuses a format whose values could run into the text after
// them: a header value is split at the first occurrence of that text, so it
// must not start with a character the value may hold (a digit after
// {timestamp}, a hex or base64 character after {signature}).
func (s *declaredScheme) separable() error {
	alphabet := map[string]string{"hex": "0123456789abcdefABCDEF", "base64": base62 + "+/=", "base64url": base62 + "-_="}[s.d.Encoding]
	for i, p := range s.format {
		if p.ph == "" || i+1 == len(s.format) {
			continue
		}
		next := s.format[i+1].lit[0]
		chars, what := alphabet, s.d.Encoding+" signature"
		if p.ph == "timestamp" {
			chars, what = "0123456789", "timestamp"
		}
		if strings.IndexByte(chars, next) >= 0 {
			return fmt.Errorf("%q after {%s} could be part of the %s, so a header value cannot be split back: the text after a placeholder must start with a character it never holds", string(next), p.ph, what)
		}
	}
	return nil
}

// bodySigned reports whether the signature covers the body.
func (s *declaredScheme) bodySigned() bool {
	return hasPlaceholder(s.signed, "body") || hasPlaceholder(s.signed, "sha256") || hasPlaceholder(s.signed, "sha256hex")
}

func (s *declaredScheme) timestamped() bool {
	return s.d.TimestampHeader != "" || hasPlaceholder(s.format, "timestamp")
}

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

// builtinDeclaration is a built-in provider whose scheme a declaration says
// whole, with what only a built-in has: the sample events send offers.
type builtinDeclaration struct {
	*declaredScheme
	samples []Fixture
	sample  func(r *message.Request, event, id string, now time.Time) error
}

// declareBuiltin makes a built-in provider of a declaration; a mistake in
// it is a bug, found by every test run.
func declareBuiltin(d Declaration, samples []Fixture, sample func(r *message.Request, event, id string, now time.Time) error) builtinDeclaration {
	s, err := declare(d)
	if err != nil {
		panic("built-in declaration: " + err.Error())
	}
	return builtinDeclaration{declaredScheme: s, samples: samples, sample: sample}
}

func (b builtinDeclaration) Samples() []Fixture { return b.samples }

func (b builtinDeclaration) Sample(r *message.Request, event, id string, now time.Time) error {
	return b.sample(r, event, id, now)
}

// forgingDeclared is a declared scheme whose signature does not cover the
// body ({timestamp}.{header:X-Request-Id}): a changed body is no forgery to
// the provider, so check's tamper phase changes what is signed instead.
type forgingDeclared struct{ *declaredScheme }

var _ Forger = forgingDeclared{}

// Forge changes the first signed header or query parameter req carries,
// else the timestamp, by one character, keeping it well-formed.
func (s forgingDeclared) Forge(req *message.Request) (string, bool) {
	for _, p := range s.signed {
		switch p.ph {
		case "header":
			if v := req.Headers.Get(p.arg); v != "" && !strings.EqualFold(p.arg, s.d.SignatureHeader) {
				req.Headers = req.Headers.Set(p.arg, forgeText(v))
				return "the " + p.arg + " header was changed after signing", true
			}
		case "query":
			path, q, ok := strings.Cut(req.Target, "?")
			if !ok {
				continue
			}
			vals, err := url.ParseQuery(q)
			if err != nil || vals.Get(p.arg) == "" {
				continue
			}
			vals.Set(p.arg, forgeText(vals.Get(p.arg)))
			req.Target = path + "?" + vals.Encode()
			return "the query's " + p.arg + " was changed after signing", true
		}
	}
	if hasPlaceholder(s.signed, "timestamp") {
		if at, ok := s.SignedAt(req); ok {
			ts := s.formatTime(at.Add(-time.Second))
			if s.d.TimestampHeader != "" {
				req.Headers = req.Headers.Set(s.d.TimestampHeader, ts)
			} else {
				vals, _ := splitFormat(s.format, strings.TrimSpace(req.Headers.Get(s.d.SignatureHeader)))
				vals["timestamp"] = ts
				req.Headers = req.Headers.Set(s.d.SignatureHeader, fillFormat(s.format, vals))
			}
			return "the signature's timestamp was moved 1s after signing", true
		}
	}
	return "", false
}

// forgeText changes the last letter or digit of v into another of its kind.
func forgeText(v string) string {
	b := []byte(v)
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
			return string(b)
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+1)%26
			return string(b)
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+1)%26
			return string(b)
		}
	}
	return v + "0"
}
