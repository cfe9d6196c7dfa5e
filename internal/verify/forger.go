package verify

import "github.com/hookreplay/hookreplay/internal/message"

// BareChallenger is a Scheme whose provider's URL-verification handshake
// wants its challenge back as the whole answer, in plain text (Meta's
// hub.challenge), where Challenge's is echoed inside capture's JSON.
type BareChallenger interface {
	// BareChallenge is the text req asks to have echoed back as the whole
	// body, "" when req is no such handshake.
	BareChallenge(req *message.Request) string
}

// Forger is a Scheme whose signature does not cover the body (Mercado Pago
// signs the query's data.id, the request id and a timestamp), so a copy whose
// body was changed after signing is one the provider's own check accepts:
// check's tamper phase forges what the signature does cover instead.
type Forger interface {
	// Forge changes req (a correctly signed copy owned by the caller) where
	// the signature covers it, keeping it well-formed, and says what it
	// changed; ok is false when req has nothing signed to change.
	Forge(req *message.Request) (what string, ok bool)
}

// EventIDShaper is a Scheme whose event ids differ in shape with what the
// event is about, so a fresh one must be shaped after the delivery's own:
// a Mercado Pago payment notification is numbered, an Orders API one is
// known by its order's ORD01… id, which a handler may parse or look up.
type EventIDShaper interface {
	// NewEventIDFor returns a fresh event id shaped like req's, "" when
	// NewEventID's is already that shape.
	NewEventIDFor(req *message.Request) string
}

// NewEventIDFor returns a fresh event id for a copy of req: shaped like
// req's own where the scheme's ids differ in shape (EventIDShaper), else
// s.NewEventID().
func NewEventIDFor(s Scheme, req *message.Request) string {
	if id := shapedEventID(s, req); id != "" {
		return id
	}
	return s.NewEventID()
}

// shapedEventID is s's fresh id shaped like req's, "" when s does not
// shape its ids.
func shapedEventID(s Scheme, req *message.Request) string {
	if x, ok := s.(EventIDShaper); ok && req != nil {
		return x.NewEventIDFor(req)
	}
	return ""
}
