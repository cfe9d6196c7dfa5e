package e2e

// Mistakes real handlers make that are not idempotency bugs, re-created in Go
// from handlers written against the providers' own libraries (an express app
// with express.json() before stripe's constructEvent, a Flask app verifying
// json.dumps(request.json), a Slack app's url_verification, a GitHub ping):
// check must name the mistake, never accuse the handler of doing work twice,
// nor send the user after a probe that is fine.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
	"github.com/stripe/stripe-go/v82/webhook"
)

// reencodingStripeHandler verifies Stripe-Signature over the body parsed and
// encoded again — what express.json() followed by
// constructEvent(JSON.stringify(req.body), …) does. Stripe's bodies are
// pretty-printed, so the re-encoded bytes never match: every delivery is
// answered 400 — the provider's own as well as hookreplay's copies.
func reencodingStripeHandler(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var parsed any
	if json.Unmarshal(raw, &parsed) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	body, _ := json.Marshal(parsed)
	params := sigParams(r.Header.Get("Stripe-Signature"), ",")
	ts, sig := params["t"], params["v1"]
	m := hmac.New(sha256.New, []byte(checkSecret))
	fmt.Fprintf(m, "%s.%s", ts, body)
	if !hmac.Equal([]byte(sig), []byte(hex.EncodeToString(m.Sum(nil)))) {
		http.Error(w, "Webhook Error: No signatures found matching the expected signature for payload", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// A handler that verifies a re-encoded body rejects a correctly signed copy:
// a setup error (exit 2) that names the raw-body mistake, and — the delivery
// having been captured in front of the handler — says the provider's own
// request was rejected too.
func TestCheckReencodedBodyVerificationIsASetupError(t *testing.T) {
	t.Parallel()
	base := serveHandler(t, http.HandlerFunc(reencodingStripeHandler))
	db := filepath.Join(t.TempDir(), "h.db")
	env := []string{"E2E_STRIPE_SECRET=" + checkSecret}
	_, addr := captureStartEnv(t, env, db, "--forward", base, "--secret-env", "E2E_STRIPE_SECRET", "-q")
	s := runBinEnv(t, env, "", nil, "send", "--provider", "stripe", "--event", "invoice.payment_succeeded",
		"--to", base+"/webhooks/stripe", "--secret-env", "E2E_STRIPE_SECRET", "--via", "http://"+addr)
	if s.Code != 1 || !strings.Contains(s.Stdout+s.Stderr, "400") {
		t.Fatalf("send through capture: want the handler's 400 (exit 1), got %d\n%s\n%s", s.Code, s.Stdout, s.Stderr)
	}
	_, dsn := checkWallet(t, wallet.Fixed)
	r := runBinEnv(t, env, db, nil, "check", "--last", "--to", base+"/webhooks/stripe", "--probe-sql", checkBalanceSQL, "--dsn", dsn,
		"--secret-env", "E2E_STRIPE_SECRET", "-q")
	for _, want := range []string{
		"the handler rejected a correctly signed copy of delivery 1 (answered 400",
		"it answered 400 to the captured delivery too",
		"re-encoded body instead of the raw request bytes",
		"express.json()",
		"or it refused the event itself, not its signature (a field it requires, an event type or shape it does not take: its answer may say which)",
		"--to is not its webhook route",
	} {
		if r.Code != 2 || !strings.Contains(r.Stderr, want) {
			t.Fatalf("want exit 2 with %q, got %d\n%s\n%s", want, r.Code, r.Stdout, r.Stderr)
		}
	}
	if strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("a setup error is one line:\n%s", r.Stderr)
	}
}

// stripeGoSampleHandler is Stripe's Go webhook sample: stripe-go's
// webhook.ConstructEvent, and 400 with an empty body when it fails. The
// library refuses an event whose api_version is not the one it was built
// for, after the signature checked out, and the sample answers that as it
// answers a bad signature.
func stripeGoSampleHandler(w http.ResponseWriter, r *http.Request) {
	payload, _ := io.ReadAll(r.Body)
	if _, err := webhook.ConstructEvent(payload, r.Header.Get("Stripe-Signature"), checkSecret); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// A stripe-go handler refuses a delivery of another API version (here the
// sample's, 2024-06-20) with the 400 it answers a bad signature: the setup
// error names the API version among the causes, not only a wrong secret or
// a re-encoded body (seen checking a stripe-go v82 handler of Stripe's Go
// sample, which logs the reason and answers 400 with nothing in it).
func TestCheckStripeAPIVersionRefusalIsNamed(t *testing.T) {
	t.Parallel()
	base := serveHandler(t, http.HandlerFunc(stripeGoSampleHandler))
	db := filepath.Join(t.TempDir(), "h.db")
	env := []string{"E2E_STRIPE_SECRET=" + checkSecret}
	_, addr := captureStartEnv(t, env, db, "--forward", base, "--secret-env", "E2E_STRIPE_SECRET", "-q")
	s := runBinEnv(t, env, "", nil, "send", "--provider", "stripe", "--event", "invoice.payment_succeeded",
		"--to", base+"/webhook", "--secret-env", "E2E_STRIPE_SECRET", "--via", "http://"+addr)
	if s.Code != 1 {
		t.Fatalf("send through capture: want the handler's 400 (exit 1), got %d\n%s\n%s", s.Code, s.Stdout, s.Stderr)
	}
	_, dsn := checkWallet(t, wallet.Fixed)
	r := runBinEnv(t, env, db, nil, "check", "--last", "--to", base+"/webhook", "--probe-sql", checkBalanceSQL, "--dsn", dsn,
		"--secret-env", "E2E_STRIPE_SECRET", "-q")
	for _, want := range []string{
		"the handler rejected a correctly signed copy of delivery 1 (answered 400)",
		"or its Stripe library refuses the event's API version after the signature checked out (this delivery's api_version is 2024-06-20",
		"webhook.ConstructEvent",
	} {
		if r.Code != 2 || !strings.Contains(r.Stderr, want) {
			t.Fatalf("want exit 2 with %q, got %d\n%s\n%s", want, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// handshakeHandler answers Slack's url_verification with its challenge and
// GitHub's ping with 200, counting the events it acts on (none here).
type handshakeHandler struct{ events int }

func (h *handshakeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		fmt.Fprint(w, h.events)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var v struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	json.Unmarshal(b, &v)
	if v.Type == "url_verification" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"challenge": v.Challenge})
		return
	}
	if r.Header.Get("X-GitHub-Event") == "ping" {
		w.WriteHeader(http.StatusOK)
		return
	}
	h.events++
	w.WriteHeader(http.StatusOK)
}

// A set-up request (Slack's url_verification, GitHub's ping) is often the
// newest capture right after pointing a provider at capture. It has no work
// to do once: the check is inconclusive (exit 3) and says what the delivery
// is, instead of "probe what the handler changes".
func TestCheckHandshakeDeliveryIsNotAnEvent(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	now := time.Now()
	for _, tc := range []struct {
		provider, secret, target, want string
		req                            *message.Request
	}{
		{"slack", "8f742231b10e8888abcd99yyyzzz85a5", "/slack/events", "Slack's url_verification handshake", &message.Request{
			Method: "POST", Target: "/slack/events", Proto: "HTTP/1.1",
			Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "Content-Type", Value: "application/json"}},
			Body:    []byte(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)}},
		{"github", "It's a Secret to Everybody", "/webhooks/github", "GitHub's ping", &message.Request{
			Method: "POST", Target: "/webhooks/github", Proto: "HTTP/1.1",
			Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "Content-Type", Value: "application/json"},
				{Name: "X-GitHub-Event", Value: "ping"}, {Name: "X-GitHub-Delivery", Value: "9f8b5b7c-1c1e-11ef-8a2e-5a0f7cf0d1a1"},
				{Name: "X-GitHub-Hook-ID", Value: "292430182"}},
			Body: []byte(`{"zen":"Keep it logically awesome.","hook_id":292430182,"hook":{"type":"Repository","id":292430182,"active":true,"events":["push"]}}`)}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			req, err := verify.Sign(tc.req, tc.provider, tc.secret, verify.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkInsert(t, db, req)
			base := serveHandler(t, &handshakeHandler{})
			r, c := checkRunJSON(t, db, "--to", base+tc.target, "--probe-http", base+"/count", "--secret", tc.secret,
				"--settle", "50ms", "--settle-max", "1s", fmt.Sprint(id))
			if r.Code != 3 || c == nil {
				t.Fatalf("want exit 3 (inconclusive), got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			first := checkPhase(t, c, "first")
			if first.Status != report.Inconclusive || !strings.Contains(first.Message, tc.want) || !strings.Contains(first.Message, "not an event") ||
				strings.Contains(first.Message, "probe what the handler changes") {
				t.Fatalf("first should say the delivery is %s, not blame the probe: %+v", tc.want, first)
			}
			for _, n := range c.Notes {
				if strings.Contains(n, "captured event id") {
					t.Fatalf("no note about event ids for a handshake: %q", n)
				}
			}
		})
	}
}

// A handler that deduplicates on a key every event shares (here the
// User-Agent, as real ones do with X-GitHub-Hook-ID) saw the captured event
// already, so even a fresh event changes nothing: the inconclusive first
// phase names that possibility, not only the probe.
func TestCheckSharedKeyDedupeBeforeFirstIsNamed(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, Dedupe: true, DedupeOn: "User-Agent"})
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	// The delivery reached the handler once when it was captured.
	if rr := runBin(t, db, nil, "replay", fmt.Sprint(id), "--to", url, "-q"); rr.Code != 0 {
		t.Fatalf("replay: %+v", rr)
	}
	r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "--settle-max", "1s", "--phases", "first,dups", fmt.Sprint(id))
	if r.Code != 3 || c == nil {
		t.Fatalf("want exit 3, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if first := checkPhase(t, c, "first"); !strings.Contains(first.Message, "deduplicates on something distinct events share") {
		t.Fatalf("first should name a shared dedupe key: %+v", first)
	}
}

