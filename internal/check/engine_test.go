package check

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// These tests drive the phases against handlers served by httptest, each
// keeping its effect in memory, and read it through a counter probe: a
// phase's logic is tested in milliseconds, without the binary.

const testSecret = "whsec_unit_test_secret"

// handler is a webhook handler under test. Its effect is a number (credits
// given, say); kinds differ in how they deduplicate.
type handler struct {
	kind string // "correct", "double", "racy", "unsigned", "ignore", "last", "reject", "sigkey"
	// resetFile, when it exists, resets the state before the next request
	// or probe read (the reset command creates it).
	resetFile string

	mu     sync.Mutex
	seen   map[string]bool
	effect atomic.Int64
	// busy is held while an event is handled by the busy kinds; customer
	// is set once the state kind has created its customer.
	busy     sync.Mutex
	customer bool
	// pending is the spill kind's duplicate work not done yet, for the
	// event pendingID; the next request of another event does it.
	pending   func()
	pendingID string
	// arrivals counts the copies of each event the third kind received.
	arrivals map[string]int
}

func newHandler(t *testing.T, kind string) (*handler, *url.URL) {
	t.Helper()
	h := &handler{kind: kind, seen: map[string]bool{}, arrivals: map[string]int{}, resetFile: filepath.Join(t.TempDir(), "reset")}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	return h, u
}

