package check

import (
	"context"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
)

// Phase names, in the order they run.
const (
	PhaseFirst     = "first"
	PhaseDups      = "dups"
	PhaseTamper    = "tamper"
	PhaseBurst     = "burst"
	PhaseLost      = "lost"
	PhaseOrder     = "order"
	PhaseLatency   = "latency"
	PhaseCrash     = "crash"
	PhaseRetention = "retention"
)

// Requirement is an input a phase cannot run without. Why ends the message
// "needs INPUT why" that says so; Usage, when set, ends the refusal of a
// command line that asks for the phase without the input instead.
type Requirement struct {
	Need  Input
	Why   string
	Usage string
}

// phase is one entry of the registry: adding a phase is one file with its
// run function and one entry here.
type phase struct {
	name  string
	needs []Requirement
	// always: shown whenever any per-delivery phase runs (first: every
	// other phase is judged against its effect).
	always bool
	// afterFirst: judged against the first delivery's effect, so skipped
	// (with the first phase's reason) when that was not usable.
	afterFirst bool
	// fresh: sends fresh events, so skipped when the delivery cannot be
	// given a fresh event id.
	fresh bool
	// control: judges zero effect through the control event, whose
	// shared-key warning (a second event changed nothing) shows on it.
	control bool
	// delivery runs the phase for one delivery (nil result: not shown);
	// all runs it once over every delivery. Exactly one is set.
	delivery func(r *runner, ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error)
	all      func(r *runner, ctx context.Context) (*report.PhaseResult, error)
}

// phases is the registry, in run and report order. cmd's --phases
// validation and help, the runner and Phases read it.
var phases = []phase{
	{name: PhaseFirst, always: true, delivery: func(_ *runner, _ context.Context, _ *Delivery, fr *firstResult) (*report.PhaseResult, error) {
		return fr.res, nil
	}},
	{name: PhaseDups, afterFirst: true, delivery: (*runner).dups},
	// tamper must change nothing: it runs before the phases that make a
	// lot of work, so no tail of theirs lands in its readings.
	{name: PhaseTamper, afterFirst: true, fresh: true, delivery: (*runner).tamper, needs: []Requirement{
		{Need: InputSecret, Why: "to sign the copies it tampers with"},
	}},
	{name: PhaseBurst, afterFirst: true, fresh: true, control: true, delivery: (*runner).burst},
	{name: PhaseLost, afterFirst: true, fresh: true, control: true, delivery: (*runner).lost},
	{name: PhaseOrder, all: (*runner).order, needs: []Requirement{
		{Need: InputTwoDeliveries},
		{Need: InputReset, Why: "to restore the handler's state before each ordering"},
	}},
	{name: PhaseLatency, delivery: (*runner).latency},
	{name: PhaseCrash, afterFirst: true, fresh: true, control: true, delivery: (*runner).crash, needs: []Requirement{
		{Need: InputServe, Why: "so hookreplay can kill and restart the handler", Usage: "(hookreplay kills and restarts the handler)"},
	}},
	// retention runs last: its --forget-cmd makes the handler forget an
	// event, which no later phase should inherit.
	{name: PhaseRetention, afterFirst: true, delivery: (*runner).retention},
}

// AllPhases lists every phase in run order.
var AllPhases = phaseNames()

func phaseNames() []string {
	out := make([]string, len(phases))
	for i, p := range phases {
		out[i] = p.name
	}
	return out
}

// Phase describes one phase of the check, from the registry.
type Phase struct {
	Name string
	// Needs are the inputs without which the phase is skipped, or refused
	// when asked for by name.
	Needs []Requirement
	// Hint is the fix for a violation found by the phase.
	Hint string
}

// Phases returns every phase, in run order.
func Phases() []Phase {
	out := make([]Phase, len(phases))
	for i, p := range phases {
		out[i] = Phase{Name: p.name, Needs: p.needs, Hint: report.Hint(p.name)}
	}
	return out
}

