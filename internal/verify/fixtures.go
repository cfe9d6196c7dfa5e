package verify

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// fixtureFS holds realistic provider payloads that `hookreplay send` and the
// demo deliver; testdata/providers/README.md names where each comes from.
//
//go:embed fixtures
var fixtureFS embed.FS

// Fixture is one deliverable sample event.
type Fixture struct {
	Provider string
	Event    string // "invoice.paid", "issues.opened", "orders/create", ...
	File     string // path inside the embedded fixtures directory
	Summary  string
}

// fixtures lists every sample event, per provider in display order.
var fixtures = []Fixture{
	{"stripe", "payment_intent.succeeded", "stripe/payment_intent.succeeded.json", "a $20.00 card payment succeeded"},
	{"stripe", "checkout.session.completed", "stripe/checkout.session.completed.json", "a Checkout subscription session completed"},
	{"stripe", "invoice.paid", "stripe/invoice.paid.json", "a $49.00 subscription invoice paid"},
	{"stripe", "invoice.payment_succeeded", "stripe/invoice.payment_succeeded.json", "amount_paid 5000 for customer cus_QpB3d9uYnWx2Ke"},
	{"stripe", "charge.refunded", "stripe/charge.refunded.json", "a $20.00 charge fully refunded"},
	{"github", "push", "github/push.json", "one commit pushed to Codertocat/Hello-World main"},
	{"github", "issues.opened", "github/issues.opened.json", "issue #1 opened in Codertocat/Hello-World"},
	{"shopify", "orders/create", "shopify/orders-create.json", "test order #9999, two line items"},
	{"slack", "event_callback", "slack/event_callback.json", "Events API app_mention in a channel"},
	{"twilio", "message.received", "twilio/message.received.form", "incoming SMS webhook (form POST)"},
	{"standard", "invoice.paid", "standard/invoice.paid.json", "Standard Webhooks invoice.paid"},
	{"svix", "invoice.paid", "svix/invoice.paid.json", "Svix invoice.paid"},
}

// Fixtures returns the sample events `send` can deliver.
func Fixtures() []Fixture { return append([]Fixture(nil), fixtures...) }

// FixtureBody returns the stored payload of provider's event, unchanged.
func FixtureBody(provider, event string) ([]byte, error) {
	f, err := findFixture(provider, event)
	if err != nil {
		return nil, err
	}
	return fixtureFS.ReadFile("fixtures/" + f.File)
}

func findFixture(provider, event string) (Fixture, error) {
	if _, err := SchemeFor(provider); err != nil {
		return Fixture{}, err
	}
	var known []string
	for _, f := range fixtures {
		if strings.EqualFold(f.Provider, provider) {
			if f.Event == event {
				return f, nil
			}
			known = append(known, f.Event)
		}
	}
	if len(known) == 0 {
		return Fixture{}, fmt.Errorf("no sample events for provider %s", provider)
	}
	sort.Strings(known)
	return Fixture{}, fmt.Errorf("no sample %s event %q (have: %s)", provider, event, strings.Join(known, ", "))
}

// BuildDelivery builds a realistic signed delivery of provider's sample
// event for target "/": the provider's headers and User-Agent, a fresh
// unique event id, timestamps and signature at now. Twilio signs the full
// URL, so use BuildDeliveryTo for it.
func BuildDelivery(provider, event, secret string, now time.Time) (*message.Request, error) {
	return BuildDeliveryTo(provider, event, secret, "", now)
}