// maybeReset clears the state when the reset command asked for it.
func (h *handler) maybeReset() {
	if err := os.Remove(h.resetFile); err == nil {
		h.mu.Lock()
		h.seen = map[string]bool{}
		h.effect.Store(0)
		h.mu.Unlock()
	}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.maybeReset()
	body, _ := io.ReadAll(r.Body)
	req := &message.Request{Method: r.Method, Target: r.URL.RequestURI(), Proto: "HTTP/1.1", Body: body}
	for name, vs := range r.Header {
		for _, v := range vs {
			req.Headers = append(req.Headers, message.Header{Name: name, Value: v})
		}
	}
	if h.kind != "unsigned" {
		res, err := verify.Verify(req, "stripe", testSecret, verify.Options{})
		if err != nil || !res.Valid {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
	}
	var ev struct {
		ID   string `json:"id"`
		Data struct {
			Object struct {
				AmountPaid int64 `json:"amount_paid"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	switch h.kind {
	case "busy500", "busy409":
		// Correct one copy at a time; a copy arriving while another is
		// handled is refused: with an error (a shared connection already
		// in a transaction), or with 409, asking to retry later.
		if !h.busy.TryLock() {
			if h.kind == "busy500" {
				http.Error(w, "cannot start a transaction within a transaction", http.StatusInternalServerError)
			} else {
				http.Error(w, "event already in progress", http.StatusConflict)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
		h.mu.Lock()
		if !h.seen[ev.ID] {
			h.seen[ev.ID] = true
			h.effect.Add(1)
		}
		h.mu.Unlock()
		h.busy.Unlock()
	case "dup409": // deduplicates, and answers a duplicate 409
		h.mu.Lock()
		dup := h.seen[ev.ID]
		if !dup {
			h.seen[ev.ID] = true
			h.effect.Add(1)
		}
		h.mu.Unlock()
		if dup {
			http.Error(w, "already processed", http.StatusConflict)
			return
		}
	case "state": // deduplicates, but creates the event's customer: unique
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.seen[ev.ID] {
			break
		}
		if h.customer {
			http.Error(w, "UNIQUE constraint failed: customers.id", http.StatusInternalServerError)
			return
		}
		h.seen[ev.ID], h.customer = true, true
		h.effect.Add(1)
	case "late": // answers first, works 30 ms later, never deduplicates
		go func() {
			time.Sleep(30 * time.Millisecond)
			h.effect.Add(1)
		}()
	case "sigkey": // deduplicates on the Stripe-Signature header, not the event id
		// A provider signs each attempt at its own time, so its retries
		// are all done again; found with a Fastify + standardwebhooks
		// handler keyed on webhook-signature.
		h.mu.Lock()
		if key := r.Header.Get("Stripe-Signature"); !h.seen[key] {
			h.seen[key] = true
			h.effect.Add(1)
		}
		h.mu.Unlock()
	case "forgets": // deduplicates while the event's work is in flight, forgets it once done
		// What BullMQ's jobId with removeOnComplete does: a second job of
		// the id is refused while the first exists, not once it is removed.
		h.mu.Lock()
		busy := h.seen[ev.ID]
		h.seen[ev.ID] = true
		h.mu.Unlock()
		if !busy {
			// Long enough that a burst's copies all arrive while it is
			// in flight on a loaded machine: at 20 ms, a full go test
			// ./... beside it once let a copy in after the work was
			// done, failing burst alone and not overlapped.
			time.Sleep(60 * time.Millisecond)
			h.effect.Add(1)
			h.mu.Lock()
			delete(h.seen, ev.ID)
			h.mu.Unlock()
		}
	case "receipt": // deduplicates; a payment of 4901 also gets a receipt, counted 30 ms after the answer
		h.mu.Lock()
		first := !h.seen[ev.ID]
		if first {
			h.seen[ev.ID] = true
			h.effect.Add(1)
		}
		h.mu.Unlock()
		if first && ev.Data.Object.AmountPaid == 4901 {
			go func() {
				time.Sleep(30 * time.Millisecond)
				h.effect.Add(1)
			}()
		}
	case "spill": // correct but for invoices of 4901: a duplicate of one does the work again 10 ms after it is answered, or when a request of another event comes first
		h.mu.Lock()
		if h.pending != nil && h.pendingID != ev.ID {
			h.pending()
			h.pending = nil
		}
		switch {
		case !h.seen[ev.ID]:
			h.seen[ev.ID] = true
			h.effect.Add(1)
		case ev.Data.Object.AmountPaid == 4901:
			var once sync.Once
			work := func() { once.Do(func() { h.effect.Add(1) }) }
			h.pending, h.pendingID = work, ev.ID
			time.AfterFunc(10*time.Millisecond, work)
		}
		h.mu.Unlock()
	case "third": // does the work on an event's first and third copy: a dedupe that fails now and then
		h.mu.Lock()
		h.arrivals[ev.ID]++
		if n := h.arrivals[ev.ID]; n == 1 || n == 3 {
			h.effect.Add(1)
		}
		h.mu.Unlock()
	case "marks": // deduplicates, but an event's first redelivery marks it, once (+2: a flag and its time)
		// A change of another size than the event's effect, made by one
		// duplicate only: copies after it find the event marked.
		h.mu.Lock()
		h.arrivals[ev.ID]++
		switch h.arrivals[ev.ID] {
		case 1:
			h.effect.Add(1)
		case 2:
			h.effect.Add(2)
		}
		h.mu.Unlock()
	case "zero": // correct; an invoice paying nothing changes nothing
		h.mu.Lock()
		if !h.seen[ev.ID] && ev.Data.Object.AmountPaid > 0 {
			h.seen[ev.ID] = true
			h.effect.Add(1)
		}
		h.mu.Unlock()
	case "ignore":
	case "reject":
		http.Error(w, "no", http.StatusInternalServerError)
		return
	case "double": // no deduplication at all
		h.effect.Add(1)
	case "racy": // checks, then works, then claims: overlapping copies all work
		h.mu.Lock()
		dup := h.seen[ev.ID]
		h.mu.Unlock()
		if !dup {
			time.Sleep(20 * time.Millisecond)
			h.effect.Add(1)
			h.mu.Lock()
			h.seen[ev.ID] = true
			h.mu.Unlock()
		}
	case "last": // deduplicates, but the last event wins: order matters
		h.mu.Lock()
		if !h.seen[ev.ID] {
			h.seen[ev.ID] = true
			h.effect.Store(ev.Data.Object.AmountPaid)
		}
		h.mu.Unlock()
	default: // correct, unsigned: claim and work atomically
		h.mu.Lock()
		if !h.seen[ev.ID] {
			h.seen[ev.ID] = true
			h.effect.Add(1)
		}
		h.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

// counter is the fake probe: it reads the handler's in-memory effect.
type counter struct{ h *handler }

var _ probe.Probe = counter{}

func (c counter) Name() string { return "count" }

func (c counter) Read(context.Context) (probe.Value, error) {
	c.h.maybeReset()
	return probe.NumValue(float64(c.h.effect.Load())), nil
}

// brokenProbe cannot be read.
type brokenProbe struct{}

func (brokenProbe) Name() string { return "broken" }

func (brokenProbe) Read(context.Context) (probe.Value, error) {
	return probe.Value{}, errors.New("connection refused")
}

// delivery is a signed Stripe invoice.paid delivery paying amount.
func delivery(t *testing.T, id int64, amount int) Delivery {
	t.Helper()
	req, err := verify.BuildDelivery("stripe", "invoice.paid", testSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req.Body = []byte(strings.Replace(string(req.Body), `"amount_paid": 4900`, `"amount_paid": `+itoa(amount), 1))
	if req, err = verify.Sign(req, "stripe", testSecret, verify.Options{}); err != nil {
		t.Fatal(err)
	}
	ident := verify.IdentityFor("stripe", req)
	return Delivery{ID: id, Provider: "stripe", Scheme: verify.Lookup("stripe"), EventID: ident.EventID, EventType: ident.EventType, Req: req}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// options is a fast check of h at u: short settle times, small counts.
func options(h *handler, u *url.URL, ds ...Delivery) Options {
	return Options{
		Target: u, Deliveries: ds, Probes: []probe.Probe{counter{h}}, Secret: testSecret,
		N: 3, Burst: 5, BurstRounds: 2, Settle: 5 * time.Millisecond, SettleMax: 150 * time.Millisecond,
		Phases: []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost, PhaseTamper, PhaseLatency},
	}
}

func phaseOf(t *testing.T, c *report.Check, name string) report.PhaseResult {
	t.Helper()
	for _, p := range c.Deliveries[0].Phases {
		if p.Phase == name {
			return p
		}
	}
	t.Fatalf("no phase %s in %+v", name, c.Deliveries[0].Phases)
	return report.PhaseResult{}
}

func run(t *testing.T, o Options) *report.Check {
	t.Helper()
	c, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return c
}

func TestRunPhasesAgainstHandlers(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		verdict string
		want    map[string]report.Status
		msg     map[string]string
	}{
		{"correct", report.VerdictPass, map[string]report.Status{
			PhaseFirst: report.Pass, PhaseDups: report.Pass, PhaseBurst: report.Pass, PhaseLost: report.Pass, PhaseTamper: report.Pass, PhaseLatency: report.Pass,
		}, map[string]string{
			PhaseDups:  "2 duplicates (same event id) changed nothing",
			PhaseBurst: "2 bursts of 5 concurrent copies",
			PhaseLost:  "effect equals the first delivery's each time",
		}},
		{"double", report.VerdictFail, map[string]report.Status{
			PhaseFirst: report.Pass, PhaseDups: report.Fail, PhaseBurst: report.Fail, PhaseLost: report.Fail, PhaseTamper: report.Pass,
		}, map[string]string{
			PhaseDups:  "2 of 2 duplicates did the work again (copies 2, 3)",
			PhaseBurst: "the event was processed 5 times (4 copies extra)",
			PhaseLost:  "the retry did the work again after the lost copy had done it",
		}},
		{"racy", report.VerdictFail, map[string]report.Status{
			PhaseFirst: report.Pass, PhaseDups: report.Pass, PhaseBurst: report.Fail, PhaseTamper: report.Pass,
		}, map[string]string{
			PhaseBurst: "burst 1: 5 concurrent copies of fresh event evt_",
		}},
		// Copies of one event sent within a second carried one signature:
		// a handler keyed on it passed dups, burst and lost.
		{"sigkey", report.VerdictFail, map[string]report.Status{
			PhaseFirst: report.Pass, PhaseDups: report.Fail, PhaseBurst: report.Fail, PhaseLost: report.Fail, PhaseTamper: report.Pass,
		}, map[string]string{
			PhaseDups:  "2 of 2 duplicates did the work again (copies 2, 3)",
			PhaseBurst: "the event was processed 5 times (4 copies extra)",
		}},
		{"unsigned", report.VerdictFail, map[string]report.Status{
			PhaseFirst: report.Pass, PhaseDups: report.Pass, PhaseTamper: report.Fail,
		}, map[string]string{
			PhaseTamper: "was acted on: count changed from",
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			h, u := newHandler(t, tc.kind)
			c := run(t, options(h, u, delivery(t, 1, 4900)))
			if c.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", c.Verdict, tc.verdict)
			}
			for name, want := range tc.want {
				if p := phaseOf(t, c, name); p.Status != want {
					t.Errorf("%s: %s (%s), want %s", name, p.Status, p.Message, want)
				}
			}
			for name, msg := range tc.msg {
				if p := phaseOf(t, c, name); !strings.Contains(p.Message, msg) {
					t.Errorf("%s message %q lacks %q", name, p.Message, msg)
				}
			}
		})
	}
}

// A burst whose copies got no answer says why in its warning (the first
// error), not only how many: "error×2" alone leaves the reader guessing.
func TestBurstWarningNamesTheError(t *testing.T) {
	h := &handler{kind: "correct", seen: map[string]bool{}, resetFile: filepath.Join(t.TempDir(), "reset")}
	var mu sync.Mutex
	copies := map[string]int{}
	// Every second repeat of an event id (only the burst repeats one here)
	// is hung up on before any answer, as an overflowing accept queue does.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct{ ID string }
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		copies[ev.ID]++
		n := copies[ev.ID]
		mu.Unlock()
		if n > 1 && n%2 == 0 {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				// A reset, as a full listen backlog answers (Python's
				// http.server queues 5 connections).
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0)
				}
				conn.Close()
			}
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/hook")
	o := options(h, u, delivery(t, 1, 4900))
	o.Phases = []string{PhaseFirst, PhaseBurst}
	p := phaseOf(t, run(t, o), PhaseBurst)
	if p.Status != report.Pass || len(p.Warnings) != 1 {
		t.Fatalf("burst %s %q, warnings %q", p.Status, p.Message, p.Warnings)
	}
	if w := p.Warnings[0]; !strings.Contains(w, "concurrent copies were not answered 2xx") || !strings.Contains(w, "error×") ||
		!strings.Contains(w, "; the first error: ") {
		t.Errorf("warning %q does not name the error", w)
	}
	if w := p.Warnings[0]; strings.Contains(w, "connection reset") && !strings.Contains(w, "listen backlog is smaller than") {
		t.Errorf("warning %q does not name the listen backlog", w)
	}
}

func TestRunPhasesInRegistryOrder(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900))
	o.Phases = nil // every phase the inputs allow
	c := run(t, o)
	var got []string
	for _, p := range c.Deliveries[0].Phases {
		got = append(got, p.Phase)
	}
	if want := []string{"first", "dups", "tamper", "burst", "lost", "latency", "crash"}; !slices.Equal(got, want) {
		t.Errorf("phases %v, want %v", got, want)
	}
	if c.Order != nil {
		t.Errorf("order is not shown for one delivery it was not asked for: %+v", c.Order)
	}
	crash := phaseOf(t, c, PhaseCrash)
	if crash.Status != report.Skip || crash.Message != "not run: needs the command that starts the handler so hookreplay can kill and restart the handler" {
		t.Errorf("crash without a server: %s %q", crash.Status, crash.Message)
	}
}

func TestRunSkipsSayWhatIsMissingInTheCallersWords(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900))
	o.Secret = ""
	o.Phases = []string{PhaseFirst, PhaseBurst, PhaseTamper, PhaseOrder}
	o.Name = func(in Input) string {
		return map[Input]string{InputSecret: "--secret", InputSecretSources: "--secret (or --secret-env)"}[in]
	}
	c := run(t, o)
	for name, want := range map[string]string{
		PhaseBurst:  "not run: a fresh event id would break the stripe signature: give --secret (or --secret-env) to enable it",
		PhaseTamper: "not run: needs --secret to sign the copies it tampers with",
	} {
		if p := phaseOf(t, c, name); p.Status != report.Skip || p.Message != want {
			t.Errorf("%s: %s %q, want skip %q", name, p.Status, p.Message, want)
		}
	}
	if c.Order == nil || c.Order.Status != report.Skip || c.Order.Message != "not run: needs two or more deliveries" {
		t.Errorf("order asked for with one delivery: %+v", c.Order)
	}
}

func TestRunFirstWithoutEffectIsInconclusive(t *testing.T) {
	h, u := newHandler(t, "ignore")
	c := run(t, options(h, u, delivery(t, 1, 4900)))
	if c.Verdict != report.VerdictInconclusive {
		t.Errorf("verdict %s", c.Verdict)
	}
	first := phaseOf(t, c, PhaseFirst)
	if first.Status != report.Inconclusive || !strings.Contains(first.Message, "the probes saw no effect of the first delivery") ||
		!strings.Contains(first.Message, "ignores invoice.paid events") {
		t.Errorf("first: %s %q", first.Status, first.Message)
	}
	for _, name := range []string{PhaseDups, PhaseBurst, PhaseLost, PhaseTamper} {
		if p := phaseOf(t, c, name); p.Status != report.Skip || p.Message != "not run: the first delivery showed no effect" {
			t.Errorf("%s: %s %q", name, p.Status, p.Message)
		}
	}
	if p := phaseOf(t, c, PhaseLatency); p.Status != report.Pass {
		t.Errorf("latency is judged from an answered first copy: %s", p.Status)
	}
}

// A fresh first copy answered 5xx without effect fails first when the state
// was reset before it; without a reset it may be the captured event's data
// colliding with state (a unique email): inconclusive, with the answer.
func TestRunFirstAnsweredWithErrorFails(t *testing.T) {
	h, u := newHandler(t, "reject")
	o := options(h, u, delivery(t, 1, 4900))
	o.ResetCmd = "touch " + h.resetFile
	c := run(t, o)
	first := phaseOf(t, c, PhaseFirst)
	if first.Status != report.Fail || first.Message != "first copy answered 500" || len(first.Violations) != 1 {
		t.Errorf("first: %+v", first)
	}
	c = run(t, options(h, u, delivery(t, 1, 4900)))
	first = phaseOf(t, c, PhaseFirst)
	if first.Status != report.Inconclusive || !strings.Contains(first.Message, "depends on state") || !strings.Contains(first.Message, `answered "no"`) {
		t.Errorf("first without reset: %+v", first)
	}
}

func TestRunDupsWithOneCopy(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900))
	o.N = 1
	o.Phases = []string{PhaseDups}
	o.Name = func(in Input) string {
		if in == InputCopies {
			return "-n"
		}
		return ""
	}
	if p := phaseOf(t, run(t, o), PhaseDups); p.Status != report.Skip || p.Message != "-n 1 sends no duplicate" {
		t.Errorf("dups: %s %q", p.Status, p.Message)
	}
}

func TestRunOrder(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want report.Status
		msg  string
	}{
		{"correct", report.Pass, "orderings of deliveries 1,2,3 left the same final state (seed 7)"},
		{"last", report.Fail, "the final state depends on delivery order: in order 3,2,1 count ended at 100"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			h, u := newHandler(t, tc.kind)
			o := options(h, u, delivery(t, 1, 100), delivery(t, 2, 200), delivery(t, 3, 300))
			o.Phases, o.Seed = []string{PhaseOrder}, 7
			o.ResetCmd = "touch '" + h.resetFile + "'"
			c := run(t, o)
			if c.Order == nil || c.Order.Status != tc.want || !strings.Contains(c.Order.Message, tc.msg) {
				t.Fatalf("order: %+v, want %s %q", c.Order, tc.want, tc.msg)
			}
			if len(c.Deliveries) != 3 || len(c.Deliveries[0].Phases) != 0 {
				t.Errorf("only order was asked for: %+v", c.Deliveries)
			}
		})
	}
}

func TestRunOrderNeedsReset(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 100), delivery(t, 2, 200))
	o.Phases = nil
	o.Name = func(in Input) string {
		if in == InputReset {
			return "--reset-cmd"
		}
		return ""
	}
	o.BurstRounds = 1
	c := run(t, o)
	if c.Order == nil || c.Order.Message != "not run: needs --reset-cmd to restore the handler's state before each ordering" {
		t.Errorf("order: %+v", c.Order)
	}
}

func TestRunSetupErrors(t *testing.T) {
	h, u := newHandler(t, "correct")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed, _ := url.Parse("http://" + ln.Addr().String() + "/hook")
	ln.Close()
	for _, tc := range []struct {
		name  string
		edit  func(*Options)
		check func(error) bool
	}{
		{"no probe", func(o *Options) { o.Probes = nil }, func(err error) bool {
			var mi *MissingInput
			return errors.As(err, &mi) && mi.Need == InputProbe
		}},
		{"no delivery", func(o *Options) { o.Deliveries = nil }, func(err error) bool { return strings.Contains(err.Error(), "no delivery") }},
		{"nothing listening", func(o *Options) { o.Target = closed }, func(err error) bool {
			var nl *NotListeningError
			return errors.As(err, &nl) && nl.Target == closed && strings.Contains(err.Error(), "nothing is listening at "+closed.String())
		}},
		{"probe cannot be read", func(o *Options) { o.Probes = []probe.Probe{brokenProbe{}} }, func(err error) bool {
			return strings.Contains(err.Error(), "connection refused")
		}},
		{"reset fails", func(o *Options) { o.ResetCmd = "exit 3" }, func(err error) bool {
			var re *ResetError
			return errors.As(err, &re)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(h, u, delivery(t, 1, 4900))
			tc.edit(&o)
			_, err := Run(context.Background(), o)
			var se *SetupError
			if !errors.As(err, &se) || !tc.check(err) {
				t.Fatalf("err = %v (%T), want a matching *SetupError", err, err)
			}
		})
	}
}

// recorder is an Observer that keeps what it was told and fails the test
// when two calls overlap.
type recorder struct {
	t      *testing.T
	busy   atomic.Bool
	starts []PhaseStart
	ends   []PhaseEnd
	steps  []Step
	notes  []Note
	reads  int
	tries  []store.Attempt
}

func (r *recorder) enter() func() {
	if !r.busy.CompareAndSwap(false, true) {
		r.t.Error("Observer called concurrently")
	}
	return func() { r.busy.Store(false) }
}

func (r *recorder) PhaseStarted(p PhaseStart) { defer r.enter()(); r.starts = append(r.starts, p) }
func (r *recorder) Attempt(a store.Attempt)   { defer r.enter()(); r.tries = append(r.tries, a) }
func (r *recorder) Reading(Reading)           { defer r.enter()(); r.reads++ }
func (r *recorder) Step(s Step)               { defer r.enter()(); r.steps = append(r.steps, s) }
func (r *recorder) PhaseDone(p PhaseEnd)      { defer r.enter()(); r.ends = append(r.ends, p) }
func (r *recorder) Note(n Note)               { defer r.enter()(); r.notes = append(r.notes, n) }

func TestObserverSeesEveryStep(t *testing.T) {
	h, u := newHandler(t, "correct")
	rec := &recorder{t: t}
	o := options(h, u, delivery(t, 1, 4900))
	o.Observer = rec
	c := run(t, o)
	var started, done []string
	for _, s := range rec.starts {
		started = append(started, s.Phase)
	}
	for _, e := range rec.ends {
		done = append(done, e.Result.Phase)
	}
	if want := []string{"first", "dups", "tamper", "burst", "lost", "latency"}; !slices.Equal(started, want) || !slices.Equal(done, want) {
		t.Errorf("started %v, done %v, want %v", started, done, want)
	}
	var steps []string
	for _, s := range rec.steps {
		steps = append(steps, s.Phase)
	}
	// first, 2 dups, 2 tampered copies (tamper must change nothing: it runs
	// before the phases that make work), the control event, 2 burst rounds,
	// 2 lost trials
	if want := []string{"first", "dups", "dups", "tamper", "tamper", "control", "burst", "burst", "lost", "lost"}; !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
	sent := 1 // the control event
	for _, p := range c.Deliveries[0].Phases {
		if p.Phase != PhaseLatency { // judges the first copy: sends nothing
			sent += p.Attempts
		}
	}
	if len(rec.tries) != sent {
		t.Errorf("%d attempts observed, %d sent", len(rec.tries), sent)
	}
	if rec.reads == 0 || len(rec.notes) == 0 || rec.notes[0].Kind != NoteAdded || !strings.Contains(rec.notes[0].Text, "control event") {
		t.Errorf("readings %d, notes %+v", rec.reads, rec.notes)
	}
	if b := rec.steps[6]; len(b.Attempts) != 5 || b.Status != report.Pass || b.N != 1 {
		t.Errorf("burst step: %+v", b)
	}
}

func TestRunStoresWhatItSaw(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, u := newHandler(t, "double")
	o := options(h, u, delivery(t, 1, 4900))
	o.Store, o.Phases = st, []string{PhaseDups}
	c := run(t, o)
	loaded, err := Load(context.Background(), st, c.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Verdict != report.VerdictFail || len(loaded.Deliveries[0].Phases) != 2 || loaded.Deliveries[0].Phases[1].Status != report.Fail {
		t.Errorf("loaded report: %+v", loaded)
	}
	as, err := st.ListAttempts(context.Background(), c.RunID)
	judged := 0
	for _, a := range as {
		if !strings.HasPrefix(a.Phase, redonePrefix) { // what an overlap sent before it was redone
			judged++
		}
	}
	if err != nil || judged != 3 {
		t.Fatalf("attempts %d (%d judged), %v; want first + 2 dups", len(as), judged, err)
	}

	// A run that ends in a setup error is stored as such, in the caller's words.
	o.ResetCmd = "exit 3"
	o.ErrorText = func(err error) string { return "worded: " + err.Error() }
	if _, err := Run(context.Background(), o); err == nil {
		t.Fatal("a failing reset command is a setup error")
	}
	runs, err := st.ListRuns(context.Background(), "check", 1)
	if err != nil {
		t.Fatal(err)
	}
	last := runs[0]
	if last.Verdict != "error" || !strings.Contains(string(last.Summary), "worded: reset command") {
		t.Errorf("errored run: %s %s", last.Verdict, last.Summary)
	}
	if _, err := Load(context.Background(), st, last.ID); err == nil {
		t.Error("Load of an errored run must fail")
	}
}

func TestPhaseRegistry(t *testing.T) {
	if !slices.Equal(AllPhases, report.PhaseOrder) {
		t.Errorf("registry %v, report order %v", AllPhases, report.PhaseOrder)
	}
	for _, p := range Phases() {
		if p.Hint == "" {
			t.Errorf("phase %s has no fix hint", p.Name)
		}
		if got, ok := PhaseNamed(p.Name); !ok || got.Name != p.Name {
			t.Errorf("PhaseNamed(%s) = %+v, %v", p.Name, got, ok)
		}
	}
	if _, ok := PhaseNamed("nope"); ok {
		t.Error("PhaseNamed(nope) found a phase")
	}
	for _, p := range phases {
		if (p.delivery == nil) == (p.all == nil) {
			t.Errorf("phase %s: exactly one of delivery and all must be set", p.name)
		}
	}
}

// cancelOnAttempt cancels the run at its first attempt, as Ctrl-C would.
type cancelOnAttempt struct {
	NopObserver
	cancel context.CancelFunc
}

func (c cancelOnAttempt) Attempt(store.Attempt) { c.cancel() }

// A run stopped by the user is stored as interrupted (as a replay is), not
// as an error.
func TestRunInterruptedIsStoredAsInterrupted(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Store, o.Observer = st, cancelOnAttempt{cancel: cancel}
	if _, err := Run(ctx, o); err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	runs, err := st.ListRuns(context.Background(), "check", 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	if runs[0].Verdict != "interrupted" {
		t.Errorf("interrupted run stored with verdict %q", runs[0].Verdict)
	}
}

// A handler whose dedupe holds only while the work is in flight (BullMQ's
// jobId with removeOnComplete) passes the burst and fails dups and lost:
// their fix says the id must be kept after the work, not "record handled
// event ids", which that handler does.
func TestForgetfulDedupeHint(t *testing.T) {
	h, u := newHandler(t, "forgets")
	c := run(t, options(h, u, delivery(t, 1, 4900)))
	if p := phaseOf(t, c, PhaseBurst); p.Status != report.Pass {
		t.Fatalf("burst: %s (%s), want pass", p.Status, p.Message)
	}
	for _, name := range []string{PhaseDups, PhaseLost} {
		p := phaseOf(t, c, name)
		if p.Status != report.Fail || len(p.Violations) == 0 {
			t.Fatalf("%s: %s (%s), want fail", name, p.Status, p.Message)
		}
		for _, v := range p.Violations {
			if v.Hint != hintForgets {
				t.Errorf("%s hint %q, want the forgetful-dedupe hint", name, v.Hint)
			}
		}
	}
	// Without a passing burst the same dups failure keeps its own hint.
	h, u = newHandler(t, "double")
	c = run(t, options(h, u, delivery(t, 1, 4900)))
	if v := phaseOf(t, c, PhaseDups).Violations; len(v) == 0 || v[0].Hint != hintDoubled {
		t.Errorf("double handler's dups violations %+v, want the doubled hint", v)
	}
}
