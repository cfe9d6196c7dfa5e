package check

// One delivery, faster (issue 28 §1): first's late-effect window (1 s
// after its last change, reading.go's calibrate) is mostly waiting. For a
// handler whose effect was all there when it answered, the phases after
// first run while that window is still open, and their readings show, or
// fail to show, that nothing moved that they cannot account for:
//
//   - dups and tamper run first in the window, exactly as they run alone. A
//     correct handler changes nothing for them; a change read right as a
//     copy was answered that is first's effect again is that copy's work
//     (the handler works before answering: first showed it), named as
//     alone. Any other change is ambiguous: first's late effect (a receipt
//     email) or theirs.
//   - the control event, burst and lost run at the window's tail with
//     optimistic readings: a reading after a fresh event takes the first
//     values that show its effect instead of waiting for quiet, and any
//     other reading must see nothing new. The quiet those readings did not
//     wait for is watched once at the end (the horizon), with first's
//     window. They join only when dups and tamper saw nothing move.
//
// An ambiguous change during dups and tamper: the delivery is checked again
// from a fresh first, every phase alone. Running dups again on the same
// event cannot tell first's late effect from a copy's work: a handler that
// changes its state at an event's first redelivery only (marks it
// redelivered) finds it changed already when the copies come again. A
// phase in the window that did not pass with nothing moving (a copy
// answered 500): first's window is watched on as calibrate does and dups
// and tamper run again one after another. A copy's work and an ambiguous
// change both: checked again. In the fresh-event
// phases, anything that moved unaccounted for, a phase that did not pass,
// or a control event whose effect was not first's (the optimistic readings
// stop there and the phases go on as alone): checked again, or judged as
// alone. Either way an ambiguity costs time, never a different verdict.
// What an overlap sent and read before it was redone is stored with its
// phase named "redone: PHASE", so a run's timeline shows it apart.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/panics"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// lateWindow is first's late-effect window, left open while later phases
// run in it.
type lateWindow struct {
	window   time.Duration
	deadline time.Time
}

// overlap is what the readings taken while first's window is open saw.
type overlap struct {
	// last is the probes' values at the last reading.
	last []probe.Value
	// moved: a reading saw a change it could not account for, first at
	// movedAt and last at lastMoved. slotMoved: a reading right after a
	// copy was answered saw a change (that copy's effect).
	moved              bool
	movedAt, lastMoved time.Time
	slotMoved          bool
	// effect is first's effect on the probes names.
	effect []report.ProbeDelta
	names  []string
	// opt: readings do not wait for quiet (readOnce); horizon is until when
	// the quiet they did not wait for is owed.
	opt     bool
	horizon time.Time
	// stopped: the control event showed another effect than first's, so
	// the optimistic readings stopped (the phases go on as alone).
	stopped bool
}

// heldWrite is a store write kept back while a delivery's overlap is not
// decided: what it sent and read is stored with its phase marked when that
// part is redone. cat says which part: first's own, the overlap's, or what
// ran after an overlap that was redone.
type heldWrite struct {
	cat   int
	write func(ctx context.Context, phase func(string) string) error
}

// The parts of a delivery's check whose writes are held.
const (
	heldFirst = iota
	heldOverlap
	heldRedo
)

// redonePrefix marks the stored phase of what an overlap that was redone
// sent and read ("redone: burst"): apart from the phase judged, in a run's
// timeline as in the store.
const redonePrefix = "redone: "

// observe takes rd, a reading stored during the overlap, into account. A
// slot reading (right after a copy was answered) may show that copy's
// effect: during dups and tamper only when it is first's effect again (the
// copy did the work again); any other reading must show the last reading's
// values, with no change seen while it waited.
func (ov *overlap) observe(rd reading) {
	changed := !probe.SameValues(rd.vals, ov.last)
	if rd.slot && changed && !ov.opt && !sameEffect(ov.effect, deltas(ov.names, ov.last, rd.vals)) {
		// Not the work first did: a late effect of first's landing as a
		// copy was answered is as likely as the copy's.
		rd.slot = false
	}
	if rd.slot && changed {
		ov.slotMoved = true
	}
	if !rd.slot && (changed || !rd.lastChange.IsZero()) {
		at := rd.at
		if !rd.lastChange.IsZero() {
			at = rd.lastChange
		}
		if !ov.moved {
			ov.movedAt = at
		}
		ov.moved, ov.lastMoved = true, at
	}
	ov.last = rd.vals
}