// BuildDeliveryTo is BuildDelivery for the handler URL rawURL (its path and
// query become the request target, and Twilio signs it).
func BuildDeliveryTo(provider, event, secret, rawURL string, now time.Time) (*message.Request, error) {
	f, err := findFixture(provider, event)
	if err != nil {
		return nil, err
	}
	body, err := fixtureFS.ReadFile("fixtures/" + f.File)
	if err != nil {
		return nil, fmt.Errorf("read fixture %s: %w", f.File, err)
	}
	now = nowOr(now)
	req := &message.Request{Method: "POST", Target: "/", Proto: "HTTP/1.1", Body: body}
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("url %q is not an absolute http(s) URL", rawURL)
		}
		req.Target = u.RequestURI()
		req.Headers = req.Headers.Set("Host", u.Host)
	}
	id := NewEventID(f.Provider)
	h := func(name, value string) { req.Headers = append(req.Headers, message.Header{Name: name, Value: value}) }
	unix := strconv.FormatInt(now.Unix(), 10)
	switch f.Provider {
	case "stripe":
		h("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
		h("Accept", "*/*; q=0.5, application/xml")
		h("Cache-Control", "no-cache")
		h("Content-Type", "application/json; charset=utf-8")
		if req.Body, err = replaceTopLevelRaw(req.Body, "created", []byte(unix)); err != nil {
			return nil, err
		}
	case "github":
		ev, _, _ := strings.Cut(f.Event, ".")
		h("Accept", "*/*")
		h("Content-Type", "application/json")
		h("User-Agent", "GitHub-Hookshot/"+randomString("0123456789abcdef", 7))
		h("X-GitHub-Delivery", id)
		h("X-GitHub-Event", ev)
		h("X-GitHub-Hook-ID", "482173901")
		h("X-GitHub-Hook-Installation-Target-ID", "186853002")
		h("X-GitHub-Hook-Installation-Target-Type", "repository")
	case "shopify":
		h("Accept", "*/*")
		h("Content-Type", "application/json")
		h("User-Agent", "Shopify-Captain-Hook")
		h("X-Shopify-API-Version", "2024-07")
		h("X-Shopify-Event-Id", id)
		h("X-Shopify-Shop-Domain", "hookreplay-demo.myshopify.com")
		h("X-Shopify-Topic", f.Event)
		h("X-Shopify-Triggered-At", now.UTC().Format("2006-01-02T15:04:05.000000000Z"))
		h("X-Shopify-Webhook-Id", newUUID())
	case "slack":
		h("Accept", "*/*")
		h("Accept-Encoding", "gzip,deflate")
		h("Content-Type", "application/json")
		h("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
		if req.Body, err = replaceTopLevelRaw(req.Body, "event_time", []byte(unix)); err != nil {
			return nil, err
		}
	case "twilio":
		h("Accept", "*/*")
		h("Content-Type", "application/x-www-form-urlencoded")
		h("I-Twilio-Idempotency-Token", id)
		h("User-Agent", "TwilioProxy/1.1")
		h("X-Home-Region", "us1")
	case "standard":
		h("Content-Type", "application/json")
		h("User-Agent", "hookreplay-standard-webhooks/1.0")
		h("webhook-id", id)
	case "svix":
		h("Content-Type", "application/json")
		h("User-Agent", "Svix-Webhooks/1.24.0 (sender-hookreplay; +https://www.svix.com/http-sender/)")
		h("svix-id", id)
	}
	if IdentityInBody(f.Provider) {
		if req, err = Reidentify(req, f.Provider, id, "", now, Options{}); err != nil {
			return nil, err
		}
	}
	return Sign(req, f.Provider, secret, Options{Now: now, URL: rawURL})
}

// NewRequest builds the POST request a sender of body would make to rawURL
// (optional) with the given extra headers, for verifying or signing a body
// given on the command line. Without a Content-Type header, a JSON body gets
// application/json and a form-looking one application/x-www-form-urlencoded
// (Twilio signs form parameters).
func NewRequest(body []byte, headers message.Headers, rawURL string) (*message.Request, error) {
	req := &message.Request{Method: "POST", Target: "/", Proto: "HTTP/1.1", Body: body}
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("url %q is not an absolute http(s) URL", rawURL)
		}
		req.Target = u.RequestURI()
		req.Headers = req.Headers.Set("Host", u.Host)
	}
	for _, h := range headers {
		if strings.EqualFold(h.Name, "Host") {
			req.Headers = req.Headers.Set("Host", h.Value)
			continue
		}
		req.Headers = append(req.Headers, h)
	}
	if !req.Headers.Has("Content-Type") && len(body) > 0 {
		if json.Valid(body) {
			req.Headers = append(req.Headers, message.Header{Name: "Content-Type", Value: "application/json"})
		} else if _, err := url.ParseQuery(string(body)); err == nil && strings.Contains(string(body), "=") {
			req.Headers = append(req.Headers, message.Header{Name: "Content-Type", Value: "application/x-www-form-urlencoded"})
		}
	}
	return req, nil
}
