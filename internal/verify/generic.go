package verify

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// genericScheme is an HMAC of the raw body in a header the user names, with
// the hash, encoding and prefix given in Options.
// It is the fallback when no provider's headers are recognised, and knows
// nothing about the sender: no identity, timeout or retries.
type genericScheme struct{}

var _ Scheme = genericScheme{}

// Generic is the name of the generic scheme, and what a delivery whose
// headers no provider recognises is stored as.
const Generic = "generic"

func (genericScheme) Name() string                       { return Generic }
func (genericScheme) Title() string                      { return Generic }
func (genericScheme) Detects(message.Headers) bool       { return false }
func (genericScheme) Tolerance() time.Duration           { return 0 }
func (genericScheme) SignatureHeaders() []string         { return nil }
func (genericScheme) SignsURL() bool                     { return false }
func (genericScheme) BodyEdited(*message.Request) string { return "" }
func (genericScheme) IdentityInBody() bool               { return false }
func (genericScheme) IdentitySigned() bool               { return false }
func (genericScheme) NewEventID() string                 { return newUUID() }
func (genericScheme) ResponseTimeout() time.Duration     { return 0 }
func (genericScheme) Retries() Schedule                  { return Schedule{} }
func (genericScheme) MarkRetry(*message.Request, int)    {}
func (genericScheme) Challenge(*message.Request) string  { return "" }
func (genericScheme) Samples() []Fixture                 { return nil }
func (genericScheme) Sample(*message.Request, string, string, time.Time) error {
	return errors.New("the generic provider has no sample events")
}
func (genericScheme) Identity(*message.Request) Identity {
	return Identity{Provider: "generic"}
}
func (genericScheme) SignedAt(*message.Request) (time.Time, bool) {
	return time.Time{}, false
}

// genericParams validates and defaults the generic options.
func genericParams(opt Options) (func() hash.Hash, string, error) {
	if strings.TrimSpace(opt.Header) == "" {
		return nil, "", &OptionError{Field: "Header", Provider: Generic}
	}
	var h func() hash.Hash
	switch strings.ToLower(opt.Algo) {
	case "", "sha256":
		h = sha256.New
	case "sha1":
		h = sha1.New
	case "sha512":
		h = sha512.New
	default:
		return nil, "", &OptionError{Field: "Algo", Provider: Generic, Value: opt.Algo, Want: "sha256, sha1 or sha512"}
	}
	enc := strings.ToLower(opt.Encoding)
	switch enc {
	case "":
		enc = "hex"
	case "hex", "base64":
	default:
		return nil, "", &OptionError{Field: "Encoding", Provider: Generic, Value: opt.Encoding, Want: "hex or base64"}
	}
	return h, enc, nil
}

func algoName(opt Options) string {
	if opt.Algo == "" {
		return "sha256"
	}
	return strings.ToLower(opt.Algo)
}

func (genericScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	h, enc, err := genericParams(opt)
	if err != nil {
		return Result{}, err
	}
	scheme := algoName(opt)
	if !r.Headers.Has(opt.Header) {
		return missing("generic", opt.Header), nil
	}
	v := strings.TrimSpace(r.Headers.Get(opt.Header))
	if opt.Prefix != "" {
		if !strings.HasPrefix(v, opt.Prefix) {
			return invalid("generic", scheme, fmt.Sprintf("%s header does not start with %q", opt.Header, opt.Prefix)), nil
		}
		v = v[len(opt.Prefix):]
	}
	want := mac(h, []byte(secret), r.Body)
	ok := false
	if enc == "hex" {
		ok = equalHexLoose(v, want)
	} else {
		ok = equalBase64Loose(v, want)
	}
	if !ok {
		return invalid("generic", scheme, "signature mismatch"), nil
	}
	return valid("generic", scheme, time.Time{}, opt.Now), nil
}

func (genericScheme) Sign(r *message.Request, secret string, opt Options) error {
	h, enc, err := genericParams(opt)
	if err != nil {
		return err
	}
	sum := mac(h, []byte(secret), r.Body)
	var v string
	if enc == "hex" {
		v = hex.EncodeToString(sum)
	} else {
		v = base64.StdEncoding.EncodeToString(sum)
	}
	r.Headers = r.Headers.Set(opt.Header, opt.Prefix+v)
	return nil
}

func (genericScheme) Reidentify(*message.Request, string) error {
	return fmt.Errorf("a generic delivery has no known event identity")
}
