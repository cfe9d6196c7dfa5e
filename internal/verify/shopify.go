package verify

import (
	"encoding/base64"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// shopifyScheme: X-Shopify-Hmac-Sha256 (newer deliveries: Shopify-Hmac-Sha256),
// base64 HMAC-SHA256 of the raw body keyed with the app's client secret.
type shopifyScheme struct{}

var _ Scheme = shopifyScheme{}

const (
	shopifyHmac      = "X-Shopify-Hmac-Sha256"
	shopifyHmacNew   = "Shopify-Hmac-Sha256"
	shopifyEventID   = "X-Shopify-Event-Id"
	shopifyWebhookID = "X-Shopify-Webhook-Id"
)

func (shopifyScheme) Name() string                       { return "shopify" }
func (shopifyScheme) Title() string                      { return "Shopify" }
func (shopifyScheme) Tolerance() time.Duration           { return 0 }
func (shopifyScheme) SignatureHeaders() []string         { return []string{shopifyHmac} }
func (shopifyScheme) SignsURL() bool                     { return false }
func (shopifyScheme) BodyEdited(*message.Request) string { return "" }
func (shopifyScheme) IdentityInBody() bool               { return false }
func (shopifyScheme) IdentitySigned() bool               { return false }
func (shopifyScheme) NewEventID() string                 { return newUUID() }
func (shopifyScheme) ResponseTimeout() time.Duration     { return 30 * time.Second }
func (shopifyScheme) MarkRetry(*message.Request, int)    {}
func (shopifyScheme) Challenge(*message.Request) string  { return "" }
func (shopifyScheme) Detects(h message.Headers) bool {
	return h.Has("X-Shopify-Topic") || h.Has(shopifyHmac) || h.Has(shopifyHmacNew)
}
func (shopifyScheme) SignedAt(*message.Request) (time.Time, bool) {
	return time.Time{}, false
}

// header returns the first present of the classic and the unprefixed name.
func shopifyGet(h message.Headers, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	return h.Get(name[2:]) // "Shopify-..." without "X-"
}

func (shopifyScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: "shopify", EventType: shopifyGet(r.Headers, "X-Shopify-Topic")}
	ev := shopifyGet(r.Headers, shopifyEventID)
	wh := shopifyGet(r.Headers, shopifyWebhookID)
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

func (shopifyScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	name := shopifyHmac
	if !r.Headers.Has(name) {
		name = shopifyHmacNew
	}
	if !r.Headers.Has(name) {
		return missing("shopify", shopifyHmac), nil
	}
	sig := r.Headers.Get(name)
	if _, ok := decodeBase64(sig); !ok || sig == "" {
		return invalid("shopify", "sha256", "malformed "+name+" header: signature is not base64"), nil
	}
	if want := macSHA256([]byte(secret), r.Body); !equalBase64(sig, want) {
		return invalid("shopify", "sha256", mismatch([]string{sig}, want, true)), nil
	}
	return valid("shopify", "sha256", time.Time{}, opt.Now), nil
}

func (shopifyScheme) Sign(r *message.Request, secret string, opt Options) error {
	v := base64.StdEncoding.EncodeToString(macSHA256([]byte(secret), r.Body))
	set := false
	for _, n := range []string{shopifyHmac, shopifyHmacNew} {
		if r.Headers.Has(n) {
			r.Headers, set = r.Headers.Set(n, v), true
		}
	}
	if !set {
		r.Headers = r.Headers.Set(shopifyHmac, v)
	}
	return nil
}

// Reidentify sets the event id and gives the delivery a fresh webhook id:
// Shopify's event id names the event across retries and subscriptions, the
// webhook id one delivery, so a new event has new values for both.
func (sc shopifyScheme) Reidentify(r *message.Request, newID string) error {
	hasEv := r.Headers.Has(shopifyEventID) || r.Headers.Has(shopifyEventID[2:])
	for _, n := range []string{shopifyEventID, shopifyEventID[2:]} {
		if r.Headers.Has(n) {
			r.Headers = r.Headers.Set(n, newID)
		}
	}
	whID := newID
	if hasEv {
		whID = sc.NewEventID()
	}
	setWh := false
	for _, n := range []string{shopifyWebhookID, shopifyWebhookID[2:]} {
		if r.Headers.Has(n) {
			r.Headers, setWh = r.Headers.Set(n, whID), true
		}
	}
	if !hasEv && !setWh {
		r.Headers = r.Headers.Set(shopifyEventID, newID)
		r.Headers = r.Headers.Set(shopifyWebhookID, sc.NewEventID())
	}
	return nil
}

// Retries: "retries 19 times over the next 48 hours" and removes the
// subscription after 19 consecutive failures; exponential backoff,
// intervals not published. Geometric factor 1.50, last at 48 h.
// (Apps on newer API versions see 8 retries over 4 hours.)
func (shopifyScheme) Retries() Schedule {
	return Schedule{
		Retries: []time.Duration{
			1 * time.Minute,
			2*time.Minute + 30*time.Second,
			4*time.Minute + 44*time.Second,
			8*time.Minute + 6*time.Second,
			13*time.Minute + 8*time.Second,
			20*time.Minute + 39*time.Second,
			31*time.Minute + 56*time.Second,
			48*time.Minute + 49*time.Second,
			1*time.Hour + 14*time.Minute + 6*time.Second,
			1*time.Hour + 51*time.Minute + 58*time.Second,
			2*time.Hour + 48*time.Minute + 40*time.Second,
			4*time.Hour + 13*time.Minute + 35*time.Second,
			6*time.Hour + 20*time.Minute + 44*time.Second,
			9*time.Hour + 31*time.Minute + 8*time.Second,
			14*time.Hour + 16*time.Minute + 15*time.Second,
			21*time.Hour + 23*time.Minute + 13*time.Second,
			32*time.Hour + 2*time.Minute + 34*time.Second,
			48 * time.Hour,
		},
		Final:  "webhook subscription removed after 19 consecutive failures",
		Source: "https://shopify.dev/docs/apps/build/webhooks/troubleshooting-webhooks (19 attempts over 48 h, then the subscription is removed; intervals fitted)",
	}
}

func (shopifyScheme) Samples() []Fixture {
	return []Fixture{
		{"shopify", "orders/create", "shopify/orders-create.json", "test order #9999, two line items"},
		{"shopify", "app/uninstalled", "shopify/app-uninstalled.json", "the app uninstalled from hookreplay-demo.myshopify.com"},
	}
}

func (shopifyScheme) Sample(r *message.Request, event, id string, now time.Time) error {
	if event == "" {
		return &OptionError{Field: "Event", Provider: "shopify", Detail: "X-Shopify-Topic"}
	}
	addHeaders(r,
		"Accept", "*/*",
		"Content-Type", "application/json",
		"User-Agent", "Shopify-Captain-Hook",
		"X-Shopify-API-Version", "2024-07",
		shopifyEventID, id,
		"X-Shopify-Shop-Domain", "hookreplay-demo.myshopify.com",
		"X-Shopify-Topic", event,
		"X-Shopify-Triggered-At", now.UTC().Format("2006-01-02T15:04:05.000000000Z"),
		shopifyWebhookID, newUUID())
	return nil
}
