package check

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// paceDeliveries are n deliveries about n different customers.
func paceDeliveries(t *testing.T, n int) []Delivery {
	var ds []Delivery
	for i := range n {
		ds = append(ds, customerDelivery(t, int64(i+1), fmt.Sprintf("cus_p%d", i)))
	}
	return ds
}

// latencyWarned lists the deliveries whose latency phase did not pass.
func latencyWarned(c *report.Check) []string {
	var out []string
	for _, d := range c.Deliveries {
		for _, p := range d.Phases {
			if p.Phase == PhaseLatency && p.Status != report.Pass {
				out = append(out, fmt.Sprintf("%d: %s %s", d.DeliveryID, p.Status, p.Message))
			}
		}
	}
	return out
}

// paceRun is one check of paceModes.
type paceRun struct {
	jobs int
	c    *report.Check
	err  error
	took time.Duration
	peak int32 // the handler's most POSTs at once, waiting ones included
}

// paceModes checks ds once per jobs count, side by side, each against a
// handler of its own: the machine's load is the same for every mode.
func paceModes(t *testing.T, ds []Delivery, edit func(*Options, *customers), jobs ...int) []*paceRun {
	t.Helper()
	runs := make([]*paceRun, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		runs[i] = &paceRun{jobs: j}
		wg.Add(1)
		go func(pr *paceRun) {
			defer wg.Done()
			var h *customers
			start := time.Now()
			pr.c, pr.err = customersCheck(t, pr.jobs, ds, func(o *Options, hh *customers) { h = hh; edit(o, hh) })
			pr.took = time.Since(start)
			pr.peak = h.peak.Load()
		}(runs[i])
	}
	wg.Wait()
	for _, pr := range runs {
		if pr.err != nil {
			t.Fatalf("--jobs %d: %v", pr.jobs, pr.err)
		}
		t.Logf("--jobs %d: %s, the handler's peak %d at once, latency %+v, notes:\n%s", pr.jobs, pr.took, pr.peak, *pr.c.Latency, strings.Join(pr.c.Notes, "\n"))
	}
	return runs
}

// A handler that serves one copy at a time, 25 ms each, answers in 25 ms
// alone and in about 250 ms to 10 deliveries sending at once. With no
// jobs count given, deliveries start at the handler's pace: none starts
// while it answers over twice as slow as alone, so the handler sees far
// fewer copies at once than with the machine's default given as a count,
// no copy is slowed into a latency warning that --jobs 1 does not give,
// and every delivery's verdict is the one --jobs 1 gives. The machine's
// default given as a count is obeyed as given, and there the handler
// does slow into warnings: the test shows what the pace prevents.
func TestPacedJobsHoldASlowingHandler(t *testing.T) {
	t.Parallel() // waits on the handler, not on CPU
	if DefaultJobs() < 10 {
		t.Skipf("the machine's default is %d jobs", DefaultJobs())
	}
	ds := paceDeliveries(t, 10)
	twice(t, func() error {
		return holdASlowingHandler(t, ds)
	})
}

