package verify

// This file is the contract the rest of hookreplay uses (capture, replay,
// check). Each provider's scheme lives in its own file (stripe.go, github.go,
// ...) behind the Scheme interface in scheme.go.

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Options tune verification and signing.
type Options struct {
	// Tolerance is the allowed age of a timestamped signature; 0 means the
	// provider's default (300 s for stripe, slack, standard, svix); a
	// negative value disables the timestamp check.
	Tolerance time.Duration
	// Now is the instant the timestamp is judged against — for a stored
	// delivery its received_at, not the wall clock. When signing, it is the
	// signing time. Zero means time.Now().
	Now time.Time
	// URL is the full URL the sender was configured with (Twilio signs it).
	// When empty, Twilio verification tries https:// and http:// with the
	// request's Host header and target.
	URL string
	// Generic scheme parameters: the signature header name, the HMAC hash
	// ("sha256" default, "sha1", "sha512"), the encoding ("hex" default,
	// "base64") and a prefix before the signature ("sha256=").
	Header, Algo, Encoding, Prefix string
}

// Result is the outcome of Verify.
type Result struct {
	Valid    bool
	Provider string
	Scheme   string // "v1", "sha256", ...
	SignedAt time.Time
	Reason   string // when !Valid: "signature mismatch", "timestamp 412s outside tolerance 300s", ...
	// CheckedAt is the instant SignedAt was judged against (Options.Now).
	CheckedAt time.Time
}

// String is the one-line result capture stores: "valid (stripe, v1, signed
// 3s before capture)" or "invalid: signature mismatch".
func (r Result) String() string { return r.Describe("capture") }

// Describe renders r on one line; ref names the reference instant
// ("capture" gives "signed 3s before capture"; "" gives "signed 3s ago").
func (r Result) Describe(ref string) string {
	if !r.Valid {
		return "invalid: " + r.Reason
	}
	parts := []string{r.Provider}
	if r.Scheme != "" {
		parts = append(parts, r.Scheme)
	}
	if !r.SignedAt.IsZero() && !r.CheckedAt.IsZero() {
		d := r.CheckedAt.Sub(r.SignedAt)
		switch {
		case ref == "" && d >= 0:
			parts = append(parts, "signed "+seconds(d)+" ago")
		case ref == "":
			parts = append(parts, "signed "+seconds(-d)+" in the future")
		case d >= 0:
			parts = append(parts, "signed "+seconds(d)+" before "+ref)
		default:
			parts = append(parts, "signed "+seconds(-d)+" after "+ref)
		}
	}
	return "valid (" + strings.Join(parts, ", ") + ")"
}

// ErrNoSigning is returned for providers with no signing scheme.
var ErrNoSigning = errors.New("signing scheme not implemented")

// ErrSecret is wrapped by errors about an empty or malformed secret.
var ErrSecret = errors.New("bad secret")

// ErrUnsigned is wrapped by Verify's error for a request its provider never
// signs (Meta's GET verification request): there is no signature to judge,
// which is neither a forgery nor a wrong secret. Capture stores it as
// "unverified: not signed: …", as it stores a request with no scheme.
var ErrUnsigned = errors.New("not signed")

// OptionError is a setting a scheme needs and did not get in a usable form:
// Field names the Options field (URL, Header, Algo, Encoding), or Provider
// when the provider could not be detected. Its text is hookreplay's, naming
// no command-line flag; a caller that has flags for these words it its way.
type OptionError struct {
	Field    string // "Provider", "URL", "Event", "Header", "Algo" or "Encoding"
	Provider string // the scheme that needs it ("" for Field Provider)
	Value    string // the unusable value; "" when it is missing
	Want     string // what is accepted, when Value is unusable
	Detail   string // why it is needed here, e.g. "the request has no Host header"
}

