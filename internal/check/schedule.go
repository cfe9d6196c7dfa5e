package check

// The schedule of a check over many deliveries. Each delivery's phases are
// a plan of their own; what decides whether two plans may run side by side
// is whether their readings can be told apart. A probe that names the event
// it reads ({{json:data.object.customer}}, probe.Scoper) reads one
// delivery's effects, so deliveries whose scoped probes read different
// things run at once, each judged from its own readings exactly as it would
// be alone. Deliveries that read the same thing — a probe that is not
// scoped, a sink, the same customer twice — form one group whose
// deliveries run one after another, as they always did. A reset
// (--reset-cmd) and the crash phase's kill act on the whole handler, so
// with either every group runs alone. The run's notes say which ran how.

import (
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// MaxJobs bounds Options.Jobs: deliveries checked at once.
const MaxJobs = 64

// DefaultJobs is how many deliveries are checked at once when Options.Jobs
// is 0: eight per CPU, at most 16. Checking is mostly waiting for effects
// to settle: 20 deliveries of a fast handler on 2 shared cores took 14 s
// with 4 jobs, 7.7 s with 8 and 5.6 s with 16 (docs/performance.md).
func DefaultJobs() int {
	return min(16, 8*runtime.NumCPU())
}

// group is deliveries whose readings cannot be told apart: they run one
// after another, in the order given.
type group struct {
	deliveries []int // indexes into Options.Deliveries
}

// schedule is the plan of a run over many deliveries with scoped probes.
type schedule struct {
	groups []group
	// probes[i] are delivery i's probes, scoped to it.
	probes [][]probe.Probe
	// jobs is how many groups run at once; why says why not more.
	jobs int
	why  string
	// paced: jobs is the machine's default, no jobs count was given:
	// deliveries start at the handler's pace (schedule_pace.go).
	paced bool
}

// plan returns the schedule of a run whose probes are scoped, nil when no
// probe is (every delivery reads the same probes: one after another, by
// the runner itself).
func (r *runner) plan() (*schedule, error) {
	if !r.scopedProbes() {
		return nil, nil
	}
	s := &schedule{probes: make([][]probe.Probe, len(r.o.Deliveries))}
	// Union-find over deliveries: two that read the same thing (a probe
	// that is not scoped, or a scoped one with the same key) are one group.
	parent := make([]int, len(r.o.Deliveries))
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	seen := map[string]int{}
	for i, d := range r.o.Deliveries {
		parent[i] = i
		var body []byte
		if d.Req != nil {
			body = d.Req.Body
		}
		ps, keys, err := probe.ScopeAll(r.o.Probes, probe.EventVars(body, d.EventType, d.Provider))
		if err != nil {
			return nil, &SetupError{Err: fmt.Errorf("delivery %d: %w", d.ID, err)}
		}
		s.probes[i] = ps
		for k, key := range keys {
			id := fmt.Sprintf("%d\x00%s", k, key)
			if j, ok := seen[id]; ok {
				parent[find(i)] = find(j)
			} else {
				seen[id] = i
			}
		}
	}
	at := map[int]int{}
	for i := range r.o.Deliveries {
		root := find(i)
		g, ok := at[root]
		if !ok {
			g = len(s.groups)
			at[root] = g
			s.groups = append(s.groups, group{})
		}
		s.groups[g].deliveries = append(s.groups[g].deliveries, i)
	}
	s.jobs = r.o.Jobs
	if s.jobs <= 0 {
		s.jobs, s.paced = DefaultJobs(), true
	}
	switch {
	case r.o.ResetCmd != "":
		s.jobs, s.why = 1, r.name(InputReset)+" restores the whole handler's state"
	case r.o.Serve != nil && r.enabled(PhaseCrash):
		s.jobs, s.why = 1, "the crash phase kills the one process that serves every event"
	case s.jobs == 1:
		s.why = "one job was asked for"
	}
	s.jobs = min(s.jobs, len(s.groups))
	s.paced = s.paced && s.jobs > 1
	return s, nil
}

// scopedProbes reports whether any probe names values of the event it
// reads (probe.Scoper).
func (r *runner) scopedProbes() bool {
	for _, p := range r.o.Probes {
		if probe.IsScoped(p) {
			return true
		}
	}
	return false
}

// unscopedNote says why deliveries whose probes are not scoped were
// checked one at a time (why they could not be checked as a group,
// grouptest.go), and how to check them side by side.
func (r *runner) unscopedNote(why string) {
	if n := len(r.o.Deliveries); n >= 2 {
		r.note("%d deliveries were checked one at a time: no probe is scoped to a delivery, so every reading shows every delivery's effects, and they could not be checked as a group: %s; "+
			"a probe that names what each event is about ({{json:data.object.customer}}) lets deliveries about different things run side by side (docs/guide.md, \"Scoped probes\")", n, why)
	}
}

// note says how the deliveries were scheduled.
func (s *schedule) note(r *runner) {
	n := len(r.o.Deliveries)
	if n < 2 {
		return
	}
	shared := 0
	for _, g := range s.groups {
		if len(g.deliveries) > 1 {
			shared += len(g.deliveries)
		}
	}
	var parts []string
	switch {
	case s.jobs > 1 && s.paced:
		parts = append(parts, fmt.Sprintf("%d deliveries were checked up to %d at a time, fewer while the handler answered markedly slower than alone: their scoped probes read each delivery's own effects", n, s.jobs))
	case s.jobs > 1:
		parts = append(parts, fmt.Sprintf("%d deliveries were checked up to %d at a time: their scoped probes read each delivery's own effects", n, s.jobs))
	case s.why != "":
		parts = append(parts, fmt.Sprintf("%d deliveries were checked one at a time: %s", n, s.why))
	default:
		parts = append(parts, fmt.Sprintf("%d deliveries were checked one at a time: their probes read the same values", n))
	}
	if shared > 0 && len(s.groups) > 1 {
		parts = append(parts, fmt.Sprintf("%d of them read the same values as another (a probe that is not scoped, or the same %s) and ran one after another", shared, "scoped value"))
	}
	text := strings.Join(parts, "; ")
	r.c.Notes = append(r.c.Notes, text)
	r.obs.Note(Note{Kind: NoteSchedule, Text: text, Jobs: s.jobs, Deliveries: n})
}

// runScheduled checks every delivery by s: each group in a runner of its
// own, s.jobs groups at once, and gathers their results in the order the
// deliveries were given. The first error stops the groups not yet started
// and cancels those running; what was judged is kept.
func (r *runner) runScheduled(ctx context.Context, s *schedule) error {
	s.note(r)
	if s.jobs > 1 {
		// At most --burst copies in flight across every delivery, and a
		// burst takes every slot: one burst at a time, single copies of
		// other deliveries between them. No copy then waits behind more of
		// hookreplay's copies than a burst's own do in a run of one at a
		// time, so the latency phase judges the handler under the same
		// load in both.
		r.flightCap = int64(r.o.Burst)
		r.flight = semaphore.NewWeighted(r.flightCap)
	}
	var pc *pace
	if s.paced {
		pc = newPace(s.jobs)
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make([]*report.DeliveryResult, len(r.o.Deliveries))
	children := make([]*runner, len(s.groups))
	work := make(chan int)
	var wg sync.WaitGroup
	// A worker's panic stops the others and is raised here once the
	// groups' results are gathered, as a panic of one job would be.
	trap := panics.Trap{OnPanic: func() { cancel(errors.New("stopped by an internal error")) }}
	for range s.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer trap.Guard()
			for g := range work {
				ch := r.child()
				children[g] = ch
				for _, i := range s.groups[g].deliveries {
					if ctx.Err() != nil {
						break
					}
					if pc != nil {
						slot, err := pc.enter(ctx)
						if err != nil {
							break // stopped before it started: not judged
						}
						ch.pace, ch.paceSlot = pc, slot
					}
					ch.o.Probes, ch.lastQuiet = ch.clk.retimed(s.probes[i]), nil
					dr, err := ch.delivery(ctx, r.o.Deliveries[i])
					if pc != nil {
						pc.leave(ch.paceSlot)
						ch.paceSlot = nil
					}
					if err != nil && parent.Err() == nil && errors.Is(err, context.Canceled) {
						// Stopped by another delivery's error: not judged,
						// as a delivery the run never reached.
						break
					}
					results[i] = dr
					if err == nil && dr != nil {
						if o, ok := r.obs.(DeliveryObserver); ok {
							o.DeliveryDone(*dr)
						}
					}
					if err != nil {
						cancel(err)
						break
					}
				}
			}
		}()
	}
	for g := range s.groups {
		if ctx.Err() != nil {
			break
		}
		select {
		case work <- g:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if pc != nil {
		if text := pc.note(); text != "" {
			r.note("%s", text)
		}
	}
	r.gather(children, results)
	trap.Rethrow()
	if err := parent.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// child is a runner for one group of deliveries: the run's options,
// observer, store run and in-flight bound, and state of its own (what it
// learned about settling, its control events, its answers).
func (r *runner) child() *runner {
	ch := newRunner(r.o)
	ch.obs, ch.runID, ch.flight, ch.flightCap, ch.controlPhases = r.obs, r.runID, r.flight, r.flightCap, r.controlPhases
	return ch
}

// gather adds the children's results to the run, in the deliveries' order:
// delivery results, notes and warnings (each once), answers, and the
// settling the slowest group learned.
func (r *runner) gather(children []*runner, results []*report.DeliveryResult) {
	for i, d := range r.o.Deliveries {
		if results[i] == nil {
			continue
		}
		r.c.Deliveries = append(r.c.Deliveries, *results[i])
		if _, ok := r.answered[d.ID]; !ok {
			for _, ch := range children {
				if ch != nil && ch.answered[d.ID] != nil {
					r.answered[d.ID] = ch.answered[d.ID]
				}
			}
		}
	}
	for _, ch := range children {
		if ch == nil {
			continue
		}
		for _, w := range ch.c.Warnings {
			if !contains(r.c.Warnings, w) {
				r.c.Warnings = append(r.c.Warnings, w)
			}
		}
		for _, n := range ch.c.Notes {
			if !contains(r.c.Notes, n) {
				r.c.Notes = append(r.c.Notes, n)
			}
		}
		r.answers = append(r.answers, ch.answers...)
		if ch.haveFirst && !r.haveFirst {
			r.firstLat, r.haveFirst = ch.firstLat, true
		}
		if ch.learned && (!r.learned || ch.effDur > r.effDur) {
			r.learned, r.effDur, r.effSettle = true, ch.effDur, ch.effSettle
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// syncObserver serialises the calls of runners checking deliveries at
// once, so that an Observer never sees two calls at a time.
type syncObserver struct {
	mu sync.Mutex
	o  Observer
}

var _ Observer = (*syncObserver)(nil)

func (s *syncObserver) PhaseStarted(p PhaseStart) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.o.PhaseStarted(p)
}
func (s *syncObserver) Attempt(a store.Attempt) { s.mu.Lock(); defer s.mu.Unlock(); s.o.Attempt(a) }
func (s *syncObserver) Reading(rd Reading)      { s.mu.Lock(); defer s.mu.Unlock(); s.o.Reading(rd) }
func (s *syncObserver) Step(st Step)            { s.mu.Lock(); defer s.mu.Unlock(); s.o.Step(st) }
func (s *syncObserver) PhaseDone(p PhaseEnd)    { s.mu.Lock(); defer s.mu.Unlock(); s.o.PhaseDone(p) }
func (s *syncObserver) Note(n Note)             { s.mu.Lock(); defer s.mu.Unlock(); s.o.Note(n) }

// DeliveryDone passes the outcome on when the Observer wants it.
func (s *syncObserver) DeliveryDone(d report.DeliveryResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.o.(DeliveryObserver); ok {
		o.DeliveryDone(d)
	}
}

var _ DeliveryObserver = (*syncObserver)(nil)
