package verify

// Declared schemes in the registry: the user's, registered when a command
// starts, and the built-in providers that are declarations themselves.

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// declared holds the schemes Register added (the user's declarations),
// set once when a command starts; they come before the built-ins, so that
// a declaration can claim a delivery a built-in would otherwise take.
var declared atomic.Pointer[[]Scheme]

// all is the registry in detection order: declared schemes, then schemes.
func all() []Scheme {
	d := declared.Load()
	if d == nil || len(*d) == 0 {
		return schemes
	}
	return append(slices.Clone(*d), schemes...)
}

// Register makes the declared schemes ds (each from Declare) part of the
// registry, in place of any registered before: detection, SchemeFor,
// Schemes and every list of providers see them from then on.
func Register(ds []Scheme) error {
	seen := map[string]bool{}
	for _, s := range ds {
		if !Declared(s) {
			return fmt.Errorf("register %s: not a declared scheme", s.Name())
		}
		if seen[s.Name()] {
			return fmt.Errorf("provider %s is declared twice", s.Name())
		}
		seen[s.Name()] = true
	}
	c := slices.Clone(ds)
	declared.Store(&c)
	return nil
}

// Declared reports whether s was declared by the user rather than built in.
func Declared(s Scheme) bool {
	switch s.(type) {
	case *declaredScheme, forgingDeclared:
		return true
	}
	return false
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
