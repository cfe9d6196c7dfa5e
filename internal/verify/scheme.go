package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Scheme is everything hookreplay knows about one provider: how its
// deliveries are recognised, identified, signed and re-identified, and how
// the provider behaves as a sender (its answer timeout, retry timetable and
// retry marking). Every provider lives in its own file, asserts
// `var _ Scheme = xScheme{}` there, and is registered in schemes below;
// nothing outside this package switches on a provider's name.
type Scheme interface {
	// Name is the provider name as stored and typed ("stripe", "github", ...).
	Name() string
	// Title is the provider's name as people write it ("Stripe", "GitHub").
	Title() string
	// Detects reports whether headers are this provider's. Detection asks
	// the registry in order and the first yes wins.
	Detects(h message.Headers) bool
	// Identity extracts the event identity; it never fails.
	Identity(req *message.Request) Identity
	// Verify checks req's signature. A signature that does not check out is
	// a Result with Valid false; errors are reserved for usage problems.
	Verify(req *message.Request, secret string, opt Options) (Result, error)
	// Sign writes the signature headers into req (a copy owned by the
	// caller), timestamped opt.Now where the scheme has a timestamp.
	Sign(req *message.Request, secret string, opt Options) error
	// SignedAt is the timestamp inside req's signature headers, if any.
	SignedAt(req *message.Request) (time.Time, bool)
	// Tolerance is the default allowed signature age (0: no timestamp).
	Tolerance() time.Duration
	// SignatureHeaders names the headers Sign writes, in the order a sender adds them.
	SignatureHeaders() []string
	// SignsURL reports whether the signature covers the full URL the sender
	// was configured with, so a copy sent to another URL (or with another
	// Host) needs re-signing and Verify needs Options.URL.
	SignsURL() bool
	// BodyEdited brings req (a copy owned by the caller whose body was
	// edited) back in line where the scheme describes the body outside the
	// signature, and returns a note for the user when it changed something.
	BodyEdited(req *message.Request) string
	// Reidentify gives req (a copy owned by the caller) the event id newID,
	// rewriting only the bytes where the identity lives.
	Reidentify(req *message.Request, newID string) error
	// NewEventID returns a fresh, realistic event id for the provider.
	NewEventID() string
	// IdentityInBody reports whether the event id lives in the body.
	IdentityInBody() bool
	// IdentitySigned reports whether a new event id breaks the signature,
	// so that a fresh event can only be made with the secret.
	IdentitySigned() bool
	// ResponseTimeout is how long the provider waits for an answer before
	// it counts the delivery as failed and retries (0: not known).
	ResponseTimeout() time.Duration
	// Retries is the provider's retry timetable (no Retries: none published).
	Retries() Schedule
	// MarkRetry marks req (a copy owned by the caller) as the provider's
	// retry number n, the way the provider really does (most resend the
	// same bytes and do nothing).
	MarkRetry(req *message.Request, n int)
	// Challenge is the value req asks to have echoed back when it is the
	// provider's URL-verification handshake ("" when it is not).
	Challenge(req *message.Request) string
	// Samples lists the provider's sample events (files in fixtures/).
	Samples() []Fixture
	// Sample dresses req, a sample delivery of event being built, as the
	// provider sends it: its headers, event id id, timestamps at now. Sign
	// and, for IdentityInBody schemes, Reidentify run afterwards.
	Sample(req *message.Request, event, id string, now time.Time) error
}

// Schedule is a provider's retry timetable: after a non-2xx, a lost answer
// or a connection error, retry k is sent Retries[k-1] after the first
// attempt. Providers publish the policy, rarely the exact intervals: where
// they do not, the offsets are a geometric backoff fitted to what they
// publish (first retry after 1 minute, the last at the published horizon)
// and Source says so.
type Schedule struct {
	Retries []time.Duration // offsets from the first attempt, increasing
	Final   string          // what the provider does once the last retry failed
	Source  string          // where the policy is documented
	// MaxRetries, when above 0, is the most retries the provider lets its
	// user configure; each is sent immediately (Twilio's rc override).
	MaxRetries int
}

