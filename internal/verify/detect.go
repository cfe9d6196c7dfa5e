package verify

import (
	"encoding/json"

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

// Detect names the provider of req from its headers and extracts the event
// identity. It never fails: unparseable bodies leave the fields empty.
func Detect(req *message.Request) Identity {
	_, id := DetectScheme(req)
	return id
}

// DetectScheme is Detect that also returns the scheme detected (generic
// when none is), for a caller that goes on to verify or sign with it.
func DetectScheme(req *message.Request) (Scheme, Identity) {
	for _, s := range schemes {
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

// jsonObject decodes body as a JSON object, or returns nil.
func jsonObject(body []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil
	}
	return m
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
