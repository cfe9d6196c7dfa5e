package e2e

// End-to-end tests of `hookreplay send` for real events: every catalogue
// event and bodies of the user's own (--body FILE, --body -) reach a
// recording handler on 127.0.0.1 that checks them with independent code
// (stripe-go, the Standard Webhooks library, hand-written HMACs; see
// sigHandler), and `hookreplay verify` accepts what the handler received
// with the same secret.

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sendOut is `send --json`'s output.
type sendOut struct {
	Provider string `json:"provider"`
	Event    string `json:"event"`
	EventID  string `json:"event_id"`
	Status   int    `json:"status"`
}

func sendJSON(t *testing.T, stdin []byte, args ...string) sendOut {
	t.Helper()
	r := runBin(t, "", stdin, append([]string{"send", "--json"}, args...)...)
	var out sendOut
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &out) != nil || out.Status != 200 || out.EventID == "" {
		t.Fatalf("send %v: %+v", args, r)
	}
	return out
}

// verifyReceived runs `hookreplay verify` on a request the handler received,
// its headers given with --header and its body on stdin.
func verifyReceived(t *testing.T, provider, to string, s sigSeen) {
	t.Helper()
	args := []string{"verify", "--provider", provider, "--secret", sigSecrets[provider]}
	switch provider {
	case "twilio", "square", "bird", "hubspot":
		args = append(args, "--url", to)
	case "mercadopago":
		args = append(args, "--url", to+"?"+s.Query) // the signed data.id
	}
	for name, vs := range s.Header {
		for _, v := range vs {
			args = append(args, "--header", name+": "+v)
		}
	}
	r := runBin(t, "", s.Body, args...)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "valid") {
		t.Fatalf("hookreplay verify of what the handler received: %+v", r)
	}
}

