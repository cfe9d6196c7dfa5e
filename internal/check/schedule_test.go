package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// customers is a handler keeping a credit count per customer, served with
// GET /count?c=CUSTOMER: it deduplicates on the event id, except for the
// customers in double, whose every copy is credited.
type customers struct {
	// inFlight counts POSTs being handled, peak the most at once; each
	// takes slow.
	inFlight, peak atomic.Int32
	slow           time.Duration
	// sem, when set, lets len(sem) POSTs take slow at once: the others
	// wait their turn, as behind a pool of len(sem) connections.
	sem chan struct{}

	mu     sync.Mutex
	seen   map[string]bool
	credit map[string]int
	double map[string]bool
}

func (h *customers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		n := h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
		}
		if h.sem != nil {
			h.sem <- struct{}{}
			defer func() { <-h.sem }()
		}
		time.Sleep(h.slow)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Method == http.MethodGet {
		fmt.Fprint(w, h.credit[r.URL.Query().Get("c")])
		return
	}
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		ID   string `json:"id"`
		Data struct {
			Object struct {
				Customer string `json:"customer"`
			} `json:"object"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if h.seen[ev.ID] && !h.double[ev.Data.Object.Customer] {
		return
	}
	h.seen[ev.ID] = true
	h.credit[ev.Data.Object.Customer]++
}

// customerDelivery is delivery id, about customer.
func customerDelivery(t *testing.T, id int64, customer string) Delivery {
	t.Helper()
	d := delivery(t, id, 100)
	body := strings.Replace(string(d.Req.Body), `"customer": "cus_QpA7c2tZkLm9Xw"`, `"customer": "`+customer+`"`, 1)
	if body == string(d.Req.Body) {
		t.Fatal("the fixture's customer moved")
	}
	d.Req.Body = []byte(body)
	req, err := verify.Sign(d.Req, "stripe", testSecret, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Req = req
	return d
}

func customersCheck(t *testing.T, jobs int, ds []Delivery, edit ...func(*Options, *customers)) (*report.Check, error) {
	t.Helper()
	h := &customers{seen: map[string]bool{}, credit: map[string]int{}, double: map[string]bool{"cus_b": true}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/hook")
	o := Options{Target: u, Deliveries: ds, Secret: testSecret, Jobs: jobs,
		Probes: []probe.Probe{probe.Named(probe.NewHTTP(srv.URL+"/count?c={{json:data.object.customer}}"), "credits")},
		N:      3, Burst: 5, BurstRounds: 2, Settle: 5 * time.Millisecond, SettleMax: 150 * time.Millisecond,
		Phases: []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost, PhaseLatency}}
	for _, e := range edit {
		e(&o, h)
	}
	return Run(context.Background(), o)
}

func phaseStatuses(c *report.Check) string {
	var out []string
	for _, d := range c.Deliveries {
		for _, p := range d.Phases {
			out = append(out, fmt.Sprintf("%d %s %s", d.DeliveryID, p.Phase, p.Status))
		}
	}
	return strings.Join(out, "\n")
}

// Deliveries with a probe scoped to their customer run side by side and
// get the verdicts they get one at a time: the customer whose copies are
// all credited fails, the others pass, and the two deliveries about one
// customer run one after the other.
func TestScheduledDeliveriesSameVerdicts(t *testing.T) {
	ds := []Delivery{customerDelivery(t, 1, "cus_a"), customerDelivery(t, 2, "cus_b"), customerDelivery(t, 3, "cus_c"), customerDelivery(t, 4, "cus_a")}
	seq, err := customersCheck(t, 1, ds)
	if err != nil {
		t.Fatal(err)
	}
	par, err := customersCheck(t, 4, ds)
	if err != nil {
		t.Fatal(err)
	}
	if phaseStatuses(seq) != phaseStatuses(par) {
		t.Fatalf("--jobs 1 and 4 disagree:\n%s\n---\n%s", phaseStatuses(seq), phaseStatuses(par))
	}
	for _, d := range par.Deliveries {
		for _, p := range d.Phases {
			if want := d.DeliveryID == 2 && p.Phase != PhaseFirst && p.Phase != PhaseLatency; (p.Status == report.Fail) != want {
				t.Errorf("delivery %d %s: %s %s", d.DeliveryID, p.Phase, p.Status, p.Message)
			}
		}
	}
	notes := strings.Join(par.Notes, "\n")
	if !strings.Contains(notes, "4 deliveries were checked up to 3 at a time") || !strings.Contains(notes, "2 of them read the same values") {
		t.Fatalf("notes: %q", par.Notes)
	}
	if !strings.Contains(strings.Join(seq.Notes, "\n"), "one at a time: one job was asked for") {
		t.Fatalf("notes: %q", seq.Notes)
	}
}

// A delivery whose body lacks the field a scoped probe names is a setup
// error naming the delivery, before anything is sent.
func TestScheduledMissingFieldIsSetupError(t *testing.T) {
	d := customerDelivery(t, 7, "cus_a")
	d.Req.Body = []byte(`{"id":"evt_x","type":"invoice.paid","data":{"object":{}}}`)
	req, err := verify.Sign(d.Req, "stripe", testSecret, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Req = req
	c, err := customersCheck(t, 2, []Delivery{customerDelivery(t, 1, "cus_a"), d})
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "delivery 7") || !strings.Contains(err.Error(), "json:data.object.customer") || c != nil {
		t.Fatalf("got %v, %v", c, err)
	}
}

// Deliveries whose probe is not scoped run as a group (grouptest.go), or,
// when they cannot, one at a time, and the report says why and how to run
// them side by side.
func TestUnscopedDeliveriesSayWhy(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900), delivery(t, 2, 4900))
	c := run(t, o)
	if notes := strings.Join(c.Notes, "\n"); !strings.Contains(notes, "then the other 1 as a group") {
		t.Fatalf("notes: %q", c.Notes)
	}
	o.Phases = []string{PhaseFirst}
	c = run(t, o)
	if notes := strings.Join(c.Notes, "\n"); !strings.Contains(notes, "2 deliveries were checked one at a time") || !strings.Contains(notes, "no phase sends a control event") {
		t.Fatalf("notes: %q", c.Notes)
	}
	o.Jobs = 1
	c = run(t, o)
	if notes := strings.Join(c.Notes, "\n"); !strings.Contains(notes, "2 deliveries were checked one at a time: no probe is scoped") ||
		!strings.Contains(notes, "could not be checked as a group: one job was asked for") || !strings.Contains(notes, "{{json:data.object.customer}}") {
		t.Fatalf("notes: %q", c.Notes)
	}
}

// Deliveries side by side never have more than --burst copies in flight
// between them, however many jobs: the handler sees no more load than one
// delivery's burst gives it.
func TestScheduledCopiesInFlightAreBounded(t *testing.T) {
	var ds []Delivery
	for i, c := range []string{"cus_a", "cus_c", "cus_d", "cus_e", "cus_f", "cus_g"} {
		ds = append(ds, customerDelivery(t, int64(i+1), c))
	}
	var h *customers
	c, err := customersCheck(t, 6, ds, func(o *Options, hh *customers) {
		h, hh.slow = hh, 30*time.Millisecond
		o.Burst, o.Phases = 2, []string{PhaseFirst, PhaseDups}
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != report.VerdictPass {
		t.Fatalf("verdict %s\n%s", c.Verdict, phaseStatuses(c))
	}
	if p := h.peak.Load(); p > 2 {
		t.Fatalf("%d copies in flight at once, want at most --burst 2", p)
	}
}

// A reset restores the whole handler's state: with --reset-cmd even
// deliveries with scoped probes run one at a time, and the notes say why.
func TestScheduledResetRunsAlone(t *testing.T) {
	ds := []Delivery{customerDelivery(t, 1, "cus_a"), customerDelivery(t, 2, "cus_c")}
	var h *customers
	c, err := customersCheck(t, 4, ds, func(o *Options, hh *customers) {
		h, hh.slow = hh, 20*time.Millisecond
		o.ResetCmd, o.Phases = "true", []string{PhaseFirst, PhaseDups}
		o.Name = func(in Input) string {
			if in == InputReset {
				return "--reset-cmd"
			}
			return ""
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(c.Notes, "\n"); !strings.Contains(notes, "2 deliveries were checked one at a time: --reset-cmd restores the whole handler's state") {
		t.Fatalf("notes: %q", c.Notes)
	}
	if p := h.peak.Load(); p != 1 {
		t.Fatalf("%d copies at once: the deliveries overlapped", p)
	}
}