// PhaseNamed returns the phase called name; ok is false when there is none.
func PhaseNamed(name string) (p Phase, ok bool) {
	for _, x := range Phases() {
		if x.Name == name {
			return x, true
		}
	}
	return Phase{}, false
}

// has reports whether the run was given in.
func (r *runner) has(in Input) bool {
	switch in {
	case InputSecret, InputSecretSources:
		return r.o.Secret != ""
	case InputServe:
		return r.o.Serve != nil
	case InputReset:
		return r.o.ResetCmd != ""
	case InputTwoDeliveries:
		return len(r.o.Deliveries) >= 2
	case InputProbe:
		return len(r.o.Probes) > 0
	}
	return true
}

// unmet returns the result of a phase whose needs the run does not meet:
// skipped, saying what it needs; nil when they are met. show is false when
// the phase is not shown at all: a phase over several deliveries that was
// not asked for by name, in a run of one.
func (r *runner) unmet(p phase) (res *report.PhaseResult, show bool) {
	for _, req := range p.needs {
		if r.has(req.Need) {
			continue
		}
		if req.Need == InputTwoDeliveries && len(r.o.Phases) == 0 {
			return nil, false
		}
		msg := "not run: needs " + r.name(req.Need)
		if req.Why != "" {
			msg += " " + req.Why
		}
		return &report.PhaseResult{Phase: p.name, Status: report.Skip, Message: msg, Statuses: map[string]int{}}, true
	}
	return nil, true
}

// perDelivery reports whether any phase that runs per delivery is enabled.
func (r *runner) perDelivery() bool {
	for _, p := range phases {
		if p.delivery != nil && r.enabled(p.name) {
			return true
		}
	}
	return false
}

// delivery runs the first phase for d, then every enabled phase judged
// against it, in registry order.
func (r *runner) delivery(ctx context.Context, d Delivery) (*report.DeliveryResult, error) {
	dr := &report.DeliveryResult{DeliveryID: d.ID, Provider: d.Provider, EventID: d.EventID, EventIDs: d.EventIDs, EventType: d.EventType}
	fr, err := r.firstCaught(ctx, &d)
	if err != nil {
		dr.Phases = append(dr.Phases, r.errored(PhaseFirst, err))
		return dr, err
	}
	return r.deliveryRest(ctx, d, fr, dr)
}

// deliveryRest runs, for d whose first phase gave fr, every enabled phase
// in registry order, adding each result to dr. When first left its
// late-effect window open (overlap.go), the phases that fit in it run
// while it is open; when that overlap cannot be attributed, the delivery
// is checked again from a fresh first, one phase after another.
func (r *runner) deliveryRest(ctx context.Context, d Delivery, fr *firstResult, dr *report.DeliveryResult) (*report.DeliveryResult, error) {
	var done map[string]*report.PhaseResult
	if fr.open != nil {
		var again bool
		var in string
		var err error
		if done, again, in, err = r.overlapCaught(ctx, &d, fr); err != nil {
			// An error in a phase run inside first's window, before anything
			// moved there: first is judged from its settled reading and the
			// report holds the phases run before it, as a run of one's does.
			// Stopped while watching the window, or after something moved,
			// first is the phase it stopped in.
			if !fr.judged && fr.clean && in != PhaseFirst {
				fr.took, fr.timing = time.Since(fr.start), r.clk.since(fr.clk)
				if ferr := r.firstFinish(context.WithoutCancel(ctx), &d, fr); ferr != nil {
					in = PhaseFirst
				}
			}
			if !fr.judged {
				in = PhaseFirst
			} else {
				dr.Phases = append(dr.Phases, *fr.res)
				for _, p := range phases {
					if res, ok := done[p.name]; ok && p.name != in {
						dr.Phases = append(dr.Phases, *r.phaseFinish(p, &d, res))
					}
				}
			}
			dr.Phases = append(dr.Phases, r.errored(in, err))
			return dr, err
		}
		if again {
			r.restore(fr.snap)
			r.noOverlap = true
			again, err := r.firstCaught(ctx, &d)
			r.noOverlap = false
			if err != nil {
				dr.Phases = append(dr.Phases, r.errored(PhaseFirst, err))
				return dr, err
			}
			*fr, done = *again, nil // the caller's fr is this first's (grouptest's leader)
		}
	}
	dr.Effect = fr.effect
	for _, p := range phases {
		if p.delivery == nil || !(p.always || r.enabled(p.name)) {
			continue
		}
		res, ok := done[p.name]
		var err error
		if ok {
			res = r.phaseFinish(p, &d, res)
		} else {
			res, err = r.phaseCaught(ctx, p, &d, fr)
		}
		if err != nil {
			dr.Phases = append(dr.Phases, r.errored(p.name, err))
			return dr, err
		}
		if res != nil {
			dr.Phases = append(dr.Phases, *res)
		}
	}
	forgetfulHints(dr)
	return dr, nil
}

