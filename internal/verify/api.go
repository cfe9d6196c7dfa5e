package verify

// This file is the contract the rest of hookreplay uses (capture, replay,
// check). The bodies are placeholders until the provider schemes land
// (issue 4); the signatures are fixed.

import (
	"errors"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Options tune verification and signing.
type Options struct {
	// Tolerance is the allowed age of a timestamped signature; 0 means the
	// provider's default (300 s for stripe, slack, standard, svix).
	Tolerance time.Duration
	// Now is the instant the timestamp is judged against — for a stored
	// delivery its received_at, not the wall clock.
	Now time.Time
	// URL is the full URL the sender was configured with (Twilio signs it).
	URL string
	// Generic scheme parameters.
	Header, Algo, Encoding, Prefix string
}

// Result is the outcome of Verify.
type Result struct {
	Valid    bool
	Provider string
	Scheme   string // "v1", "sha256", ...
	SignedAt time.Time
	Reason   string // when !Valid: "signature mismatch", "timestamp 412s outside tolerance 300s", ...
}

// ErrNoSigning is returned for providers with no signing scheme yet.
var ErrNoSigning = errors.New("signing scheme not implemented")

// Verify checks req's signature for provider with secret.
func Verify(req *message.Request, provider, secret string, opt Options) (Result, error) {
	return Result{}, ErrNoSigning
}

// Sign returns a copy of req carrying a valid signature for provider, timestamped opt.Now.
func Sign(req *message.Request, provider, secret string, opt Options) (*message.Request, error) {
	return nil, ErrNoSigning
}

// Resign returns a copy of req signed with a fresh timestamp now.
func Resign(req *message.Request, provider, secret string, now time.Time, opt Options) (*message.Request, error) {
	return nil, ErrNoSigning
}

// Reidentify returns a copy of req with a new event identity newID; when
// secret is not empty the copy is re-signed at now.
func Reidentify(req *message.Request, provider, newID, secret string, now time.Time, opt Options) (*message.Request, error) {
	return nil, ErrNoSigning
}

// SignedAt returns the timestamp inside req's signature, when the scheme has one.
func SignedAt(req *message.Request, provider string) (time.Time, bool) {
	return time.Time{}, false
}

// DefaultTolerance is the provider's signature age tolerance (0 when it has none).
func DefaultTolerance(provider string) time.Duration {
	return 0
}