// hold keeps a store write back while a delivery's overlap is undecided
// (false: not holding, write it now).
func (r *runner) hold(w func(ctx context.Context, phase func(string) string) error) bool {
	if !r.holding || r.o.Store == nil {
		return false
	}
	r.held = append(r.held, heldWrite{cat: r.holdCat, write: w})
	return true
}

// release does the held store writes, stops holding, and marks the phase
// of those of the parts redone says were redone.
func (r *runner) release(ctx context.Context, redone func(cat int) bool) error {
	held := r.held
	r.held, r.holding = nil, false
	var err error
	for _, h := range held {
		name := func(p string) string { return p }
		if redone != nil && redone(h.cat) {
			name = func(p string) string { return redonePrefix + p }
		}
		if e := h.write(context.WithoutCancel(ctx), name); e != nil && err == nil {
			err = setupf("%v", e)
		}
	}
	return err
}

// overlapWindow returns first's late-effect window when the phases after
// it can run inside it: the first copy was a fresh event, answered 2xx,
// with an effect that was all there when it answered (after, the settled
// reading, shows nothing more) and that the probes read without error, and
// no reset command restores the state before each fresh event (its change
// of the probes would end every overlap). Nil means first watches its
// window before anything else runs, as always.
func (r *runner) overlapWindow(d *Delivery, fr *firstResult, after reading, grouped bool) *lateWindow {
	if grouped || !r.mayOverlap || r.noOverlap || r.o.alone || r.o.ResetCmd != "" || !fr.fresh || !fr.answered || !is2xx(fr.att.Status) || fr.answeredVals == nil ||
		len(after.unsettled) > 0 || !anyChangedVals(fr.before.vals, after.vals) || !probe.SameValues(fr.answeredVals, after.vals) {
		return nil
	}
	window, deadline := r.lateWindowOf(PhaseFirst, fr.sentAt, after)
	return &lateWindow{window: window, deadline: deadline}
}

// overlapPhases are the phases run inside first's window, in run order: the
// ones a correct handler does nothing for, then those of fresh events.
var overlapPhases = [...]string{PhaseDups, PhaseTamper, PhaseBurst, PhaseLost}

