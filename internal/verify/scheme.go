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
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Scheme is one provider's signature scheme and event identity. Every
// provider lives in its own file and is registered in schemes below.
type Scheme interface {
	// Name is the provider name ("stripe", "github", ...).
	Name() string
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
	// Reidentify gives req (a copy owned by the caller) the event id newID,
	// rewriting only the bytes where the identity lives.
	Reidentify(req *message.Request, newID string) error
	// NewEventID returns a fresh, realistic event id for the provider.
	NewEventID() string
	// SignatureHeaders names the headers Sign writes, in the order a sender adds them.
	SignatureHeaders() []string
	// IdentityInBody reports whether the event id lives in the body.
	IdentityInBody() bool
}

// schemes is the single registry of provider schemes; adding a provider
// means adding its file and one line here.
var schemes = map[string]Scheme{
	"stripe":   stripeScheme{},
	"github":   githubScheme{},
	"shopify":  shopifyScheme{},
	"slack":    slackScheme{},
	"twilio":   twilioScheme{},
	"standard": standardScheme{name: "standard", prefix: "webhook"},
	"svix":     standardScheme{name: "svix", prefix: "svix"},
	"generic":  genericScheme{},
}

// ErrUnknownProvider is wrapped by every error about a provider name hookreplay does not know.
var ErrUnknownProvider = errors.New("unknown provider")

// SchemeFor returns the scheme of provider (case-insensitive).
func SchemeFor(provider string) (Scheme, error) {
	s, ok := schemes[strings.ToLower(strings.TrimSpace(provider))]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownProvider, provider, strings.Join(Providers, ", "))
	}
	return s, nil
}

// IdentityInBody reports whether provider keeps its event id in the body
// (stripe, slack) rather than in a header.
func IdentityInBody(provider string) bool {
	s, err := SchemeFor(provider)
	return err == nil && s.IdentityInBody()
}

// SignatureHeaders names the headers Sign writes for provider.
func SignatureHeaders(provider string) []string {
	s, err := SchemeFor(provider)
	if err != nil {
		return nil
	}
	return s.SignatureHeaders()
}

// NewEventID returns a fresh event id shaped like provider's own: evt_… for
// stripe, a UUID for github and shopify, Ev… for slack, msg_… for standard
// and svix.
func NewEventID(provider string) string {
	s, err := SchemeFor(provider)
	if err != nil {
		return newUUID()
	}
	return s.NewEventID()
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

// equalHex compares a hex signature with want in constant time (case-insensitive hex).
func equalHex(sig string, want []byte) bool {
	got, err := hex.DecodeString(strings.TrimSpace(sig))
	if err != nil {
		return false
	}
	return hmac.Equal(got, want)
}

// equalBase64 compares a base64 signature (standard or URL alphabet, padded or not) with want in constant time.
func equalBase64(sig string, want []byte) bool {
	got, ok := decodeBase64(strings.TrimSpace(sig))
	if !ok {
		return false
	}
	return hmac.Equal(got, want)
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
	if start < 0 {
		return 0, 0, fmt.Errorf("body has no top-level %q", key)
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
