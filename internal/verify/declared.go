package verify

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
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
// Alone says the field's value is wrong whatever the other fields say (an
// unknown MAC), not only next to them (a tolerance without a timestamp):
// such a mistake shows in a declaration of that field alone (FieldError).
type DeclarationError struct {
	Name  string
	Field string
	Msg   string
	Alone bool
}

func (e *DeclarationError) Error() string {
	if e.Field == "" {
		return "provider " + message.Printable(e.Name) + ": " + e.Msg
	}
	return "provider " + message.Printable(e.Name) + ": " + e.Field + ": " + e.Msg
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
			return nil, &DeclarationError{Name: d.Name, Msg: d.Name + " is a built-in provider (hookreplay providers lists it): remove this declaration to use the built-in, or give it another name to keep yours"}
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

// FieldError is the mistake d's field (a key of providers:, "mac"; "" is
// the name) has whatever the other fields say, or nil: Declare of d with only that field
// (and a signature header when the field is another), kept when Alone. A
// config file that found a mistake at one line asks it of the fields above.
func FieldError(d Declaration, field string) *DeclarationError {
	one := Declaration{Name: d.Name, SignatureHeader: "X-Signature"}
	switch field {
	case "": // the name
	case "title":
		one.Title = d.Title
	case "signature_header":
		one.SignatureHeader = d.SignatureHeader
	case "format":
		one.Format = d.Format
	case "timestamp_header":
		one.TimestampHeader = d.TimestampHeader
	case "timestamp_unit":
		one.TimestampUnit = d.TimestampUnit
	case "signed":
		one.Signed = d.Signed
	case "mac":
		one.MAC = d.MAC
	case "encoding":
		one.Encoding = d.Encoding
	case "secret_encoding":
		one.SecretEncoding = d.SecretEncoding
	case "compare":
		one.Compare = d.Compare
	case "tolerance":
		one.Tolerance = d.Tolerance
	case "event_id":
		one.EventID = d.EventID
	case "event_type":
		one.EventType = d.EventType
	case "new_event_id":
		one.NewEventID = d.NewEventID
	case "detect":
		one.Detect = d.Detect
	case "timeout":
		one.Timeout = d.Timeout
	case "retries":
		one.Retries = d.Retries
	default: // retry_source and retry_final are wrong only next to retries
		return nil
	}
	_, err := Declare(one)
	var de *DeclarationError
	if errors.As(err, &de) && (de.Alone || field == "") && de.Field == field {
		return de
	}
	return nil
}

// choice is a declaration's word for one of a few settings: v, or def when
// v is empty, and whether it is def or one of more. It serves
// timestamp_unit, encoding, secret_encoding and compare.
func choice(v, def string, more ...string) (string, bool) {
	if v == "" {
		return def, true
	}
	return v, v == def || slices.Contains(more, v)
}

// declare is Declare without the check against the built-in names, for the
// built-in providers that are declarations themselves (it must not read
// schemes, which they initialise).
func declare(d Declaration) (*declaredScheme, error) {
	fail := func(field, format string, a ...any) (*declaredScheme, error) {
		return nil, &DeclarationError{Name: d.Name, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	alone := func(field, format string, a ...any) (*declaredScheme, error) {
		return nil, &DeclarationError{Name: d.Name, Field: field, Msg: fmt.Sprintf(format, a...), Alone: true}
	}
	switch {
	case !declaredName.MatchString(d.Name):
		return fail("", "the name must be lower-case letters, digits, - or _, starting with a letter (it is typed as --provider %q)", strings.ToLower(d.Name))
	case d.Name == Generic || d.Name == "auto":
		return fail("", "%q is reserved", d.Name)
	}
	s := &declaredScheme{d: d}
	if s.d.Title == "" {
		s.d.Title = d.Name
	}
	if message.Printable(s.d.Title) != s.d.Title || len(s.d.Title) > 80 {
		return alone("title", "must be printable text of at most 80 characters (it is shown in messages and reports)")
	}
	if !validHeaderName(d.SignatureHeader) {
		return alone("signature_header", "give the header carrying the signature, e.g. X-Acme-Signature")
	}
	var err error
	if s.d.Format == "" {
		s.d.Format = "{signature}"
	}
	if s.format, err = parseFormat(s.d.Format); err != nil {
		return alone("format", "%v", err)
	}
	if d.TimestampHeader != "" && !validHeaderName(d.TimestampHeader) {
		return alone("timestamp_header", "%q is not a header name", d.TimestampHeader)
	}
	if d.TimestampHeader != "" && hasPlaceholder(s.format, "timestamp") {
		return fail("timestamp_header", "the timestamp is in the signature header's format already: give one or the other")
	}
	var ok bool
	if s.d.TimestampUnit, ok = choice(d.TimestampUnit, "s", "ms"); !ok {
		return alone("timestamp_unit", "unknown unit %q (want s or ms)", d.TimestampUnit)
	}
	if s.d.Signed == "" {
		s.d.Signed = "{body}"
	}
	if s.signed, err = parseSigned(s.d.Signed); err != nil {
		return alone("signed", "%v", err)
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
		return alone("mac", "unknown MAC %q (want hmac-sha256, hmac-sha1 or hmac-sha512)", d.MAC)
	}
	s.d.MAC = strings.ToLower(d.MAC)
	if s.d.MAC == "" {
		s.d.MAC = "hmac-sha256"
	}
	if s.d.Encoding, ok = choice(strings.ToLower(d.Encoding), "hex", "base64", "base64url"); !ok {
		return alone("encoding", "unknown encoding %q (want hex, base64 or base64url)", d.Encoding)
	}
	if err := s.separable(); err != nil {
		return fail("format", "%v", err)
	}
	if s.d.SecretEncoding, ok = choice(strings.ToLower(d.SecretEncoding), "text", "base64", "hex"); !ok {
		return alone("secret_encoding", "unknown encoding %q (want text, base64 or hex)", d.SecretEncoding)
	}
	if s.d.Compare, ok = choice(strings.ToLower(d.Compare), "any", "exact"); !ok {
		return alone("compare", "unknown comparison %q (want any or exact)", d.Compare)
	}
	if d.Tolerance < 0 {
		return alone("tolerance", "must not be negative")
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
			return alone(f.field, "%v", err)
		}
		*f.to = &p
	}
	if s.d.NewEventID == "" {
		s.d.NewEventID = "{uuid}"
	}
	if s.newID, err = parseNewID(s.d.NewEventID); err != nil {
		return alone("new_event_id", "%v", err)
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
			return alone("detect", "%q: want header:NAME or header:NAME=VALUE", r)
		}
		name, value, exact := strings.Cut(name, "=")
		if !validHeaderName(name) {
			return alone("detect", "%q: %q is not a header name", r, name)
		}
		s.detect = append(s.detect, detectRule{header: name, value: value, exact: exact})
	}
	if d.Timeout < 0 {
		return alone("timeout", "must not be negative")
	}
	for i, r := range d.Retries {
		if r <= 0 || i > 0 && r <= d.Retries[i-1] {
			return alone("retries", "offsets from the first attempt must be above 0 and increasing (%s after %s)", r, d.Retries[max(i-1, 0)])
		}
	}
	if len(d.Retries) > 100 {
		return alone("retries", "%d retries: at most 100", len(d.Retries))
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