// overlapped runs, inside fr's open late-effect window, the enabled phases
// of overlapPhases, then judges first. It returns their results (to be
// finished in registry order), or again: the delivery must be checked from
// a fresh first with nothing overlapped. in names the phase an error ended,
// done then holds the phases run before it (fr.clean: nothing had moved).
func (r *runner) overlapped(ctx context.Context, d *Delivery, fr *firstResult) (done map[string]*report.PhaseResult, again bool, in string, err error) {
	w := fr.open
	fr.open = nil
	learnt := r.snapshot(d.ID)
	// The settle a lone first would learn when nothing more lands (effDur
	// only grows: learning more later gives what learning once would).
	if !fr.after.lastChange.IsZero() {
		r.learn(fr.after.lastChange.Sub(fr.sentAt))
	}
	r.ov, r.holdCat = &overlap{last: fr.after.vals, effect: fr.effect, names: r.c.Probes}, heldOverlap
	defer func() {
		if err != nil {
			_ = r.release(ctx, nil) // what was sent is stored, as it was sent
			fr.clean = r.ov != nil && !r.ov.moved
			if in == "" {
				in = PhaseFirst
			}
		}
		r.ov = nil
	}()
	defer panics.Catch(&err) // before the cleanup above, which sees it
	done = map[string]*report.PhaseResult{}
	run := func(names ...string) (string, error) {
		for _, name := range names {
			p, ok := phaseByName(name)
			if !ok || !r.enabled(name) {
				continue
			}
			res, err := r.coreCaught(ctx, p, d, fr)
			if err != nil {
				return name, err
			}
			if res != nil {
				done[name] = res
			}
		}
		return "", nil
	}
	if in, err = run(PhaseDups, PhaseTamper); err != nil {
		return done, false, in, err
	}
	ov := r.ov
	// The fresh-event phases join only an overlap in which nothing moved.
	fresh := (r.enabled(PhaseBurst) || r.enabled(PhaseLost)) && !ov.slotMoved && passed(done)
	if !ov.moved && (passed(done) || ov.slotMoved) {
		until := w.deadline
		if fresh {
			until = until.Add(-min(2*r.effSettle, w.window/4))
		}
		if err = r.watchOverlap(ctx, until); err != nil {
			return nil, false, PhaseFirst, err
		}
	}
	switch {
	case ov.moved && ov.slotMoved:
		// Copies changed the probes as they were answered, and something
		// moved besides: which is first's late effect cannot be told.
		r.againWhy = fmt.Sprintf("delivery %d: dups and tamper ran while first's late-effect window was open, changed the probes as their copies were answered, and a probe changed besides, so first's late effects cannot be told from theirs: %s", d.ID, againText)
		return nil, true, "", r.release(ctx, func(int) bool { return true })
	case ov.moved:
		// A change that is not first's effect again: first's late effect,
		// or a copy's work of another size. Running dups again on this
		// event cannot tell: a handler that changes its state at an
		// event's first redelivery only (marks it redelivered) finds it
		// changed already and moves nothing, and the change would be
		// taken for first's. Alone, from a fresh event, it is told apart.
		r.againWhy = fmt.Sprintf("delivery %d: a probe changed while dups and tamper ran in first's late-effect window, not by first's effect again, so first's late effect cannot be told from a copy's work: %s", d.ID, againText)
		return nil, true, "", r.release(ctx, func(int) bool { return true })
	case !ov.slotMoved && !passed(done):
		return r.redoOverlap(ctx, d, fr, w, learnt, done)
	case ov.slotMoved:
		// Only as copies were answered, as first's effect was there when it
		// was answered, and nothing else moved in first's window: the
		// copies did it. Their phases stand; the rest run alone.
		fresh = false
	}
	copiesMoved := ov.slotMoved
	if fresh {
		ov.opt = true
		if in, err = run(PhaseBurst, PhaseLost); err != nil {
			return done, false, in, err
		}
	}
	if stopped := ov.stopped || copiesMoved; !stopped {
		until := w.deadline
		if r.ov.horizon.After(until) {
			until = r.ov.horizon
		}
		if err = r.watchOverlap(ctx, until); err != nil {
			return nil, false, PhaseFirst, err
		}
		if r.ov.moved || !passed(done) || !r.additive[d.ID].yesOrNone() {
			why := "a phase run in it did not pass"
			if r.ov.moved {
				why = "a probe changed where nothing was expected"
			}
			r.againWhy = fmt.Sprintf("delivery %d: burst and lost ran at the end of first's late-effect window and %s: %s", d.ID, why, againText)
			return nil, true, "", r.release(ctx, func(int) bool { return true })
		}
		// Watched quiet until the horizon: the next phase starts from there.
		q := reading{vals: r.ov.last, at: time.Now()}
		r.markSinks(&q)
		r.lastQuiet, r.quietGen = &q, r.gen.Load()
	}
	r.ov = nil
	// Nothing moved in first's window: its settled reading is its effect.
	fr.took, fr.timing = time.Since(fr.start), r.firstTiming(fr, done)
	if err = r.firstFinish(ctx, d, fr); err != nil {
		return nil, false, PhaseFirst, err
	}
	r.note("delivery %d: %s ran while first's late-effect window (%s) was open; nothing moved that they did not account for", d.ID, overlapList(done), report.Duration(w.window))
	return done, false, "", r.release(ctx, nil)
}

