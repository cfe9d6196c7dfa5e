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
		return stripeIdentity(req)
	case h.Has("X-GitHub-Event") || h.Has("X-GitHub-Delivery"):
		return githubIdentity(req)
	case h.Has("X-Shopify-Topic"):
		return shopifyIdentity(req)
	case h.Has("X-Slack-Signature"):
		return slackIdentity(req)
	case h.Has("X-Twilio-Signature"):
		return twilioIdentity(req)
	case h.Has("svix-id"):
		return svixIdentity(req)
	case h.Has("webhook-id") && h.Has("webhook-signature"):
		return standardIdentity(req)
	}
	return Identity{Provider: "generic"}
}

// IdentityFor extracts the identity of req as if it came from provider.
func IdentityFor(provider string, req *message.Request) Identity {
	switch provider {
	case "stripe":
		return stripeIdentity(req)
	case "github":
		return githubIdentity(req)
	case "shopify":
		return shopifyIdentity(req)
	case "slack":
		return slackIdentity(req)
	case "twilio":
		return twilioIdentity(req)
	case "svix":
		return svixIdentity(req)
	case "standard":
		return standardIdentity(req)
	}
	return Identity{Provider: provider}
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

func stripeIdentity(req *message.Request) Identity {
	m := jsonObject(req.Body)
	return Identity{Provider: "stripe", EventID: str(m, "id"), EventType: str(m, "type")}
}

func githubIdentity(req *message.Request) Identity {
	id := Identity{Provider: "github", EventID: req.Headers.Get("X-GitHub-Delivery"), EventType: req.Headers.Get("X-GitHub-Event")}
	if m := jsonObject(req.Body); m != nil && id.EventType != "" {
		if a := str(m, "action"); a != "" {
			id.EventType += "." + a
		}
	}
	return id
}

func shopifyIdentity(req *message.Request) Identity {
	id := Identity{Provider: "shopify", EventType: req.Headers.Get("X-Shopify-Topic")}
	ev := req.Headers.Get("X-Shopify-Event-Id")
	wh := req.Headers.Get("X-Shopify-Webhook-Id")
	id.Extra = map[string]string{}
	if ev != "" {
		id.Extra["shopify_event_id"] = ev
	}
	if wh != "" {
		id.Extra["shopify_webhook_id"] = wh
	}
	if len(id.Extra) == 0 {
		id.Extra = nil
	}
	id.EventID = ev
	if id.EventID == "" {
		id.EventID = wh
	}
	return id
}

func slackIdentity(req *message.Request) Identity {
	id := Identity{Provider: "slack"}
	m := jsonObject(req.Body)
	if m == nil {
		return id
	}
	id.EventID = str(m, "event_id")
	if ev, ok := m["event"].(map[string]any); ok {
		id.EventType = str(ev, "type")
	}
	if id.EventType == "" {
		id.EventType = str(m, "type")
	}
	return id
}

func twilioIdentity(req *message.Request) Identity {
	return Identity{Provider: "twilio", EventID: req.Headers.Get("I-Twilio-Idempotency-Token")}
}

func standardIdentity(req *message.Request) Identity {
	m := jsonObject(req.Body)
	return Identity{Provider: "standard", EventID: req.Headers.Get("webhook-id"), EventType: str(m, "type")}
}

func svixIdentity(req *message.Request) Identity {
	m := jsonObject(req.Body)
	return Identity{Provider: "svix", EventID: req.Headers.Get("svix-id"), EventType: str(m, "type")}
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
