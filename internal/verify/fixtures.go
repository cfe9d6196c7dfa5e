package verify

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
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
var fixtures = sampleFixtures()

func sampleFixtures() []Fixture {
	var out []Fixture
	for _, s := range schemes {
		out = append(out, s.Samples()...)
	}
	return out
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
	return Build(Delivery{Provider: provider, Event: event, URL: rawURL, Now: now}, secret)
}

// Delivery describes a delivery for Build to make.
type Delivery struct {
	Provider string
	// Event names the sample to send, or with Body, the event where the
	// provider names it outside the body (GitHub's X-GitHub-Event,
	// Shopify's X-Shopify-Topic); elsewhere the body names it and Event may
	// be empty.
	Event string
	// Body, when not nil, is sent instead of a sample: a body of the user's own.
	Body []byte
	// KeepID sends Body byte for byte: the event id in it (Stripe's "id",
	// Slack's "event_id", Twilio's message sids) and its timestamps are
	// kept. Header ids and the signature are fresh either way.
	KeepID bool
	// URL is the handler URL the provider is configured with ("" for "/").
	URL string
	// Now is the signing time (zero: time.Now()).
	Now time.Time
}

// Build makes the delivery d describes, as the provider would send it and
// signed with secret: the provider's headers and User-Agent, a fresh event
// id from NewEventID (in the body for Stripe and Slack, unless KeepID), the
// body's own timestamp (Stripe's "created", Slack's "event_time") and the
// signature at Now.
func Build(d Delivery, secret string) (*message.Request, error) {
	s, err := SchemeFor(d.Provider)
	if err != nil {
		return nil, err
	}
	body, event := d.Body, d.Event
	if body == nil {
		f, err := findFixture(d.Provider, d.Event)
		if err != nil {
			return nil, err
		}
		if body, err = fixtureFS.ReadFile("fixtures/" + f.File); err != nil {
			return nil, fmt.Errorf("read fixture %s: %w", f.File, err)
		}
		event = f.Event
	}
	now := nowOr(d.Now)
	req := &message.Request{Method: "POST", Target: "/", Proto: "HTTP/1.1", Body: body}
	if d.URL != "" {
		u, err := url.Parse(d.URL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("url %q is not an absolute http(s) URL", d.URL)
		}
		req.Target = u.RequestURI()
		req.Headers = req.Headers.Set("Host", u.Host)
	}
	id := s.NewEventID()
	if err := s.Sample(req, event, id, now); err != nil {
		return nil, err
	}
	if shaped := shapedEventID(s, req); shaped != "" {
		id = shaped // the sample's own kind of id (a Mercado Pago order's ORD01…)
	}
	if d.KeepID {
		req.Body = body
	} else if err := s.Reidentify(req, id); err != nil {
		// Every scheme's sample gets its id this way; a body of the
		// user's own may lack the place for it.
		return nil, &FreshIDError{Provider: s.Name(), Err: err}
	}
	return Sign(req, s.Name(), secret, Options{Now: now, URL: d.URL})
}

// addHeaders appends name, value pairs to r's headers, in order.
func addHeaders(r *message.Request, nameValues ...string) {
	for i := 0; i+1 < len(nameValues); i += 2 {
		r.Headers = append(r.Headers, message.Header{Name: nameValues[i], Value: nameValues[i+1]})
	}
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

// FreshIDError is Build's error when a body of the user's own has no place
// for the fresh event id the provider keeps there (a Stripe body without a
// top-level "id", one that is not JSON).
type FreshIDError struct {
	Provider string
	Err      error
}

func (e *FreshIDError) Error() string {
	return "cannot give the " + e.Provider + " body a fresh event id: " + e.Err.Error()
}

// Unwrap returns the scheme's reason.
func (e *FreshIDError) Unwrap() error { return e.Err }