// redoOverlap is the overlap of dups and tamper when a phase in it did not
// pass with nothing moving (a copy answered 500, say): first's window is
// watched on as it is alone, then the phases run in it (done) run again,
// one after another, and are judged from that.
func (r *runner) redoOverlap(ctx context.Context, d *Delivery, fr *firstResult, w *lateWindow, learnt runnerSnapshot, done map[string]*report.PhaseResult) (map[string]*report.PhaseResult, bool, string, error) {
	r.ov, r.holdCat = nil, heldRedo
	r.restoreLearnt(learnt)
	overlapOnly := func(cat int) bool { return cat == heldOverlap }
	if err := r.finishOverlappedFirst(ctx, d, fr, w); err != nil {
		_ = r.release(ctx, overlapOnly)
		return nil, false, PhaseFirst, err
	}
	redone := map[string]*report.PhaseResult{}
	for _, name := range overlapPhases {
		if _, ok := done[name]; !ok {
			continue
		}
		p, _ := phaseByName(name)
		res, err := r.coreCaught(ctx, p, d, fr)
		if err != nil {
			_ = r.release(ctx, overlapOnly)
			return redone, false, name, err
		}
		if res != nil {
			redone[name] = res
		}
	}
	r.note("delivery %d: dups and tamper ran while first's late-effect window was open and a phase run in it did not pass: they were run again one after another, as alone (nothing of the overlap was judged)", d.ID)
	return redone, false, "", r.release(ctx, overlapOnly)
}

// coreCaught runs phase p of d as phaseCore does; a panic is its error.
func (r *runner) coreCaught(ctx context.Context, p phase, d *Delivery, fr *firstResult) (res *report.PhaseResult, err error) {
	defer panics.Catch(&err)
	return r.phaseCore(ctx, p, d, fr, nil, false)
}

// finishOverlappedFirst watches first's window on from its settled reading
// as calibrate does and judges first.
func (r *runner) finishOverlappedFirst(ctx context.Context, d *Delivery, fr *firstResult, w *lateWindow) error {
	after, err := r.watchLate(ctx, d, PhaseFirst, "after", fr.sentAt, fr.after, fr.after.lastChange, w.window, w.deadline)
	if err != nil {
		return err
	}
	fr.after, fr.took, fr.timing = after, time.Since(fr.start), r.clk.since(fr.clk)
	return r.firstFinish(ctx, d, fr)
}

// watchOverlap reads the probes until until, or until one moves.
func (r *runner) watchOverlap(ctx context.Context, until time.Time) error {
	r.clk.settleBegin()
	defer r.clk.settleEnd()
	for time.Now().Before(until) && !r.ov.moved {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(r.pollInterval(), max(time.Until(until), time.Millisecond))):
		}
		vals, err := probe.ReadAll(ctx, r.o.Probes)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &SetupError{Err: err}
		}
		r.ov.observe(reading{vals: vals, at: time.Now()})
	}
	return nil
}

// readOnce is a reading during the overlap's optimistic part: one read, or,
// after a fresh event (from set), reads until the probes differ from from
// (within changeWait). The quiet a settled reading would have waited for
// is owed until the horizon.
func (r *runner) readOnce(ctx context.Context, d *Delivery, phase, point string, from *reading, changeWait time.Duration) (reading, error) {
	start := time.Now()
	read := func() ([]probe.Value, error) {
		vals, err := probe.ReadAll(ctx, r.o.Probes)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &SetupError{Err: err}
		}
		return vals, nil
	}
	vals, err := read()
	if err != nil {
		return reading{}, err
	}
	for from != nil && probe.SameValues(vals, from.vals) && time.Since(start) < changeWait {
		select {
		case <-ctx.Done():
			return reading{}, ctx.Err()
		case <-time.After(r.pollInterval()):
		}
		if vals, err = read(); err != nil {
			return reading{}, err
		}
	}
	rd := reading{vals: vals, at: time.Now(), from: start, slot: from != nil}
	if from != nil && !probe.SameValues(vals, from.vals) {
		rd.lastChange = rd.at
	}
	r.markSinks(&rd)
	if owed := rd.at.Add(r.quiet()); owed.After(r.ov.horizon) {
		r.ov.horizon = owed
	}
	return rd, r.storeReading(ctx, d, phase, point, rd)
}