// schemes is the single registry of provider schemes, in display order:
// Providers, help texts and detection read it. Adding a provider means
// adding its file and one line here.
var schemes = []Scheme{
	stripeScheme{},
	githubScheme{},
	whatsappScheme,
	messengerScheme,
	instagramScheme,
	mercadoPagoScheme{},
	birdScheme{},
	shopifyScheme{},
	slackScheme{},
	twilioScheme{},
	standardScheme{name: "standard", title: "Standard Webhooks", prefix: "webhook"},
	standardScheme{name: "svix", title: "Svix", prefix: "svix"},
	standardScheme{name: "resend", title: "Resend", prefix: "svix", sender: "resend"},
	standardScheme{name: "clerk", title: "Clerk", prefix: "svix", sender: "clerk"},
	paddleScheme{},
	squareScheme{},
	razorpayScheme,
	hubspotScheme{},
	discordScheme{},
	sendgridScheme{},
	linearScheme{},
	twitchScheme{},
	coinbaseScheme{},
	lemonsqueezyScheme{},
	calendlyScheme{},
	intercomScheme{},
	zoomScheme{},
	mailgunScheme{},
	genericScheme{},
}

// Schemes returns the registered schemes in display order: built-ins
// first, generic last, declared ones before generic.
func Schemes() []Scheme {
	out := slices.Clone(schemes[:len(schemes)-1])
	if d := declared.Load(); d != nil {
		out = append(out, *d...)
	}
	return append(out, schemes[len(schemes)-1])
}

// Names lists the provider names Schemes returns, declared ones included.
func Names() []string {
	var out []string
	for _, s := range Schemes() {
		out = append(out, s.Name())
	}
	return out
}

// Providers lists the names of the built-in providers, in display order
// (Names includes the declared ones).
var Providers = providerNames()

func providerNames() []string {
	out := make([]string, len(schemes))
	for i, s := range schemes {
		out[i] = s.Name()
	}
	return out
}

// ErrUnknownProvider is wrapped by every error about a provider name hookreplay does not know.
var ErrUnknownProvider = errors.New("unknown provider")

// SchemeFor returns the scheme of provider (case-insensitive).
func SchemeFor(provider string) (Scheme, error) {
	name := strings.ToLower(strings.TrimSpace(provider))
	for _, s := range all() {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownProvider, provider, strings.Join(Names(), ", "))
}

// KnownProvider reports whether name is one of Providers.
func KnownProvider(name string) bool {
	_, err := SchemeFor(name)
	return err == nil
}

// Lookup returns the scheme a stored delivery's provider name resolves
// to: its own, or generic for "" and for a name the registry does not know
// (a delivery captured under a declaration that is no longer in force).
// Callers resolve a delivery's scheme once, when they load it, and carry
// it from there.
func Lookup(provider string) Scheme {
	if s, err := SchemeFor(provider); err == nil {
		return s
	}
	return genericScheme{}
}

// Recognised reports whether provider names a scheme detected from a
// delivery's own headers: not empty, not generic (the user-described HMAC
// that detection falls back to).
func Recognised(provider string) bool {
	return provider != "" && !strings.EqualFold(provider, Generic)
}

// Known reports whether s is a provider's scheme rather than generic (or
// none): one that detection names and that knows the event's identity.
func Known(s Scheme) bool { return s != nil && Recognised(s.Name()) }

// Handshaker is a Scheme whose provider sends requests that set up the
// endpoint rather than deliver an event (Slack's url_verification, GitHub's
// ping): they carry no work to do once, so an idempotency check has nothing
// to prove with them.
type Handshaker interface {
	// Handshake describes req when it is such a request ("" when it is an
	// event), in a few words a sentence can carry.
	Handshake(req *message.Request) string
}

// Refuser is a Scheme whose provider's own server libraries refuse some
// correctly signed deliveries for a reason of their own, which a handler
// usually answers as it answers a bad signature (400), so that a refusal
// of a copy hookreplay signed correctly is not always a wrong secret or a
// re-encoded body.
type Refuser interface {
	// LibraryRefusal names such a reason req is open to, in words that
	// follow "or" in a list of causes ("" when none applies).
	LibraryRefusal(req *message.Request) string
}

// LibraryRefusal names a reason s's provider's server libraries may refuse
// req although its signature is correct, "" when none is known.
func LibraryRefusal(s Scheme, req *message.Request) string {
	if r, ok := s.(Refuser); ok && req != nil {
		return r.LibraryRefusal(req)
	}
	return ""
}

// Handshake describes req when s knows it as a set-up request instead of
// an event, "" otherwise.
func Handshake(s Scheme, req *message.Request) string {
	if h, ok := s.(Handshaker); ok && req != nil {
		return h.Handshake(req)
	}
	return ""
}

// ResponseTimeout is how long s's provider waits for an answer, and
// whether it is known.
func ResponseTimeout(s Scheme) (time.Duration, bool) {
	if s == nil || s.ResponseTimeout() <= 0 {
		return 0, false
	}
	return s.ResponseTimeout(), true
}

