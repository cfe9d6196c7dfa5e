package check

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
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

// Every handler the engine tests know, checked with first's window
// overlapped and with every phase alone: the same status, phase by phase.
func TestOverlapSameVerdictsAsAlone(t *testing.T) {
	for _, kind := range []string{"correct", "double", "sigkey", "unsigned", "late", "forgets", "dup409", "state", "ignore", "reject", "marks"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			statuses := func(alone bool) map[string]report.Status {
				h, u := newHandler(t, kind)
				o := options(h, u, delivery(t, 1, 4900))
				o.alone = alone
				c, err := Run(context.Background(), o)
				if err != nil {
					return map[string]report.Status{"error": report.Status(err.Error())}
				}
				out := map[string]report.Status{"verdict": report.Status(c.Verdict)}
				for _, p := range c.Deliveries[0].Phases {
					out[p.Phase] = p.Status
				}
				return out
			}
			alone, over := statuses(true), statuses(false)
			for name, want := range alone {
				if over[name] != want {
					t.Errorf("%s: %s overlapped, %s alone", name, over[name], want)
				}
			}
		})
	}
}

// receiptHandler credits an event once and sends its receipt (a second
// probe, emails) after delay (none when 0), or, with flushOnRequest, as
// soon as the next request arrives, whichever comes first; it verifies
// the signature and deduplicates. A dup that goes wrong (the copies it works on
// again, by arrival: 1 is the first) credits again.
type receiptHandler struct {
	mu             sync.Mutex
	seen           map[string]int
	credits        atomic.Int64
	emails         atomic.Int64
	pending        int
	delay          time.Duration
	flushOnRequest bool
	workOn         map[int]bool
}