func (e *OptionError) Error() string {
	var msg string
	switch e.Field {
	case "Provider":
		msg = "cannot tell the provider from the headers"
	case "URL":
		msg = e.Provider + " signs the full URL it was configured with, and it is not known"
	case "Event":
		// Detail names the header; it is part of the sentence, not a reason.
		return e.Provider + " names the event outside the body, in " + e.Detail + ", and it is not known"
	case "Header":
		msg = "the " + e.Provider + " provider needs the name of the header carrying the signature"
	case "Algo":
		msg = fmt.Sprintf("unknown HMAC hash %q (want %s)", e.Value, e.Want)
	case "Encoding":
		msg = fmt.Sprintf("unknown signature encoding %q (want %s)", e.Value, e.Want)
	default:
		msg = fmt.Sprintf("bad %s %q", e.Field, e.Value)
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// Resolve finds the scheme for provider; "" (or "auto") means detect it
// from req's headers, and the scheme found is the one to carry from then on.
func Resolve(req *message.Request, provider string, opt Options) (Scheme, error) {
	return resolve(req, provider, opt)
}

func resolve(req *message.Request, provider string, opt Options) (Scheme, error) {
	if strings.TrimSpace(provider) == "" || strings.EqualFold(provider, "auto") {
		provider = Detect(req).Provider
		if provider == Generic && opt.Header == "" {
			return nil, &OptionError{Field: "Provider"}
		}
	}
	return SchemeFor(provider)
}

// Verify checks req's signature for provider with secret. provider "" detects
// it from the headers. The returned error is for usage problems only
// (unknown provider, malformed secret, body that must be JSON and is not) and
// for a request the provider never signs (ErrUnsigned); a
// signature that does not check out is a Result with Valid false and Reason.
func Verify(req *message.Request, provider, secret string, opt Options) (Result, error) {
	if req == nil {
		return Result{}, errors.New("verify: no request")
	}
	s, err := resolve(req, provider, opt)
	if err != nil {
		return Result{}, err
	}
	return VerifyWith(s, req, secret, opt)
}

// VerifyWith is Verify with the scheme already resolved.
func VerifyWith(s Scheme, req *message.Request, secret string, opt Options) (Result, error) {
	if req == nil {
		return Result{}, errors.New("verify: no request")
	}
	if secret == "" {
		return Result{}, fmt.Errorf("%w: secret is empty", ErrSecret)
	}
	opt.Now = nowOr(opt.Now)
	r, err := s.Verify(req, secret, opt)
	if err != nil {
		if len(err.Error()) > maxReason {
			return Result{}, &clippedError{text: clipReason(err.Error()), err: err}
		}
		return Result{}, err
	}
	r.Reason = clipReason(r.Reason)
	r.Provider = s.Name()
	if r.CheckedAt.IsZero() {
		r.CheckedAt = opt.Now
	}
	return r, nil
}

// Sign returns a copy of req carrying a valid signature for provider,
// timestamped opt.Now (time.Now() when zero). Headers the scheme writes are
// replaced in place (keeping their position and case) or appended.
func Sign(req *message.Request, provider, secret string, opt Options) (*message.Request, error) {
	if req == nil {
		return nil, errors.New("sign: no request")
	}
	s, err := resolve(req, provider, opt)
	if err != nil {
		return nil, err
	}
	return SignWith(s, req, secret, opt)
}

// SignWith is Sign with the scheme already resolved.
func SignWith(s Scheme, req *message.Request, secret string, opt Options) (*message.Request, error) {
	if req == nil {
		return nil, errors.New("sign: no request")
	}
	if secret == "" {
		return nil, fmt.Errorf("%w: secret is empty", ErrSecret)
	}
	opt.Now = nowOr(opt.Now)
	c := req.Clone()
	if err := s.Sign(c, secret, opt); err != nil {
		return nil, fmt.Errorf("sign %s: %w", s.Name(), err)
	}
	return c, nil
}

// Resign returns a copy of req signed with a fresh timestamp now (for schemes
// without a timestamp, a recomputed signature).
func Resign(req *message.Request, provider, secret string, now time.Time, opt Options) (*message.Request, error) {
	opt.Now = now
	return Sign(req, provider, secret, opt)
}

// ResignWith is Resign with the scheme already resolved.
func ResignWith(s Scheme, req *message.Request, secret string, now time.Time, opt Options) (*message.Request, error) {
	opt.Now = now
	return SignWith(s, req, secret, opt)
}

// Reidentify returns a copy of req with a new event identity newID (a fresh
// one from NewEventID when empty). Only the bytes where the identity lives
// change: Stripe body "id", Slack body "event_id", GitHub X-GitHub-Delivery,
// Shopify X-Shopify-Event-Id and X-Shopify-Webhook-Id, Standard webhook-id,
// Svix svix-id, Twilio I-Twilio-Idempotency-Token (and a form post's message or
// call sids, which the signature covers). When secret is not empty
// the copy is re-signed at now.
func Reidentify(req *message.Request, provider, newID, secret string, now time.Time, opt Options) (*message.Request, error) {
	if req == nil {
		return nil, errors.New("reidentify: no request")
	}
	s, err := resolve(req, provider, opt)
	if err != nil {
		return nil, err
	}
	return ReidentifyWith(s, req, newID, secret, now, opt)
}

// ReidentifyWith is Reidentify with the scheme already resolved.
func ReidentifyWith(s Scheme, req *message.Request, newID, secret string, now time.Time, opt Options) (*message.Request, error) {
	if req == nil {
		return nil, errors.New("reidentify: no request")
	}
	if newID == "" {
		newID = NewEventIDFor(s, req)
	}
	c := req.Clone()
	if err := s.Reidentify(c, newID); err != nil {
		return nil, fmt.Errorf("reidentify %s delivery: %w", s.Name(), err)
	}
	if secret == "" {
		return c, nil
	}
	opt.Now = now
	return SignWith(s, c, secret, opt)
}

// SignedAt returns the timestamp inside req's signature, when provider's
// scheme has one.
func SignedAt(req *message.Request, provider string) (time.Time, bool) {
	if req == nil {
		return time.Time{}, false
	}
	s, err := resolve(req, provider, Options{Header: "-"})
	if err != nil {
		return time.Time{}, false
	}
	return s.SignedAt(req)
}

// NewEventID returns a fresh event id shaped like provider's own: evt_… for
// stripe, a UUID for github and shopify, Ev… for slack, msg_… for standard
// and svix.
func NewEventID(provider string) string { return Lookup(provider).NewEventID() }

// maxReason bounds a verification's reason: it quotes what the sender
// wrote (a malformed header whole), which capture stores with each delivery
// and list and the TUI show on one line; a header section may hold 1MiB.
// FuzzEveryScheme found Stripe's quoting a 3,000-byte header as 12 KB.
const maxReason = 1024

// clipReason cuts s to maxReason bytes (on a character boundary), saying
// how long it was.
func clipReason(s string) string {
	if len(s) <= maxReason {
		return s
	}
	cut := maxReason
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes in all)", len(s))
}

// clippedError is a scheme's error with its words clipped (clipReason),
// its kind (ErrUnsigned, ErrSecret) kept.
type clippedError struct {
	text string
	err  error
}

func (e *clippedError) Error() string { return e.text }
func (e *clippedError) Unwrap() error { return e.err }