// A --to whose path no route serves (express answers "Cannot POST /webhook"
// with 404; a router that knows the path but not the method, 405) is a
// setup error naming --to and the path the delivery was captured at — with
// or without the secret — not a violation, nor a stale signature.
func TestCheckWrongRouteIsASetupError(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks/stripe", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /webhooks/health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	base := serveHandler(t, mux)
	db := filepath.Join(t.TempDir(), "h.db")
	req, err := verify.BuildDelivery("stripe", "invoice.payment_succeeded", checkSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req.Target = "/webhooks/stripe"
	id := fmt.Sprint(checkInsert(t, db, req))
	_, dsn := checkWallet(t, wallet.Fixed)
	for _, tc := range []struct {
		path string
		args []string
		want string
	}{
		{"/webhook", []string{"--secret", checkSecret}, "answered 404 to the first copy of delivery 1 (Not Found"},
		{"/webhook", nil, "answered 404 to the first copy of delivery 1 (Not Found"},
		{"/webhooks/health", []string{"--secret", checkSecret}, "answered 405 to the first copy of delivery 1 (Method Not Allowed"},
	} {
		args := append([]string{"check", id, "--to", base + tc.path, "--probe-sql", checkBalanceSQL, "--dsn", dsn, "--phases", "first,dups", "-q"}, tc.args...)
		r := runBin(t, db, nil, args...)
		for _, want := range []string{tc.want, "nothing serves POST at --to's path " + tc.path, "(the delivery was captured at /webhooks/stripe)"} {
			if r.Code != 2 || !strings.Contains(r.Stderr, want) {
				t.Fatalf("%s %v: want exit 2 with %q, got %d\n%s\n%s", tc.path, tc.args, want, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
}

// A handler whose effect is a call to an API that deduplicates on an
// Idempotency-Key (a Stripe Connect platform paying its seller with
// stripe.transfers.create(…, {idempotencyKey: 'transfer-' + event.id}))
// needs no table of its own: every copy calls again, the API moves the money
// once. The sink counts such a call once per key, so that handler passes;
// the same handler without the key moves money on every copy and fails.
func TestCheckSinkHonoursIdempotencyKey(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		name    string
		withKey bool
		code    int
	}{{"with key", true, 0}, {"without key", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			sink := freeAddr(t)
			base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var ev struct {
					ID string `json:"id"`
				}
				b, _ := io.ReadAll(r.Body)
				if json.Unmarshal(b, &ev) != nil || ev.ID == "" {
					http.Error(w, "bad event", http.StatusBadRequest)
					return
				}
				req, _ := http.NewRequest("POST", "http://"+sink+"/v1/transfers", strings.NewReader("amount=4410&currency=usd&destination=acct_1"))
				if tc.withKey {
					req.Header.Set("Idempotency-Key", "transfer-"+ev.ID)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				resp.Body.Close()
				w.WriteHeader(http.StatusOK)
			}))
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			r, c := checkRunJSON(t, db, "--to", base+"/webhooks/stripe", "--sink", "transfers="+sink, "--sink-match", "POST /v1/transfers",
				"--secret", checkSecret, "--settle", "50ms", "--settle-max", "1s", "-n", "3", "--phases", "first,dups,burst,lost", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			notes := strings.Join(c.Notes, "\n")
			if tc.withKey != strings.Contains(notes, "repeating an Idempotency-Key it had already seen, not counted as effects") {
				t.Fatalf("the note on repeated keys: %q", notes)
			}
			if !tc.withKey && checkPhase(t, c, "dups").Status != report.Fail {
				t.Fatalf("without a key, dups must fail: %+v", checkPhase(t, c, "dups"))
			}
		})
	}
}

// A GitHub webhook with the content type GitHub's settings page proposes,
// application/x-www-form-urlencoded (the event in payload=), to a handler that
// never checks X-Hub-Signature-256: the tampered copy must be acted on and
// flagged, as the JSON one is.
func TestCheckTamperCatchesUnverifiedFormHandler(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	var mu sync.Mutex
	builds := 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /github", func(w http.ResponseWriter, r *http.Request) {
		var push struct {
			After string `json:"after"`
		}
		if json.Unmarshal([]byte(r.FormValue("payload")), &push) != nil || push.After == "" {
			http.Error(w, "no payload", http.StatusBadRequest)
			return
		}
		mu.Lock()
		builds++ // no signature check, no dedupe: only tamper is asked
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /builds", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(w, builds)
	})
	base := serveHandler(t, mux)
	const secret = "form-secret"
	event := `{"ref":"refs/heads/main","after":"6113728f27ae82c7b1a177c8d03f9e96e0adf246","repository":{"id":1296269,"full_name":"octocat/Hello-World"}}`
	req, err := verify.Sign(&message.Request{Method: "POST", Target: "/github", Proto: "HTTP/1.1",
		Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "Content-Type", Value: "application/x-www-form-urlencoded"},
			{Name: "X-GitHub-Event", Value: "push"}, {Name: "X-GitHub-Delivery", Value: "72d3162e-cc78-11e3-81ab-4c9367dc0958"}},
		Body: []byte("payload=" + url.QueryEscape(event))}, "github", secret, verify.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkInsert(t, db, req)
	r, c := checkRunJSON(t, db, "--to", base+"/github", "--probe-http", base+"/builds", "--secret", secret,
		"--settle", "50ms", "--settle-max", "1s", "--phases", "first,tamper", fmt.Sprint(id))
	if r.Code != 1 || c == nil {
		t.Fatalf("want exit 1, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if p := checkPhase(t, c, "tamper"); p.Status != report.Fail || !strings.Contains(p.Message, "form value payload") {
		t.Fatalf("tamper should change the payload's value and be acted on: %+v", p)
	}
}

// A handler stuck reading a body a parser already consumed (express.json()
// before @octokit/webhooks' middleware) answers only when its own timeout
// fires, having done nothing: the inconclusive first phase says so.
func TestCheckSlowAnswerWithoutEffectNamesABodyParser(t *testing.T) {
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprint(w, 0)
			return
		}
		time.Sleep(2100 * time.Millisecond)
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, "still processing\n")
	}))
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, "--to", base+"/webhooks/stripe", "--probe-http", base+"/count", "--secret", checkSecret,
		"--settle", "50ms", "--settle-max", "1s", "--phases", "first", fmt.Sprint(id))
	if r.Code != 3 || c == nil {
		t.Fatalf("want exit 3, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if first := checkPhase(t, c, "first"); !strings.Contains(first.Message, "to answer and did nothing") || !strings.Contains(first.Message, "express.json()") {
		t.Fatalf("first should name a body parser: %+v", first)
	}
}