// optControl is calibrate for the control event during the overlap's
// optimistic part: when its effect (ctl) is first's, its window is owed
// until the horizon; otherwise the optimistic readings stop here and the
// control event is watched as it is alone (ok false).
func (r *runner) optControl(sent time.Time, after reading, ctl []report.ProbeDelta, fr *firstResult) (ok bool) {
	if r.ov == nil || !r.ov.opt {
		return false
	}
	if !sameEffect(fr.effect, ctl) {
		r.ov.opt, r.ov.stopped = false, true
		return false
	}
	_, deadline := r.lateWindowOf("control", sent, after)
	if deadline.After(r.ov.horizon) {
		r.ov.horizon = deadline
	}
	if !after.lastChange.IsZero() {
		r.learn(after.lastChange.Sub(sent))
	}
	return true
}

// yesOrNone reports whether the control event showed effects add up, or
// was not sent (nil).
func (ad *additivity) yesOrNone() bool { return ad == nil || ad.yes }

// passed reports whether every result passed (or was skipped: nothing ran).
func passed(done map[string]*report.PhaseResult) bool {
	for _, res := range done {
		if (res.Status != report.Pass && res.Status != report.Skip) || len(res.Warnings) > 0 {
			return false
		}
	}
	return true
}

// overlapList names the phases of done, in run order.
func overlapList(done map[string]*report.PhaseResult) string {
	var names []string
	for _, n := range overlapPhases {
		if res, ok := done[n]; ok && res.Status != report.Skip {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}

// againText ends the note of a delivery checked again (runner.againWhy).
const againText = "the delivery was checked again from a fresh first, every phase alone (nothing of the overlap was judged)"

// firstTiming is first's timing when phases overlapped its window: its
// own sending and reading, and the window's wait, without theirs.
func (r *runner) firstTiming(fr *firstResult, done map[string]*report.PhaseResult) *report.PhaseTiming {
	t := r.clk.since(fr.clk)
	for _, res := range done {
		if res.Timing == nil {
			continue
		}
		t.Sending -= res.Timing.Sending
		t.Settling -= res.Timing.Settling
		t.ProbeReads -= res.Timing.ProbeReads
		t.Reads -= res.Timing.Reads
	}
	return t
}

// phaseByName returns the registry's phase called name.
func phaseByName(name string) (phase, bool) {
	for _, p := range phases {
		if p.name == name {
			return p, true
		}
	}
	return phase{}, false
}

// runnerSnapshot is what a delivery's check changes in the runner, kept
// to start it again (restore).
type runnerSnapshot struct {
	id                int64
	effSettle, effDur time.Duration
	learned           bool
	answers           int
	answered          []store.Attempt
	notes, warnings   int
}

func (r *runner) snapshot(id int64) runnerSnapshot {
	return runnerSnapshot{id: id, effSettle: r.effSettle, effDur: r.effDur, learned: r.learned, answers: len(r.answers),
		answered: r.answered[id], notes: len(r.c.Notes), warnings: len(r.c.Warnings)}
}

// restoreLearnt puts back the settle learned as it was at s.
func (r *runner) restoreLearnt(s runnerSnapshot) {
	r.effSettle, r.effDur, r.learned = s.effSettle, s.effDur, s.learned
}

// restore puts the runner back as it was at s, to check s's delivery again:
// the notes and warnings of the attempt given up are dropped, and why it
// was (againWhy) noted instead.
func (r *runner) restore(s runnerSnapshot) {
	r.c.Notes, r.c.Warnings = r.c.Notes[:s.notes], r.c.Warnings[:s.warnings]
	if r.againWhy != "" {
		r.note("%s", r.againWhy)
		r.againWhy = ""
	}
	r.restoreLearnt(s)
	r.answers = r.answers[:s.answers]
	r.answered[s.id] = s.answered
	delete(r.additive, s.id)
	delete(r.dupsPassed, s.id)
	r.lastQuiet = nil
}
