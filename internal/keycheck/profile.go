package keycheck

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Profile is a published Idempotency-Key contract: the statuses and
// headers an API following it answers with. Every value can be overridden
// (cmd's --reuse-status and friends), so an API with its own codes is
// judged by its own contract.
type Profile struct {
	Name string
	// Source is where the rules come from.
	Source string
	// ReuseStatus answers the same key with another request (body,
	// whitespace, query, method).
	ReuseStatus int
	// InFlightStatus answers a request whose key is still being processed.
	InFlightStatus int
	// MaxKeyLength is the longest key accepted (0: the contract sets none)
	// and KeyTooLongStatus the answer to a longer one.
	MaxKeyLength     int
	KeyTooLongStatus int
	// ReplayHeader and ReplayValue mark a replayed answer ("" : the
	// contract defines no such header).
	ReplayHeader string
	ReplayValue  string
	// Replays5xx: a stored 5xx is replayed (stripe) rather than run again.
	Replays5xx bool
	// Open5xx: the contract leaves a 5xx to the server (ietf: a retry gets
	// "the result of the previously completed operation, success or an
	// error", and other errors follow the server's documentation), so a
	// stored 5xx replayed is info and a retry that runs passes.
	Open5xx bool
	// OutageStatus answers, before doing anything, when the idempotency
	// store is unavailable (0: the contract does not say).
	OutageStatus int
	// WhitespaceIsReuse: the same JSON with other whitespace is another
	// request (a fingerprint of the bytes: bird, ietf); false when the
	// API compares parsed parameters (stripe), so it gets the stored answer.
	WhitespaceIsReuse bool
	// OpenFingerprint lists the parts of a request beyond its body
	// ("whitespace", "query", "method") whose part in the fingerprint the
	// contract leaves to the server (ietf: the draft computes the
	// fingerprint from the payload — a checksum or a match of its fields —
	// and lets the resource owner define a key's uniqueness). For these, a
	// used key that gets the stored answer or (query, method: keys scoped
	// per URL) runs as a new operation is info, not a fail.
	OpenFingerprint []string
	// ProblemJSON: the errors (reuse, in flight) are application/problem+json
	// (RFC 9457), as the ietf draft's examples are.
	ProblemJSON bool
	// Window is how long a key is kept at least (informational; --ttl
	// tests expiry).
	Window time.Duration
}

// The built-in profiles. Their sources are in docs/keycheck.md.
var (
	// Bird is one messaging API's published contract, the default.
	Bird = Profile{Name: "bird", Source: "the bird messaging API's published Idempotency-Key contract",
		ReuseStatus: 409, InFlightStatus: 409, MaxKeyLength: 255, KeyTooLongStatus: 422,
		ReplayHeader: "Idempotency-Replay", ReplayValue: "true", OutageStatus: 503, WhitespaceIsReuse: true, Window: 3 * time.Hour}
	// IETF is the httpapi working group's draft (draft-ietf-httpapi-idempotency-key-header).
	IETF = Profile{Name: "ietf", Source: "draft-ietf-httpapi-idempotency-key-header",
		ReuseStatus: 422, InFlightStatus: 409, OutageStatus: 503, WhitespaceIsReuse: true, ProblemJSON: true, Open5xx: true,
		OpenFingerprint: FingerprintParts}
	// Stripe is Stripe's API ("Idempotent requests").
	Stripe = Profile{Name: "stripe", Source: "Stripe API reference, Idempotent requests",
		ReuseStatus: 400, InFlightStatus: 409, MaxKeyLength: 255, KeyTooLongStatus: 400,
		ReplayHeader: "Idempotent-Replayed", ReplayValue: "true", Replays5xx: true, OutageStatus: 503, Window: 24 * time.Hour}
)

// FingerprintParts are the parts of a request beyond its body that a
// profile may leave to the server (OpenFingerprint), in report order.
var FingerprintParts = []string{"whitespace", "query", "method"}

// Profiles lists the built-in profiles, the default first.
var Profiles = []Profile{Bird, IETF, Stripe}