// firstCaught and phaseCaught run a phase of d; a panic in it (its own,
// or one a sender's goroutine carried back) is the phase's error, so the
// delivery's report holds the phases judged before it and this one marked
// error, as for any error that stops a run.
func (r *runner) firstCaught(ctx context.Context, d *Delivery) (fr *firstResult, err error) {
	defer panics.Catch(&err)
	return r.firstOpen(ctx, d)
}

func (r *runner) phaseCaught(ctx context.Context, p phase, d *Delivery, fr *firstResult) (res *report.PhaseResult, err error) {
	defer panics.Catch(&err)
	return r.deliveryPhase(ctx, p, d, fr)
}

// overlapCaught runs the phases inside first's open window (overlapped);
// a panic is the error of the phase it was in.
func (r *runner) overlapCaught(ctx context.Context, d *Delivery, fr *firstResult) (done map[string]*report.PhaseResult, again bool, in string, err error) {
	defer panics.Catch(&err)
	return r.overlapped(ctx, d, fr)
}

// deliveryPhase runs one per-delivery phase, or says why it was not run.
func (r *runner) deliveryPhase(ctx context.Context, p phase, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	return r.deliveryPhaseOr(ctx, p, d, fr, nil, false)
}

// deliveryPhaseOr is deliveryPhase, with grouped the result the phase got
// in a group (grouptest.go) instead of running it, when not nil; started
// says the group already told the Observer the phase started.
func (r *runner) deliveryPhaseOr(ctx context.Context, p phase, d *Delivery, fr *firstResult, grouped *report.PhaseResult, started bool) (*report.PhaseResult, error) {
	if p.afterFirst && !fr.usable {
		res := &report.PhaseResult{Phase: p.name, Status: report.Skip, Message: "not run: " + fr.why}
		r.phaseDone(d, res)
		return res, nil
	}
	res, err := r.phaseCore(ctx, p, d, fr, grouped, started)
	if err != nil || res == nil {
		return nil, err
	}
	return r.phaseFinish(p, d, res), nil
}

// phaseCore runs phase p for d (fr usable when p needs it), or takes
// grouped, its result in a group, and returns its result before the hints
// and the observer see it (phaseFinish).
func (r *runner) phaseCore(ctx context.Context, p phase, d *Delivery, fr *firstResult, grouped *report.PhaseResult, started bool) (*report.PhaseResult, error) {
	res, _ := r.unmet(p)
	clk, ran, startedAt := r.clk.snapshot(), false, time.Now()
	switch {
	case grouped != nil:
		res = grouped
	case res != nil:
	case p.fresh && !fr.fresh:
		res = &report.PhaseResult{Phase: p.name, Status: report.Skip, Message: "not run: " + r.freshReason(d), Statuses: map[string]int{}}
	case p.name == PhaseFirst:
		res = fr.res // run before every other phase, shown in its place
	default:
		if !started {
			r.phaseStarted(d, p.name)
		}
		ran = true
		var err error
		if res, err = r.stillArriving(ctx, d, p); err != nil {
			return nil, err
		}
		if res != nil {
			break
		}
		if res, err = r.stateDependent(ctx, d, fr, p); err != nil || res != nil {
			if err != nil {
				return nil, err
			}
			break
		}
		if res, err = p.delivery(r, ctx, d, fr); err != nil {
			return nil, err
		}
	}
	if res == nil {
		return nil, nil
	}
	if ran && res.Timing == nil {
		// The phase's time includes the quiet wait before it and the
		// control event it may send first, as its timing does.
		res.Timing = r.clk.since(clk)
		if res.Duration > 0 {
			res.Duration = time.Since(startedAt)
		}
	}
	return res, nil
}

