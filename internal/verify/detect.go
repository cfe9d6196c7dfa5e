package verify

import (
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Identity is what hookreplay knows about a delivery's event: who sent it,
// which event it is, and of what type. Extra holds secondary identifiers.
type Identity struct {
	Provider  string            `json:"provider"`
	EventID   string            `json:"event_id"`
	EventType string            `json:"event_type"`
	Extra     map[string]string `json:"extra,omitempty"`
}

// ExtraEventIDs is the Extra key listing, space-separated and in body
// order, every event id of a delivery that carries several (a WhatsApp POST
// batching messages); EventID is the first of them.
const ExtraEventIDs = "event_ids"

// EventIDs returns every event id of a delivery whose event id is eventID
// and whose secondary identifiers are extra: the ids in extra's
// ExtraEventIDs, or eventID alone (none when it is empty).
func EventIDs(eventID string, extra map[string]string) []string {
	if all := strings.Fields(extra[ExtraEventIDs]); len(all) > 0 {
		return all
	}
	if eventID == "" {
		return nil
	}
	return []string{eventID}
}

// RequestDetector is a Scheme that needs more than the headers to tell its
// deliveries from another provider's (Meta shares GitHub's signature header
// and tells its products apart by the body's "object"): Detect asks
// DetectsRequest instead of Detects.
type RequestDetector interface {
	DetectsRequest(req *message.Request) bool
}

// Detect names the provider of req from its headers (and, for a
// RequestDetector, the rest of the request) and extracts the event
// identity. It never fails: unparseable bodies leave the fields empty.
func Detect(req *message.Request) Identity {
	_, id := DetectScheme(req)
	return id
}

// DetectScheme is Detect that also returns the scheme detected (generic
// when none is), for a caller that goes on to verify or sign with it.
func DetectScheme(req *message.Request) (Scheme, Identity) {
	for _, s := range all() {
		if rd, ok := s.(RequestDetector); ok {
			if rd.DetectsRequest(req) {
				return s, s.Identity(req)
			}
			continue
		}
		if s.Detects(req.Headers) {
			return s, s.Identity(req)
		}
	}
	return genericScheme{}, Identity{Provider: Generic}
}

// IdentityFor extracts the identity of req as if it came from provider.
func IdentityFor(provider string, req *message.Request) Identity {
	s, err := SchemeFor(provider)
	if err != nil {
		return Identity{Provider: provider}
	}
	return s.Identity(req)
}

func str(m map[string]any, key string) string {
	if m == nil {
		return ""
	}
	if s, ok := m[key].(string); ok {
		return s
	}
	return ""
}
