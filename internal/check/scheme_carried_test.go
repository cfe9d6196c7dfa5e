package check

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// A delivery's scheme is resolved once and carried: a check of a delivery
// whose scheme no registry lookup by its name would find (a declaration of
// Stripe's scheme under a name registered nowhere) re-signs, re-identifies
// and judges every phase with that scheme. Looked up again by name
// anywhere below, the delivery would be treated as generic: re-signing
// would fail and burst and lost would be skipped.
func TestCheckUsesTheCarriedScheme(t *testing.T) {
	twin, err := verify.Declare(verify.Declaration{Name: "stripe-unregistered", SignatureHeader: "Stripe-Signature",
		Format: "t={timestamp},v1={signature}", Signed: "{timestamp}.{body}", Tolerance: 300e9,
		EventID: "$.id", EventType: "$.type", NewEventID: "evt_{random:24}"})
	if err != nil {
		t.Fatal(err)
	}
	if verify.KnownProvider("stripe-unregistered") {
		t.Fatal("the twin must not be registered")
	}
	for _, tc := range []struct {
		kind    string
		verdict string
	}{{"correct", report.VerdictPass}, {"double", report.VerdictFail}} {
		h, u := newHandler(t, tc.kind)
		d := delivery(t, 1, 4900)
		d.Provider, d.Scheme = "stripe-unregistered", twin
		c := run(t, options(h, u, d))
		if c.Verdict != tc.verdict {
			t.Fatalf("%s: verdict %s\n%+v", tc.kind, c.Verdict, c.Deliveries[0].Phases)
		}
		for _, p := range []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost, PhaseTamper} {
			ph := phaseOf(t, c, p)
			want := report.Pass
			if tc.kind == "double" && (p == PhaseDups || p == PhaseBurst || p == PhaseLost) {
				want = report.Fail
			}
			if ph.Status != want {
				t.Errorf("%s: %s %s, want %s: %s", tc.kind, p, ph.Status, want, ph.Message)
			}
		}
	}
}

// declHandler verifies a declared scheme's signature and does its work once
// per event id in the body.
type declHandler struct {
	s      verify.Scheme
	mu     sync.Mutex
	seen   map[string]bool
	effect atomic.Int64
}

func (h *declHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &message.Request{Method: r.Method, Target: r.URL.RequestURI(), Body: body}
	for name, vs := range r.Header {
		for _, v := range vs {
			req.Headers = append(req.Headers, message.Header{Name: name, Value: v})
		}
	}
	if res, err := verify.VerifyWith(h.s, req, testSecret, verify.Options{}); err != nil || !res.Valid {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	id := h.s.Identity(req).EventID
	h.mu.Lock()
	if !h.seen[id] {
		h.seen[id] = true
		h.effect.Add(1)
	}
	h.mu.Unlock()
}

type declCounter struct{ h *declHandler }

func (c declCounter) Name() string { return "count" }
func (c declCounter) Read(context.Context) (probe.Value, error) {
	return probe.NumValue(float64(c.h.effect.Load())), nil
}

// A declared provider that does not sign the body (it signs a request-id
// header and the timestamp) has tamper forge what it signs: a changed body
// would be a copy the provider's own check accepts, and a handler that
// verifies signatures would be flagged as one that does not.
func TestTamperForgesWhatADeclaredSchemeSigns(t *testing.T) {
	s, err := verify.Declare(verify.Declaration{Name: "reqsig", SignatureHeader: "X-Sig", TimestampHeader: "X-Ts",
		Signed: "{timestamp}:{header:X-Request-Id}", Tolerance: 300e9, EventID: "$.id"})
	if err != nil {
		t.Fatal(err)
	}
	h := &declHandler{s: s, seen: map[string]bool{}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/hook")
	req := &message.Request{Method: "POST", Target: "/hook", Headers: message.Headers{{Name: "Content-Type", Value: "application/json"}, {Name: "X-Request-Id", Value: "req-20261206-a1"}},
		Body: []byte(`{"id":"ev_1","amount":4900}`)}
	if req, err = verify.SignWith(s, req, testSecret, verify.Options{}); err != nil {
		t.Fatal(err)
	}
	d := Delivery{ID: 1, Provider: "reqsig", Scheme: s, EventID: "ev_1", Req: req}
	o := Options{Target: u, Deliveries: []Delivery{d}, Probes: []probe.Probe{declCounter{h}}, Secret: testSecret,
		N: 2, Burst: 3, BurstRounds: 1, Settle: 5 * time.Millisecond, SettleMax: 150 * time.Millisecond, Phases: []string{PhaseFirst, PhaseTamper}}
	c := run(t, o)
	tp := phaseOf(t, c, PhaseTamper)
	if tp.Status != report.Pass || !strings.Contains(tp.Message, "X-Request-Id header was changed after signing") {
		t.Fatalf("tamper %s: %s %+v", tp.Status, tp.Message, tp.Violations)
	}
}

// Retention holds a declared provider's retry horizon against the dedupe
// TTL: one day of retries fails a handler that forgets ids after an hour,
// and passes one that keeps them two days.
func TestRetentionUsesADeclaredHorizon(t *testing.T) {
	twin, err := verify.Declare(verify.Declaration{Name: "acme-retries", SignatureHeader: "Stripe-Signature",
		Format: "t={timestamp},v1={signature}", Signed: "{timestamp}.{body}", EventID: "$.id",
		Retries: []time.Duration{time.Minute, time.Hour, 24 * time.Hour}, RetrySource: "https://acme.example/retries"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ttl  time.Duration
		want report.Status
		msg  string
	}{
		{time.Hour, report.Fail, "event ids are forgotten after 1h (as declared with"},
		{48 * time.Hour, report.Pass, "as long as acme-retries retries (up to 24h: https://acme.example/retries)"},
	} {
		h, u := newHandler(t, "correct")
		d := delivery(t, 1, 4900)
		d.Provider, d.Scheme = "acme-retries", twin
		o := options(h, u, d)
		o.Phases, o.DedupeTTL = []string{PhaseFirst, PhaseRetention}, tc.ttl
		c, _ := Run(context.Background(), o)
		if c == nil {
			t.Fatal("no report")
		}
		ph := phaseOf(t, c, PhaseRetention)
		if ph.Status != tc.want || !strings.Contains(ph.Message, tc.msg) {
			t.Errorf("ttl %s: %s %q, want %s with %q", tc.ttl, ph.Status, ph.Message, tc.want, tc.msg)
		}
	}
}
