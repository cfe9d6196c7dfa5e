package verify

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// genericScheme is an HMAC of the raw body in a header the user names, with
// the hash, encoding and prefix given in Options.
type genericScheme struct{}

func (genericScheme) Name() string               { return "generic" }
func (genericScheme) Tolerance() time.Duration   { return 0 }
func (genericScheme) SignatureHeaders() []string { return nil }
func (genericScheme) IdentityInBody() bool       { return false }
func (genericScheme) NewEventID() string         { return newUUID() }
func (genericScheme) Identity(*message.Request) Identity {
	return Identity{Provider: "generic"}
}
func (genericScheme) SignedAt(*message.Request) (time.Time, bool) {
	return time.Time{}, false
}

// genericParams validates and defaults the generic options.
func genericParams(opt Options) (func() hash.Hash, string, error) {
	if strings.TrimSpace(opt.Header) == "" {
		return nil, "", fmt.Errorf("the generic provider needs --header NAME (the header carrying the signature)")
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
		return nil, "", fmt.Errorf("unknown --algo %q (want sha256, sha1 or sha512)", opt.Algo)
	}
	enc := strings.ToLower(opt.Encoding)
	switch enc {
	case "":
		enc = "hex"
	case "hex", "base64":
	default:
		return nil, "", fmt.Errorf("unknown --encoding %q (want hex or base64)", opt.Encoding)
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
		ok = equalHex(v, want)
	} else {
		ok = equalBase64(v, want)
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