// RetryHorizon is how long after the first attempt s's provider may still
// retry a delivery (its last scheduled retry) and where that is published;
// ok is false when the provider publishes no retry timetable or retries only
// at once.
func RetryHorizon(s Scheme) (horizon time.Duration, source string, ok bool) {
	if s == nil {
		return 0, "", false
	}
	sch := s.Retries()
	if len(sch.Retries) == 0 || sch.Retries[len(sch.Retries)-1] <= 0 {
		return 0, "", false
	}
	return sch.Retries[len(sch.Retries)-1], sch.Source, true
}

// MarkRetry returns req marked as s's provider's retry number n: req itself
// when the provider marks nothing, else a marked copy.
func MarkRetry(req *message.Request, s Scheme, n int) *message.Request {
	if s == nil {
		return req
	}
	c := req.Clone()
	s.MarkRetry(c, n)
	return c
}

// RetryHeaders names the headers s's provider adds to mark a retry
// (Slack's X-Slack-Retry-Num, X-Slack-Retry-Reason), none for a provider
// that resends the same request unmarked.
func RetryHeaders(s Scheme) []string {
	if s == nil {
		return nil
	}
	r := &message.Request{}
	s.MarkRetry(r, 1)
	var names []string
	for _, h := range r.Headers {
		names = append(names, h.Name)
	}
	return names
}

// ProviderNames lists, in display order, the providers whose scheme has
// the property keep asks about: for help texts ("stripe, slack, standard, svix").
func ProviderNames(keep func(Scheme) bool) []string {
	var out []string
	for _, s := range Schemes() {
		if keep(s) {
			out = append(out, s.Name())
		}
	}
	return out
}

// --- crypto helpers ---

func macSHA256(key []byte, parts ...[]byte) []byte { return mac(sha256.New, key, parts...) }

func macSHA1(key []byte, parts ...[]byte) []byte { return mac(sha1.New, key, parts...) }