// ProfileNames lists the built-in profiles' names, the default first.
func ProfileNames() []string {
	out := make([]string, len(Profiles))
	for i, p := range Profiles {
		out[i] = p.Name
	}
	return out
}

// ProfileNamed returns the built-in profile called name.
func ProfileNamed(name string) (Profile, bool) {
	i := slices.IndexFunc(Profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return Profiles[i], true
}

// Rules lists p's values as the report shows them.
func (p Profile) Rules() []string {
	out := []string{
		fmt.Sprintf("reuse → %d", p.ReuseStatus),
		fmt.Sprintf("in flight → %d", p.InFlightStatus),
	}
	if p.MaxKeyLength > 0 {
		out = append(out, fmt.Sprintf("key over %d characters → %d", p.MaxKeyLength, p.KeyTooLongStatus))
	}
	if p.ReplayHeader != "" {
		out = append(out, "replays carry "+p.ReplayHeader+": "+p.ReplayValue)
	} else {
		out = append(out, "no replay header")
	}
	if p.Open5xx {
		out = append(out, "a 5xx kept or not: the server's choice")
	} else if p.Replays5xx {
		out = append(out, "a 5xx is kept and replayed")
	} else {
		out = append(out, "a 5xx is not kept")
	}
	if p.OutageStatus != 0 {
		out = append(out, fmt.Sprintf("store down → %d", p.OutageStatus))
	}
	if p.ProblemJSON {
		out = append(out, "errors as application/problem+json")
	}
	switch {
	case slices.Contains(p.OpenFingerprint, "whitespace"):
		out = append(out, "JSON whitespace: the server's choice")
	case p.WhitespaceIsReuse:
		out = append(out, "JSON whitespace is part of the request")
	default:
		out = append(out, "JSON whitespace is not part of the request")
	}
	var open []string
	for _, part := range p.OpenFingerprint {
		if part != "whitespace" {
			open = append(open, part)
		}
	}
	if len(open) > 0 {
		out = append(out, "a used key with another "+strings.Join(open, " or ")+": the server's choice")
	}
	return out
}

// situation is a case a profile assigns a status to, for the "bird style"
// remarks on a code that is another profile's.
type situation string

const (
	sitReuse    situation = "reuse"
	sitInFlight situation = "in flight"
	sitTooLong  situation = "a key too long"
)

func (p Profile) status(s situation) int {
	switch s {
	case sitReuse:
		return p.ReuseStatus
	case sitInFlight:
		return p.InFlightStatus
	case sitTooLong:
		return p.KeyTooLongStatus
	}
	return 0
}

// styleOf says which other built-in profiles answer s with code, for a
// report line: "409 for reuse: bird style; the ietf draft says 422". It is
// "" when code is p's own or no other profile's.
func (p Profile) styleOf(s situation, code int) string {
	if code == p.status(s) {
		return ""
	}
	var who []string
	for _, o := range Profiles {
		if o.Name != p.Name && o.status(s) == code {
			who = append(who, o.Name)
		}
	}
	if len(who) == 0 {
		return ""
	}
	return fmt.Sprintf("%d for %s: %s style; %s says %d", code, s, strings.Join(who, "/"), p.title(), p.status(s))
}

// title names p in a sentence.
func (p Profile) title() string {
	switch p.Name {
	case "ietf":
		return "the ietf draft"
	case "bird":
		return "the bird contract"
	case "stripe":
		return "Stripe"
	}
	return "profile " + p.Name
}

// errorShape says what is wrong with the body of an error answer a that
// has the profile's status ("" : nothing): under a profile whose errors are
// problem+json, another Content-Type.
func (p Profile) errorShape(ct string) string {
	if !p.ProblemJSON {
		return ""
	}
	media, _, _ := strings.Cut(ct, ";")
	if strings.EqualFold(strings.TrimSpace(media), "application/problem+json") {
		return ""
	}
	if ct == "" {
		ct = "no Content-Type"
	}
	return fmt.Sprintf("the error came as %s; %s's errors are application/problem+json", ct, p.title())
}
