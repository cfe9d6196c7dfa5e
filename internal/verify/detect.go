package verify

import (
	"encoding/json"
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

// Detect names the provider of req from its headers and extracts the event
// identity. It never fails: unparseable bodies leave the fields empty.
func Detect(req *message.Request) Identity {
	h := req.Headers
	switch {
	case h.Has("Stripe-Signature"):
		return IdentityFor("stripe", req)
	case h.Has("X-GitHub-Event") || h.Has("X-GitHub-Delivery"):
		return IdentityFor("github", req)
	case h.Has("X-Shopify-Topic") || h.Has("X-Shopify-Hmac-Sha256") || h.Has("Shopify-Hmac-Sha256"):
		return IdentityFor("shopify", req)
	case h.Has("X-Slack-Signature"):
		return IdentityFor("slack", req)
	case h.Has("X-Twilio-Signature"):
		return IdentityFor("twilio", req)
	case h.Has("svix-id"):
		return IdentityFor("svix", req)
	case h.Has("webhook-id") && h.Has("webhook-signature"):
		return IdentityFor("standard", req)
	}
	return Identity{Provider: "generic"}
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

// Providers lists the provider names hookreplay knows, in display order.
var Providers = []string{"stripe", "github", "shopify", "slack", "twilio", "standard", "svix", "generic"}

// KnownProvider reports whether name is one of Providers.
func KnownProvider(name string) bool {
	for _, p := range Providers {
		if strings.EqualFold(p, name) {
			return true
		}
	}
	return false
}