// holdASlowingHandler is one try of TestPacedJobsHoldASlowingHandler.
func holdASlowingHandler(t *testing.T, ds []Delivery) error {
	runs := paceModes(t, ds, func(o *Options, h *customers) {
		h.slow, h.sem = 25*time.Millisecond, make(chan struct{}, 1)
		// Warned at a p95 over 200 ms: eight times the handler alone. The
		// pace holds it near twice, four to six times at most (it adds
		// half again the deliveries running while the answers stay within
		// twice). With 20 answers a delivery, its p95 is its second
		// slowest: a moment the machine stalls every goroutine (-race on
		// two busy cores) slows one answer of each, not the p95.
		o.ProviderTimeout = 400 * time.Millisecond
		o.N, o.Phases = 20, []string{PhaseFirst, PhaseDups, PhaseLatency}
		// In-flight copies are bounded by --burst (20 by default): the
		// same bound with or without the pace.
		o.Burst = 20
	}, 1, 0, DefaultJobs())
	seq, paced, fixed := runs[0], runs[1], runs[2]
	if w := latencyWarned(seq.c); len(w) > 0 {
		return fmt.Errorf("the handler alone is judged slow:\n%s", strings.Join(w, "\n"))
	}
	if w := latencyWarned(fixed.c); len(w) == 0 || fixed.peak < 8 {
		return fmt.Errorf("--jobs %d: %d copies at once never slowed the handler into a warning: the test shows nothing", DefaultJobs(), fixed.peak)
	}
	if w := latencyWarned(paced.c); len(w) > 0 {
		return fmt.Errorf("the default made a handler that is fast alone look slow:\n%s", strings.Join(w, "\n"))
	}
	if phaseStatuses(seq.c) != phaseStatuses(paced.c) {
		return fmt.Errorf("--jobs 1 and the default disagree:\n%s\n---\n%s", phaseStatuses(seq.c), phaseStatuses(paced.c))
	}
	// What the pace bounds is the answers' time, not a count: 4 deliveries
	// whose last answers all came within twice alone (some waiting for
	// their effects to settle, not sending) may become 6. Fewer than all.
	if paced.peak >= fixed.peak {
		return fmt.Errorf("the default let %d copies at once reach the handler, --jobs %d %d", paced.peak, DefaultJobs(), fixed.peak)
	}
	notes := strings.Join(paced.c.Notes, "\n")
	if !strings.Contains(notes, fmt.Sprintf("jobs 10 (the machine's default is %d), held to", DefaultJobs())) || !strings.Contains(notes, "no delivery was started while it answered over") {
		return fmt.Errorf("the notes should say the jobs were held and why: %q", paced.c.Notes)
	}
	return nil
}

// A handler that answers at once is never held: the default checks as
// fast as the machine's default given as a count, side by side.
func TestPacedJobsLeaveAFastHandlerAlone(t *testing.T) {
	t.Parallel() // waits on probes and windows, not on CPU
	ds := paceDeliveries(t, 16)
	twice(t, func() error {
		return leaveAFastHandlerAlone(t, ds)
	})
}

// leaveAFastHandlerAlone is one try of TestPacedJobsLeaveAFastHandlerAlone.
func leaveAFastHandlerAlone(t *testing.T, ds []Delivery) error {
	runs := paceModes(t, ds, func(o *Options, _ *customers) {
		// Long enough that a second's noise is not the ratio.
		o.N, o.BurstRounds = 10, 3
	}, 0, DefaultJobs())
	paced, fixed := runs[0], runs[1]
	if phaseStatuses(fixed.c) != phaseStatuses(paced.c) {
		return fmt.Errorf("the default and --jobs %d disagree:\n%s\n---\n%s", DefaultJobs(), phaseStatuses(fixed.c), phaseStatuses(paced.c))
	}
	if r := float64(paced.took) / float64(fixed.took); r > 1.3 {
		return fmt.Errorf("the default took %s, %.2f× --jobs %d's %s", paced.took, r, DefaultJobs(), fixed.took)
	}
	if notes := strings.Join(paced.c.Notes, "\n"); !strings.Contains(notes, fmt.Sprintf("jobs %d (the machine's default), ", DefaultJobs())) {
		return fmt.Errorf("the notes should say the jobs chosen: %q", paced.c.Notes)
	}
	return nil
}

// twice runs a try of a test that compares wall times and latencies of
// runs side by side, and a second try when the first fails: on two cores
// under -race with the rest of the suite beside it (load average 10-20,
// seen), a stalled machine slowed the handler alone into a latency
// warning, and left one delivery's dups not judged in one mode of two.
// A behaviour the pace gets wrong fails both tries; two failures on a
// machine running over twice as many tasks as it has CPUs (a full go test
// ./... with the parallel e2e tests beside it: both tries warned, seen)
// skip instead, saying why.
func twice(t *testing.T, try func() error) {
	t.Helper()
	err := try()
	if err == nil {
		return
	}
	t.Logf("first try: %v; trying once more", err)
	if err := try(); err != nil {
		if l, over := testkit.Overloaded(); over {
			t.Skipf("failed twice with the machine overloaded (load average %.1f on %d CPUs), not a measure of the pace: %v", l, runtime.NumCPU(), err)
		}
		t.Fatal(err)
	}
}