func (h *receiptHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev struct{ ID string }
	if err := json.Unmarshal(body, &ev); err != nil || !validStripe(r, body) {
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	if h.flushOnRequest && h.pending > 0 {
		h.emails.Add(int64(h.pending))
		h.pending = 0
	}
	h.seen[ev.ID]++
	n := h.seen[ev.ID]
	work := n == 1 || h.workOn[n]
	if work {
		h.credits.Add(1)
	}
	if n == 1 && h.delay > 0 {
		h.pending++
		time.AfterFunc(h.delay, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.pending > 0 {
				h.pending--
				h.emails.Add(1)
			}
		})
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// validStripe verifies r's Stripe signature of body with the test secret.
func validStripe(r *http.Request, body []byte) bool {
	req := &message.Request{Method: r.Method, Target: r.URL.RequestURI(), Proto: "HTTP/1.1", Body: body}
	for name, vs := range r.Header {
		for _, v := range vs {
			req.Headers = append(req.Headers, message.Header{Name: name, Value: v})
		}
	}
	res, err := verify.Verify(req, "stripe", testSecret, verify.Options{})
	return err == nil && res.Valid
}

type atomicProbe struct {
	name string
	v    *atomic.Int64
}

func (p atomicProbe) Name() string { return p.name }

func (p atomicProbe) Read(context.Context) (probe.Value, error) {
	return probe.NumValue(float64(p.v.Load())), nil
}

func receiptCheck(t *testing.T, h *receiptHandler, phases ...string) *report.Check {
	t.Helper()
	h.seen = map[string]int{}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Target: u, Deliveries: []Delivery{delivery(t, 1, 4900)}, Secret: testSecret,
		Probes: []probe.Probe{atomicProbe{"credits", &h.credits}, atomicProbe{"emails", &h.emails}},
		N:      3, Burst: 5, BurstRounds: 2, Settle: 20 * time.Millisecond, SettleMax: 3 * time.Second, Phases: phases}
	return run(t, o)
}

// receiptInEffect finds the receipt in first's effect, of the event first
// sent or of the fresh one it was checked again from.
var receiptInEffect = regexp.MustCompile(`emails \d+ → \d+ \(\+1\)`)

// A correct handler's receipt email, sent 150 ms after it answered: a late
// effect of first that lands while dups and tamper run in its window. It
// must count in first's effect, and nothing may be charged to the phases
// that overlapped it: what ran in the window is run again.
func TestOverlapLateEffectIsFirsts(t *testing.T) {
	t.Parallel()
	h := &receiptHandler{delay: 150 * time.Millisecond}
	c := receiptCheck(t, h, PhaseFirst, PhaseDups, PhaseTamper, PhaseBurst, PhaseLost)
	if c.Verdict != report.VerdictPass {
		t.Fatalf("verdict %s:\n%s", c.Verdict, dump(c))
	}
	first := phaseOf(t, c, PhaseFirst)
	if !receiptInEffect.MatchString(first.Message) {
		t.Errorf("first's effect lacks the receipt: %s", first.Message)
	}
	if notes := strings.Join(c.Notes, "\n"); strings.Contains(notes, "nothing moved that they did not account for") {
		t.Errorf("an overlap that saw the receipt land was taken as it was:\n%s", notes)
	}
}

// The receipt lands right as a duplicate is answered (the handler flushes
// its outbox when the next request comes): a change in that copy's reading
// that is not first's work again is not the copy's doing.
func TestOverlapLateEffectAtACopyIsNotTheCopys(t *testing.T) {
	t.Parallel()
	h := &receiptHandler{delay: 300 * time.Millisecond, flushOnRequest: true}
	c := receiptCheck(t, h, PhaseFirst, PhaseDups)
	if d := phaseOf(t, c, PhaseDups); d.Status != report.Pass {
		t.Fatalf("dups %s: %s\n%s", d.Status, d.Message, dump(c))
	}
	if first := phaseOf(t, c, PhaseFirst); !receiptInEffect.MatchString(first.Message) {
		t.Errorf("first's effect lacks the receipt: %s", first.Message)
	}
}

// A dedupe that fails on the second arrival of an event: the copy that did
// the work again is named, overlapped or not, and first's effect is its own.
func TestOverlapCopyThatWorksAgainIsNamed(t *testing.T) {
	t.Parallel()
	h := &receiptHandler{workOn: map[int]bool{2: true}} // and no receipt
	c := receiptCheck(t, h, PhaseFirst, PhaseDups)
	d := phaseOf(t, c, PhaseDups)
	if d.Status != report.Fail || !strings.Contains(d.Message, "1 of 2 duplicates did the work again (copies 2)") {
		t.Fatalf("dups %s: %s\n%s", d.Status, d.Message, dump(c))
	}
	if first := phaseOf(t, c, PhaseFirst); !strings.Contains(first.Message, "credits 0 → 1 (+1)") {
		t.Errorf("first's effect: %s", first.Message)
	}
}

func dump(c *report.Check) string {
	var b strings.Builder
	for _, p := range c.Deliveries[0].Phases {
		b.WriteString(p.Phase + " " + string(p.Status) + ": " + p.Message + "\n")
	}
	b.WriteString(strings.Join(c.Notes, "\n"))
	return b.String()
}

// cancelInPhase cancels the run at the first attempt of phase, as Ctrl-C
// would.
type cancelInPhase struct {
	NopObserver
	phase  string
	cancel context.CancelFunc
}

func (c cancelInPhase) Attempt(a store.Attempt) {
	if a.Phase == c.phase {
		c.cancel()
	}
}

// A run stopped during a phase that runs inside first's window, before
// anything moved there, reports first judged, the phases before it, and
// that phase interrupted, as a run of one does; everything it sent is
// stored.
func TestOverlapInterruptedKeepsWhatWasJudged(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := &receiptHandler{}
	h.seen = map[string]int{}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/hook")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := Options{Target: u, Deliveries: []Delivery{delivery(t, 1, 4900)}, Secret: testSecret, Store: st,
		Probes: []probe.Probe{atomicProbe{"credits", &h.credits}},
		N:      3, Burst: 5, BurstRounds: 2, Settle: 20 * time.Millisecond, SettleMax: 3 * time.Second,
		Phases:   []string{PhaseFirst, PhaseDups, PhaseTamper, PhaseBurst, PhaseLost},
		Observer: cancelInPhase{phase: PhaseBurst, cancel: cancel}}
	c, err := Run(ctx, o)
	if err == nil || c == nil {
		t.Fatalf("an interrupted run: %v, %v", c, err)
	}
	var got []string
	for _, p := range c.Deliveries[0].Phases {
		got = append(got, p.Phase+" "+string(p.Status))
	}
	if want := "first pass, dups pass, tamper pass, burst interrupted"; strings.Join(got, ", ") != want {
		t.Fatalf("phases %q, want %s\n%s", got, want, dump(c))
	}
	as, err := st.ListAttempts(context.Background(), c.RunID)
	if err != nil {
		t.Fatal(err)
	}
	byPhase := map[string]int{}
	for _, a := range as {
		byPhase[a.Phase]++
	}
	if byPhase[PhaseFirst] != 1 || byPhase[PhaseDups] != 2 || byPhase[PhaseTamper] == 0 || byPhase["control"] != 1 || byPhase[PhaseBurst] == 0 {
		t.Errorf("stored attempts by phase: %v", byPhase)
	}
}
