package verify

// Why a signature does not match, in one place: hookreplay's verify, the
// TUI's signature tab and check (a handler that refuses a correctly signed
// copy) all word it from here. An HMAC says nothing about why it differs,
// so this names the usual causes, and, where the body is JSON or text that
// a proxy commonly re-encodes, tries the usual re-encodings: when one of
// them verifies, that is the answer rather than a list of guesses.

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Verifier is who checked the signature that did not match.
type Verifier int

const (
	// ByHookreplay: hookreplay verified a request it stored or was given
	// (verify, capture's line, the TUI).
	ByHookreplay Verifier = iota
	// ByHandler: the handler under test refused a copy hookreplay signed
	// correctly (check).
	ByHandler
)

// MismatchCauses words why a signature may not match for verifier v, most
// likely first; secret names the secret as the user gave it ("--secret",
// "STRIPE_WEBHOOK_SECRET", or "the secret").
func MismatchCauses(v Verifier, secret string) string {
	if v == ByHandler {
		return "the handler verifies with another secret (check that " + secret + " is its signing secret), " +
			"or verifies a re-encoded body instead of the raw request bytes (a JSON body parser ran first: express.json() or " +
			"JSON.stringify(req.body) before constructEvent, Flask's request.json; verify the raw body)"
	}
	return "it was signed with another secret (check that " + secret + " is this endpoint's: a provider's CLI forwarder such as `stripe listen` " +
		"signs with a secret of its own, test and live mode have their own, a rotated secret replaces the old one), " +
		"or the body was re-encoded after it was signed (a forwarder or proxy parsed and re-serialised it — smee does —, " +
		"or it was rebuilt from a format that keeps no raw bytes), " +
		"or a proxy rewrote the request on the way (decompressed it, changed its line endings or charset)"
}

// reencoding is one way a body is commonly re-encoded between a sender and
// a verifier, undone: apply returns the body as it probably was signed, or
// nil when the way does not apply.
type reencoding struct {
	what  string // how the signed body differs from the one verified
	apply func(b []byte) []byte
	// newline: also try the undone body with a final newline (Stripe's
	// pretty-printed bodies end with one; a re-serialiser drops it).
	newline bool
}

// reencodings are tried in order: the smallest change first, since the
// JSON ones also undo a final newline.
var reencodings = []reencoding{
	{"it was signed with a trailing newline, which was dropped", func(b []byte) []byte { return append(append([]byte(nil), b...), '\n') }, false},
	{"a trailing newline was added after signing", func(b []byte) []byte {
		if t, ok := bytes.CutSuffix(b, []byte("\n")); ok {
			return bytes.TrimSuffix(t, []byte("\r"))
		}
		return nil
	}, false},
	{`characters were escaped after signing (<, > and & as \u003c, \u003e, \u0026: a Go JSON encoder re-serialised it)`, func(b []byte) []byte {
		r := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
		if r == string(b) {
			return nil
		}
		return []byte(r)
	}, false},
	{"line endings were changed to CRLF after signing", func(b []byte) []byte {
		if !bytes.Contains(b, []byte("\r\n")) {
			return nil
		}
		return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}, false},
	{"it was signed pretty-printed (2-space indent, as Stripe sends it) and re-serialised", func(b []byte) []byte { return indentJSON(b, "  ") }, true},
	{"it was signed compact (as GitHub sends it) and re-serialised pretty-printed", func(b []byte) []byte {
		var out bytes.Buffer
		if !json.Valid(b) || json.Compact(&out, b) != nil || bytes.Equal(out.Bytes(), b) {
			return nil
		}
		return out.Bytes()
	}, false},
	{"it was signed pretty-printed with a 4-space indent and re-serialised", func(b []byte) []byte { return indentJSON(b, "    ") }, true},
}

// indentJSON is b re-indented with indent, or nil when b is not JSON or
// already is exactly that.
func indentJSON(b []byte, indent string) []byte {
	var compact, out bytes.Buffer
	if !json.Valid(b) || json.Compact(&compact, b) != nil || json.Indent(&out, compact.Bytes(), "", indent) != nil {
		return nil
	}
	if bytes.Equal(out.Bytes(), b) {
		return nil
	}
	return out.Bytes()
}

// Reencoded looks for the usual re-encoding of req's body after which its
// signature verifies with secret: it returns how the signed body differed
// from the one given, or "" when none of them verifies (the secret is the
// likelier cause then, or a change no re-encoding explains).
func Reencoded(s Scheme, req *message.Request, secret string, opt Options) string {
	for _, re := range reencodings {
		b := re.apply(req.Body)
		if b == nil {
			continue
		}
		bodies := [][]byte{b}
		if re.newline && !bytes.HasSuffix(b, []byte("\n")) {
			bodies = append(bodies, append(b, '\n'))
		}
		for _, b := range bodies {
			c := req.Clone()
			c.Body = b
			if r, err := VerifyWith(s, c, secret, opt); err == nil && r.Valid {
				return re.what
			}
		}
	}
	return ""
}

// WhyMismatch is what follows "signature mismatch" for a request whose
// signature did not verify with secret (named secretName): the re-encoding
// that explains it when one does, else the usual causes.
func WhyMismatch(s Scheme, req *message.Request, secret, secretName string, opt Options) string {
	if e, ok := s.(MismatchExplainer); ok {
		return e.MismatchCauses(secretName)
	}
	if what := Reencoded(s, req, secret, opt); what != "" {
		return "the body was re-encoded after it was signed: it verifies once that is undone (" + what + "); verify the bytes the provider sent, before any parser or proxy touched them"
	}
	causes := MismatchCauses(ByHookreplay, secretName)
	if s.SignsURL() && opt.URL != "" {
		// The URL is the likeliest: any difference in scheme, host, port,
		// path or query breaks it.
		causes = "the URL given is not the one " + s.Title() + " signed (it signs the URL it posts to exactly: scheme, host, path and query), or " + causes
	}
	return causes
}

// MismatchExplainer is a Scheme whose signature covers other parts of the
// request than the usual ones (Mercado Pago's: the query's data.id and a
// header, not the body), so the usual causes of a mismatch are not its.
type MismatchExplainer interface {
	// MismatchCauses words why a signature may not match, most likely
	// first; secretName names the secret as the user gave it.
	MismatchCauses(secretName string) string
}