// identityPlace is where provider keeps the event id in a received request:
// the value that must be new on every send.
func identityPlace(t *testing.T, provider string, s sigSeen) string {
	t.Helper()
	switch provider {
	case "stripe", "slack":
		var m map[string]any
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("%s body is not JSON: %v", provider, err)
		}
		if provider == "slack" {
			return m["event_id"].(string)
		}
		return m["id"].(string)
	case "github":
		return s.Header.Get("X-GitHub-Delivery")
	case "bird":
		var m struct {
			Payload struct {
				ID string `json:"id"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("bird body: %v", err)
		}
		return m.Payload.ID + " " + s.Header.Get("messagebird-request-id")
	case "mercadopago":
		// The notification's id and the resource's, fresh together.
		var m struct {
			ID   json.Number `json:"id"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		d := json.NewDecoder(bytes.NewReader(s.Body))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatalf("mercadopago body: %v", err)
		}
		if q, _ := url.ParseQuery(s.Query); q.Get("data.id") != m.Data.ID {
			t.Fatalf("query data.id %q, body data.id %q", q.Get("data.id"), m.Data.ID)
		}
		return m.ID.String() + " " + m.Data.ID
	case "whatsapp", "messenger", "instagram":
		// Every message id of the POST, each fresh.
		var ids []string
		for _, re := range []string{`"id":"(wamid\.[^"]+)"`, `"mid":"([^"]+)"`} {
			for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(string(s.Body), -1) {
				ids = append(ids, m[1])
			}
		}
		return strings.Join(ids, " ")
	case "shopify":
		return s.Header.Get("X-Shopify-Event-Id") + " " + s.Header.Get("X-Shopify-Webhook-Id")
	case "standard":
		return s.Header.Get("Webhook-Id")
	case "svix", "resend", "clerk":
		return s.Header.Get("Svix-Id")
	case "square":
		var m map[string]any
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("square body is not JSON: %v", err)
		}
		return m["event_id"].(string)
	case "hubspot":
		var events []map[string]any
		if err := json.Unmarshal(s.Body, &events); err != nil {
			t.Fatalf("hubspot body is not a JSON array: %v", err)
		}
		ids := ""
		for _, e := range events {
			ids += strconv.FormatFloat(e["eventId"].(float64), 'f', -1, 64) + " "
		}
		return ids
	case "sendgrid":
		var events []map[string]any
		if err := json.Unmarshal(s.Body, &events); err != nil {
			t.Fatalf("sendgrid body is not a JSON array: %v", err)
		}
		ids := ""
		for _, e := range events {
			ids += e["sg_event_id"].(string) + " "
		}
		return ids
	case "discord":
		var m map[string]any
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("discord body is not JSON: %v", err)
		}
		return m["id"].(string)
	case "twitch":
		return s.Header.Get("Twitch-Eventsub-Message-Id")
	case "lemonsqueezy":
		var m struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("lemonsqueezy body is not JSON: %v", err)
		}
		return m.Data.ID
	case "mailgun":
		var m struct {
			EventData struct {
				ID string `json:"id"`
			} `json:"event-data"`
		}
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("mailgun body is not JSON: %v", err)
		}
		return m.EventData.ID
	case "zoom":
		var m struct {
			EventTS int64 `json:"event_ts"`
		}
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("zoom body is not JSON: %v", err)
		}
		return strconv.FormatInt(m.EventTS, 10)
	case "intercom":
		var m map[string]any
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("intercom body is not JSON: %v", err)
		}
		return m["id"].(string)
	case "calendly":
		var m struct {
			Payload struct {
				URI string `json:"uri"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("calendly body is not JSON: %v", err)
		}
		return m.Payload.URI
	case "coinbase":
		var m struct {
			Event struct {
				ID string `json:"id"`
			} `json:"event"`
		}
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("coinbase body is not JSON: %v", err)
		}
		return m.Event.ID
	case "linear":
		return s.Header.Get("Linear-Delivery")
	case "razorpay":
		return s.Header.Get("X-Razorpay-Event-Id")
	case "paddle":
		var m map[string]any
		if err := json.Unmarshal(s.Body, &m); err != nil {
			t.Fatalf("paddle body is not JSON: %v", err)
		}
		return m["event_id"].(string) + " " + m["notification_id"].(string)
	case "twilio":
		form, err := url.ParseQuery(string(s.Body))
		if err != nil {
			t.Fatalf("twilio body is not a form: %v", err)
		}
		return form.Get("MessageSid") + " " + s.Header.Get("I-Twilio-Idempotency-Token")
	}
	t.Fatalf("no identity place for %s", provider)
	return ""
}

// Each catalogue event is sent three times: each time the handler accepts
// it, hookreplay verify accepts what arrived, and the event id (where the
// provider keeps it: body, headers, a Twilio form's sids) is new.
func TestSendE2ECatalogueVerifiesWithFreshIDs(t *testing.T) {
	t.Parallel() // one short process after another: waits, not timing-bound (see TestMain)
	required := []string{"stripe checkout.session.completed", "stripe payment_intent.succeeded", "stripe invoice.paid",
		"stripe customer.subscription.created", "stripe customer.subscription.updated", "stripe customer.subscription.deleted",
		"github pull_request.opened", "github issues.opened", "github push", "github installation.created",
		"shopify orders/create", "shopify app/uninstalled", "standard user.created", "clerk user.created", "resend email.delivered",
		"slack message.channels", "twilio message.received"}
	listed := map[string]bool{}
	for _, f := range sigFixtures(t) {
		listed[f.Provider+" "+f.Event] = true
		t.Run(f.Provider+"/"+f.Event, func(t *testing.T) {
			// Side by side, a handler each: one after another, the ~40
			// samples held one slot for 91-108 s and the package's end
			// waited on it alone.
			t.Parallel()
			h := newSigHandler(t)
			to := h.url(f.Provider)
			seen := map[string]bool{}
			for i := 0; i < 3; i++ {
				out := sendJSON(t, nil, "--provider", f.Provider, "--event", f.Event, "--to", to, "--secret", sigSecrets[f.Provider])
				s := h.last(t)
				if s.Verdict != "" {
					t.Fatalf("handler rejected: %s", s.Verdict)
				}
				verifyReceived(t, f.Provider, to, s)
				id := identityPlace(t, f.Provider, s)
				if seen[id] || !strings.Contains(id, out.EventID) {
					t.Fatalf("send %d: event id %q (reported %s) is not fresh: %v", i, id, out.EventID, seen)
				}
				seen[id] = true
				switch f.Provider {
				case "github":
					ev, _, _ := strings.Cut(f.Event, ".")
					want := "repository"
					if f.Event == "installation.created" {
						want = "integration" // a GitHub App's own hook
					}
					if s.Header.Get("X-GitHub-Event") != ev || s.Header.Get("X-GitHub-Hook-Installation-Target-Type") != want {
						t.Fatalf("github headers %v", s.Header)
					}
				case "shopify":
					if s.Header.Get("X-Shopify-Topic") != f.Event {
						t.Fatalf("X-Shopify-Topic %q", s.Header.Get("X-Shopify-Topic"))
					}
				case "twilio":
					if !strings.HasPrefix(s.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
						t.Fatalf("twilio Content-Type %q", s.Header.Get("Content-Type"))
					}
				}
				if f.Provider != "twilio" && !strings.HasPrefix(s.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("Content-Type %q", s.Header.Get("Content-Type"))
				}
			}
		})
	}
	for _, r := range required {
		if !listed[r] {
			t.Errorf("send --list lacks %s", r)
		}
	}
}

// sendBodyCase is a body of the user's own for one provider.
type sendBodyCase struct {
	provider, file string
	args           []string // e.g. --event for providers that name it in a header
	eventType      string   // what send reports
}

var sendBodyCases = []sendBodyCase{
	{"stripe", "stripe.json", nil, "payment_intent.payment_failed"},
	{"standard", "standard.json", nil, "session.created"},
	{"svix", "standard.json", nil, "session.created"},
	{"github", "github.json", []string{"--event", "pull_request"}, "pull_request.closed"},
	{"shopify", "shopify.json", []string{"--event", "orders/paid"}, "orders/paid"},
	{"slack", "slack.json", nil, "reaction_added"},
	{"twilio", "twilio.form", nil, "delivery"},
}

// --body FILE and --body - send the user's body signed as the provider
// would, checked by independent code (stripe-go's ConstructEvent and the
// Standard Webhooks library among them) and by hookreplay verify: with a
// fresh event id where the provider keeps it in the body (or a Twilio form's
// sids), and byte for byte with --keep-id.
func TestSendE2ECustomBody(t *testing.T) {
	t.Parallel()
	h := newSigHandler(t)
	for _, c := range sendBodyCases {
		t.Run(c.provider, func(t *testing.T) {
			path := filepath.Join("testdata", "send", c.file)
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			to := h.url(c.provider)
			base := append([]string{"--provider", c.provider, "--to", to, "--secret", sigSecrets[c.provider]}, c.args...)
			ids := map[string]bool{}
			for _, src := range []struct {
				flag  string
				stdin []byte
			}{{path, nil}, {"-", body}} {
				out := sendJSON(t, src.stdin, append(base, "--body", src.flag)...)
				s := h.last(t)
				if s.Verdict != "" {
					t.Fatalf("--body %s: handler rejected: %s", src.flag, s.Verdict)
				}
				verifyReceived(t, c.provider, to, s)
				if out.Event != c.eventType {
					t.Fatalf("--body %s: event %q, want %q", src.flag, out.Event, c.eventType)
				}
				id := identityPlace(t, c.provider, s)
				if ids[id] {
					t.Fatalf("--body %s: event id %q sent before", src.flag, id)
				}
				ids[id] = true
				switch c.provider {
				case "stripe", "slack", "twilio":
					// The id (and Stripe's created, Slack's event_time) changed; nothing else.
					if bytes.Equal(s.Body, body) || len(s.Body) < len(body)-8 {
						t.Fatalf("--body %s: body not re-identified: %s", src.flag, s.Body)
					}
					if c.provider != "twilio" && !bytes.Contains(s.Body, []byte(out.EventID)) {
						t.Fatalf("--body %s: fresh id %s not in body %s", src.flag, out.EventID, s.Body)
					}
				default:
					if !bytes.Equal(s.Body, body) {
						t.Fatalf("--body %s: body changed:\n%s\nwant\n%s", src.flag, s.Body, body)
					}
				}
			}
			// --keep-id: the exact bytes, the body's own id, still signed.
			sendJSON(t, nil, append(base, "--body", path, "--keep-id")...)
			s := h.last(t)
			if s.Verdict != "" || !bytes.Equal(s.Body, body) {
				t.Fatalf("--keep-id: verdict %q body %s", s.Verdict, s.Body)
			}
			verifyReceived(t, c.provider, to, s)
			if c.provider == "github" && s.Header.Get("X-GitHub-Hook-Installation-Target-Type") != "integration" {
				t.Fatalf("a payload with an installation is a GitHub App's: %v", s.Header)
			}
		})
	}
}

func TestSendE2ECustomBodyErrors(t *testing.T) {
	t.Parallel()
	h := newSigHandler(t)
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 10<<20+1); err != nil {
		t.Fatal(err)
	}
	own := func(f string) string { return filepath.Join("testdata", "send", f) }
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--body", own("stripe.json")}, "--body: pass --provider"},
		{[]string{"--provider", "github", "--body", own("github.json")}, "github names the event in X-GitHub-Event: pass --event (e.g. push, issues.opened"},
		{[]string{"--provider", "shopify", "--body", own("shopify.json")}, "pass --event (e.g. orders/create, app/uninstalled)"},
		{[]string{"--provider", "stripe", "--body", own("stripe-no-id.json")}, `has no top-level "id" (--keep-id sends the body unchanged)`},
		{[]string{"--provider", "stripe", "--body", own("nope.json")}, "--body " + own("nope.json") + ": no such file"},
		{[]string{"--provider", "stripe", "--body", big}, "larger than 10MiB"},
		{[]string{"--provider", "stripe", "--event", "invoice.paid", "--keep-id"}, "--keep-id keeps the event id of a body given with --body"},
		{[]string{"--provider", "stripe", "--event", "nope"}, `no sample stripe event "nope" (stripe events: payment_intent.succeeded, checkout.session.completed`},
		{[]string{"--provider", "twilio", "--body", own("stripe.json")}, "bodySHA256="},
	}
	for _, c := range cases {
		args := append([]string{"send", "--to", h.url("x"), "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, c.args...)
		r := runBin(t, "", nil, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: code %d stderr %q, want 2 and %q on one line", c.args, r.Code, r.Stderr, c.want)
		}
	}
	// Nothing listening: one line that says what to start (it said only
	// "connect: connection refused"), exit 2.
	dead := freeAddr(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--to", "http://" + dead + "/webhooks/stripe"}, "connect: connection refused: nothing is listening at --to; start the handler first"},
		{[]string{"--to", h.url("stripe"), "--via", "http://" + dead}, "connect: connection refused: nothing is listening at --via http://" + dead + "; start 'hookreplay capture --listen " + dead + "' first"},
	} {
		args := append([]string{"send", "--provider", "stripe", "--event", "invoice.paid", "--secret", sigSecrets["stripe"]}, c.args...)
		r := runBin(t, "", nil, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: code %d stderr %q, want 2 and %q on one line", c.args, r.Code, r.Stderr, c.want)
		}
	}
	// The stripe body without an id is sent unchanged with --keep-id, and verifies.
	r := runBin(t, "", nil, "send", "--provider", "stripe", "--body", own("stripe-no-id.json"), "--keep-id", "--to", h.url("stripe"), "--secret", sigSecrets["stripe"])
	if r.Code != 0 || h.last(t).Verdict != "" {
		t.Fatalf("--keep-id without an id: %+v", r)
	}
}

// send --via keeps the Host of --to, as a tunnel does, so that capture
// verifies the schemes that sign the URL the provider is configured with
// (Twilio, Square, Bird, HubSpot): they were stored as "invalid: signature
// mismatch (… signs the full URL …, which was not given)".
func TestSendViaCaptureVerifiesURLSignedSchemes(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "hr.db")
	env := []string{"E2E_VIA_SECRET=whsec_5f3e9c0d2a7b41e6"}
	_, addr := captureStartEnv(t, env, db, "--secret-env", "E2E_VIA_SECRET")
	for _, pe := range [][2]string{{"twilio", "message.received"}, {"square", "payment.updated"}, {"bird", "sms.inbound"}, {"hubspot", "contact.creation"}, {"stripe", "invoice.paid"}} {
		r := runBinEnv(t, env, "", nil, "send", "--provider", pe[0], "--event", pe[1], "--secret-env", "E2E_VIA_SECRET",
			"--to", "http://localhost:3000/webhooks/"+pe[0], "--via", "http://"+addr)
		if r.Code != 0 {
			t.Fatalf("send %s via capture: %+v", pe[0], r)
		}
	}
	ds := sigList(t, db)
	if len(ds) != 5 {
		t.Fatalf("want 5 deliveries, got %+v", ds)
	}
	for _, d := range ds {
		if !strings.HasPrefix(d.Verification, "valid") {
			t.Errorf("%s sent through capture: capture's verification %q, want valid", d.Provider, d.Verification)
		}
	}
}