// phaseFinish adds the hints and warnings that concern res, phase p's
// result for d, and tells the observer it is done.
func (r *runner) phaseFinish(p phase, d *Delivery, res *report.PhaseResult) *report.PhaseResult {
	if p.control {
		r.sharedKeyWarning(d, res)
	}
	if p.name == PhaseDups {
		r.dupsPassed[d.ID] = res.Status == report.Pass
	}
	observedHints(res, r.dupsPassed[d.ID])
	r.outsideHints(res)
	r.emailDetails(res)
	if p.name != PhaseFirst {
		r.phaseDone(d, res)
	}
	return res
}

// all runs the phases that run once over every delivery (order).
func (r *runner) all(ctx context.Context) error {
	for _, p := range phases {
		if p.all == nil || !r.enabled(p.name) {
			continue
		}
		res, show := r.unmet(p)
		if !show {
			continue
		}
		if res == nil && r.scopedProbes() {
			// Each scoped probe reads one delivery's effects; the state
			// the orderings leave is every delivery's at once.
			res = &report.PhaseResult{Phase: p.name, Status: report.Skip, Statuses: map[string]int{},
				Message: "not run: the probes are scoped to one delivery each ({{…}}), and order judges the state all deliveries leave together: give a probe that is not scoped"}
		}
		if res == nil {
			r.phaseStarted(nil, p.name)
			clk := r.clk.snapshot()
			var err error
			if res, err = p.all(r, ctx); err != nil {
				res := r.errored(p.name, err)
				r.c.Order = &res
				return err
			}
			res.Timing = r.clk.since(clk)
		}
		r.phaseDone(nil, res)
		r.c.Order = res
	}
	return nil
}

// stillArriving waits, before phase p sends anything, until the probes are
// quiet, so that nothing an earlier phase caused is charged to p. When they
// are still changing at the longest settle time it returns p's result:
// not judged, never failed. Phases that send nothing (latency, retention
// with nothing to judge it on) do not wait.
func (r *runner) stillArriving(ctx context.Context, d *Delivery, p phase) (*report.PhaseResult, error) {
	if p.name == PhaseLatency || (p.name == PhaseRetention && !r.retentionJudged()) {
		return nil, nil
	}
	q, err := r.readQuiet(ctx, d, p.name, "quiet before the phase")
	if err != nil || len(q.unsettled) == 0 {
		return nil, err
	}
	return &report.PhaseResult{Phase: p.name, Status: report.NotJudged, Statuses: map[string]int{},
		Message: fmt.Sprintf("not judged: effects of earlier phases are still arriving (%s still changing after %s %s): nothing was sent, so nothing is charged to %s; raise %s if the handler's work takes that long",
			strings.Join(q.unsettled, "; "), r.name(InputSettleMax), report.Duration(r.o.SettleMax), p.name, r.name(InputSettleMax))}, nil
}

// errored is the result of phase when err ended the run during it: marked
// error with err's message (worded by Options.ErrorText), so that the
// reports written for what was judged so far say where and why it stopped.
func (r *runner) errored(phase string, err error) report.PhaseResult {
	return report.PhaseResult{Phase: phase, Status: report.Error, Message: "error: " + r.errText(err), Statuses: map[string]int{}}
}

// errText words err as the caller wants it (Options.ErrorText).
func (r *runner) errText(err error) string {
	if r.o.ErrorText != nil {
		return r.o.ErrorText(err)
	}
	return err.Error()
}