func mac(h func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(h, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// equalHex compares a hex signature with want in constant time as the
// providers' libraries do (Stripe's, GitHub's, Slack's): the exact
// lower-case hex string, so upper-case hex does not match.
func equalHex(sig string, want []byte) bool {
	return hmac.Equal([]byte(sig), []byte(hex.EncodeToString(want)))
}

// equalBase64 compares a base64 signature with want in constant time as the
// providers' libraries do (Shopify's, Twilio's, Standard Webhooks', Svix's):
// the exact standard padded base64 string, so unpadded or URL-alphabet
// encodings of the right bytes do not match.
func equalBase64(sig string, want []byte) bool {
	return hmac.Equal([]byte(sig), []byte(base64.StdEncoding.EncodeToString(want)))
}

// equalHexLoose and equalBase64Loose accept any case of hex and any
// base64 alphabet and padding: for the generic scheme, whose receiving
// code is the user's own, and to say why a strict comparison failed.
func equalHexLoose(sig string, want []byte) bool {
	got, err := hex.DecodeString(strings.TrimSpace(sig))
	if err != nil {
		return false
	}
	return hmac.Equal(got, want)
}

func equalBase64Loose(sig string, want []byte) bool {
	got, ok := decodeBase64(strings.TrimSpace(sig))
	if !ok {
		return false
	}
	return hmac.Equal(got, want)
}

// Reasons for a signature with the right bytes in a form the provider's
// libraries reject.
const (
	reasonHexCase   = "signature is not lower-case hex (the provider's libraries compare the exact lower-case string)"
	reasonBase64Pad = "signature is not canonical padded base64 (the provider's libraries compare the exact string)"
)

// mismatch is the reason sigs (none of which matched want exactly) are
// rejected: "signature mismatch", or why, when one of them holds the right
// bytes in another case of hex or another base64 form.
func mismatch(sigs []string, want []byte, base64Encoded bool) string {
	for _, sig := range sigs {
		switch {
		case base64Encoded && equalBase64Loose(sig, want):
			return reasonBase64Pad
		case !base64Encoded && equalHexLoose(sig, want):
			return reasonHexCase
		}
	}
	return "signature mismatch"
}

func decodeBase64(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// --- results ---

func valid(provider, scheme string, signedAt, now time.Time) Result {
	return Result{Valid: true, Provider: provider, Scheme: scheme, SignedAt: signedAt, CheckedAt: now}
}

func invalid(provider, scheme, reason string) Result {
	return Result{Provider: provider, Scheme: scheme, Reason: reason}
}

func missing(provider, header string) Result {
	return invalid(provider, "", "missing header "+header)
}

// checkAge judges a signature timestamp against now. past-only schemes
// (Stripe, like its libraries) accept timestamps from the future.
func checkAge(r Result, signedAt, now time.Time, tol time.Duration, pastOnly bool) Result {
	r.SignedAt, r.CheckedAt = signedAt, now
	if tol < 0 {
		return r
	}
	age := now.Sub(signedAt)
	switch {
	case age > tol:
		r.Valid = false
		r.Reason = fmt.Sprintf("timestamp %s outside tolerance %s", seconds(age), seconds(tol))
	case !pastOnly && -age > tol:
		r.Valid = false
		r.Reason = fmt.Sprintf("timestamp %s in the future outside tolerance %s", seconds(-age), seconds(tol))
	}
	return r
}

// seconds renders d as whole seconds ("412s"), or as a duration when above a day.
func seconds(d time.Duration) string {
	if d >= 24*time.Hour || d <= -24*time.Hour {
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%ds", int64(math.Round(d.Seconds())))
}

func nowOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

func tolOr(opt Options, def time.Duration) time.Duration {
	if opt.Tolerance != 0 {
		return opt.Tolerance
	}
	return def
}

// --- JSON identity rewriting ---

// topLevelValue returns the byte span [start, end) of key's value in the
// top-level JSON object body (the last occurrence, as JSON decoders keep).
func topLevelValue(body []byte, key string) (int, int, error) {
	if !json.Valid(body) {
		return 0, 0, errors.New("body is not JSON")
	}
	i := skipWS(body, 0)
	if i >= len(body) || body[i] != '{' {
		return 0, 0, errors.New("body is not a JSON object")
	}
	start, end, err := memberValue(body, i, key)
	if err == nil && start < 0 {
		return 0, 0, fmt.Errorf("body has no top-level %q", key)
	}
	return start, end, err
}

// memberValue returns the span [start, end) of key's value in the JSON
// object starting at body[i], a '{' of a valid document (the last
// occurrence, as JSON decoders keep), and start -1 when it has no key. It
// serves topLevelValue and memberSpan (templates' paths).
func memberValue(body []byte, i int, key string) (int, int, error) {
	i++
	start, end := -1, -1
	for {
		i = skipWS(body, i)
		if body[i] == '}' {
			break
		}
		if body[i] == ',' {
			i = skipWS(body, i+1)
		}
		ks := i
		i = skipString(body, i)
		var k string
		if err := json.Unmarshal(body[ks:i], &k); err != nil {
			return 0, 0, fmt.Errorf("decode key: %w", err)
		}
		i = skipWS(body, i)
		i++ // ':'
		i = skipWS(body, i)
		vs := i
		i = skipValue(body, i)
		if k == key {
			start, end = vs, i
		}
	}
	return start, end, nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	i++
	for i < len(b) {
		switch b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		}
		i++
	}
	return i
}

// skipValue returns the index after the JSON value starting at b[i] (b is valid JSON).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[i])) {
		i++
	}
	return i
}

// replaceTopLevelString sets the top-level string field key of the JSON
// object body to value, keeping every other byte.
func replaceTopLevelString(body []byte, key, value string) ([]byte, error) {
	s, e, err := topLevelValue(body, key)
	if err != nil {
		return nil, err
	}
	if body[s] != '"' {
		return nil, fmt.Errorf("top-level %q is not a string", key)
	}
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false)
	if err := je.Encode(value); err != nil {
		return nil, err
	}
	return splice(body, s, e, bytes.TrimRight(enc.Bytes(), "\n")), nil
}

// replaceTopLevelRaw sets the top-level field key to the raw JSON value raw.
func replaceTopLevelRaw(body []byte, key string, raw []byte) ([]byte, error) {
	s, e, err := topLevelValue(body, key)
	if err != nil {
		return nil, err
	}
	return splice(body, s, e, raw), nil
}

// stampTime sets the top-level field key of r's body to now in unix
// seconds, as a provider stamps a fresh delivery; a body of the user's own
// without that field is left as it is.
func stampTime(r *message.Request, key string, now time.Time) {
	if b, err := replaceTopLevelRaw(r.Body, key, []byte(strconv.FormatInt(now.Unix(), 10))); err == nil {
		r.Body = b
	}
}

func splice(b []byte, s, e int, repl []byte) []byte {
	out := make([]byte, 0, len(b)-(e-s)+len(repl))
	out = append(out, b[:s]...)
	out = append(out, repl...)
	return append(out, b[e:]...)
}

// --- ids ---

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func randomString(alphabet string, n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func newUUID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
