package check

// The group's first copies, duplicates, forged copies and control events
// back to back (grouptest.go). groupFirst reads each member's first copy
// until settled, so that a probe moving then shows the effect was not all
// in place as the handler answered: about 100 ms of quiet per member, most
// of a group's time. Instead, every member's first copy is sent one after
// another, then every member's duplicates, then its forged copies, then
// every member's control event (a second fresh event) in the reverse
// order, with one read of the probes after each member's copies and
// nothing else, and one wait for quiet and one late-effect window after the
// last. Each read is the next copies' reading before, so whatever lands
// between two reads is in some member's window. A member's effect is taken
// as its first copy's window only when its control event's window shows
// exactly the same change.
//
// That is exact for probes whose every change is a sum of non-negative
// parts (the group's condition) when the quiet and the window after the
// last read saw nothing land. Write m(j) for the change in member j's first
// window, m'(j) in its control's, and E(j) for the event's whole effect (a
// second fresh event's is the same: that is what the control event checks
// alone). Take the first k members sent: their first windows saw their
// effects less the parts that landed later (in a later window, never
// earlier), so the sum of their m is at most the sum of their E; their
// control windows are the last k windows read, and saw their effects plus
// whatever of earlier copies landed there (nothing landed after the last),
// so the sum of their m' is at least the sum of their E. m = m' member by
// member makes both sums equal, for every k: nothing of the first k
// members' first copies landed after their own windows, so (k = 1, 2, …)
// every first copy's effect was all in its own window, and nothing of the
// duplicates and forged copies between them landed in a control window.
// Their own windows are then judged as the group's dups and tamper judge
// them (a change where none is due runs that member's phase alone, and
// the members read before it are tried again), with no wait for quiet of
// their own: a change after their last read is in a control window or
// after the last.
//
// "Nothing landed after the last" is only as good as the watch after it:
// a control event's part landing after the watch hides the same part of
// its first copy landed in a duplicate's window (m and m' both short of E
// by it). So the watch lasts, after every first copy and every control
// event, as long as a first copy's late-effect window alone (1 s, within
// --settle-max), not a control event's (twice the settle).
//
// Anything else — an answer other than 2xx to a first copy or a control
// event, a first copy whose read showed no change (its effect may come
// later than a read), a probe that fell or is not a number, m ≠ m', a
// change after the last read — ends the pipeline: what it sent and read is
// stored with its phase marked "redone: ", its late effects get a
// late-effect window to land, and the first copies are sent as groupFirst
// sends them.

import (
	"context"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// pipeline is what groupPipeline sent and read.
type pipeline struct {
	from    int
	members []int
	started []int // the members whose first copy was sent
	piped   []*firstResult
	ctls    []pipedControl
	prev    reading   // the last read
	sent    time.Time // when the last copy was answered
	// deadline is the end of the late-effect window every first copy and
	// control event is owed.
	deadline time.Time
	dups     map[int]*dupsMember
	tamper   []*tamperMember
	skipped  map[int]*report.PhaseResult // tamper's
	// dupsTook and tamperTook are the time their copies and reads took.
	dupsTook, tamperTook time.Duration
}

// pipedControl is a member's control event sent in the pipeline.
type pipedControl struct {
	id  string
	a   store.Attempt
	ctl []report.ProbeDelta
}

// groupPipeline sends the first copies of the deliveries from from on,
// their duplicates and forged copies, and their control events in the
// reverse order, back to back (see the file's comment). ok false: it gave
// up (the first copies are to be sent as groupFirst sends them). With an
// error, in lists the deliveries whose first phase it ended: every one
// whose first copy was sent, none of them judged yet.
func (r *runner) groupPipeline(ctx context.Context, from int, frs []*firstResult, tally *groupTally) (ok bool, in []int, err error) {
	ds := r.o.Deliveries
	if len(ds)-from < 2 {
		return false, nil, nil
	}
	prev, quiet, err := r.groupQuiet(ctx, PhaseFirst, "group: before the first copies")
	if err != nil || !quiet || !allNumbers(prev.vals) {
		return false, []int{from}, err
	}
	pl := &pipeline{from: from, piped: make([]*firstResult, len(ds)), ctls: make([]pipedControl, len(ds)), prev: prev}
	for i := from; i < len(ds); i++ {
		pl.members = append(pl.members, i)
	}
	r.holding, r.holdCat = true, heldFirst
	ok, err = r.pipe(ctx, pl)
	if err != nil {
		_ = r.release(ctx, nil) // what was sent is stored, as it was sent
		return false, pl.started, err
	}
	if !ok {
		if err := r.release(ctx, func(int) bool { return true }); err != nil {
			return false, pl.started, err
		}
		tally.pipeRedone = true
		return false, []int{from}, r.pipeDrain(ctx, pl.sent)
	}
	if err := r.release(ctx, nil); err != nil {
		return false, pl.started, err
	}
	i, err := r.pipeJudge(ctx, pl, frs, tally)
	return true, []int{i}, err
}

// pipe sends and reads the pipeline's copies; ok false: it gave up.
func (r *runner) pipe(ctx context.Context, pl *pipeline) (ok bool, err error) {
	ds := r.o.Deliveries
	// next reads the probes after copies of d were answered, a the last
	// first copy or control event: the reading after them, and before
	// the next ones. ok false when the pipeline cannot go on.
	next := func(d *Delivery, phase string, a store.Attempt) (reading, bool, error) {
		pl.sent = time.Now()
		cur, err := r.peek(ctx, d, phase, "after")
		if err != nil {
			return reading{}, false, err
		}
		return cur, answered2xx([]store.Attempt{a}) && allNumbers(cur.vals) && !fell(pl.prev.vals, cur.vals), nil
	}
	for _, i := range pl.members {
		d := &ds[i]
		fr := &firstResult{start: time.Now(), clk: r.clk.snapshot(), res: &report.PhaseResult{Phase: PhaseFirst}, deferred: true}
		r.phaseStarted(d, PhaseFirst)
		pl.started = append(pl.started, i)
		req, id, fresh, _ := r.freshIdentity(d)
		if !fresh {
			return false, nil
		}
		fr.req, fr.eventID, fr.fresh = req, id, true
		if err := r.storeReading(ctx, d, PhaseFirst, "before", pl.prev); err != nil {
			return false, err
		}
		fr.sentAt = time.Now()
		a := r.send(ctx, req, replay.SendOptions{})
		if err := r.record(ctx, &a, d, PhaseFirst, 1, id); err != nil {
			return false, err
		}
		fr.att, fr.answered = a, a.Err == "" && a.Status != 0
		cur, on, err := next(d, PhaseFirst, a)
		if err != nil || !on || !anyChangedVals(pl.prev.vals, cur.vals) {
			return false, err
		}
		fr.before, fr.after, fr.answeredVals = pl.prev, cur, cur.vals
		fr.effect = deltas(r.c.Probes, pl.prev.vals, cur.vals)
		fr.took, fr.timing = time.Since(fr.start), r.clk.since(fr.clk)
		pl.piped[i], pl.prev = fr, cur
		_, pl.deadline = r.lateWindowOf(PhaseFirst, fr.sentAt, cur)
	}
	if ok, err := r.pipeDupsTamper(ctx, pl); err != nil || !ok {
		return false, err
	}
	for k := len(pl.members) - 1; k >= 0; k-- {
		i := pl.members[k]
		d, fr := &ds[i], pl.piped[i]
		req, id, fresh, _ := r.freshIdentity(d)
		if !fresh {
			return false, nil
		}
		if err := r.storeReading(ctx, d, "control", "before", pl.prev); err != nil {
			return false, err
		}
		sentAt := time.Now()
		a := r.send(ctx, req, replay.SendOptions{})
		if err := r.record(ctx, &a, d, "control", 1, id); err != nil {
			return false, err
		}
		cur, on, err := next(d, "control", a)
		if err != nil {
			return false, err
		}
		ctl := deltas(r.c.Probes, pl.prev.vals, cur.vals)
		if !on || !sameEffect(fr.effect, ctl) {
			return false, nil
		}
		pl.ctls[i], pl.prev = pipedControl{id: id, a: a, ctl: ctl}, cur
		// Watched as long as a first copy, not a control event alone: a
		// part of it landing after the watch would hide the same part of
		// its first copy landed in a duplicate's or forged copy's window
		// (m and m' both short of E by it).
		if _, dl := r.lateWindowOf(PhaseFirst, sentAt, cur); dl.After(pl.deadline) {
			pl.deadline = dl
		}
	}
	// Nothing may land after the last read: a wait for quiet, then the
	// rest of the late-effect window the copies are owed.
	settled, err := r.read(ctx, nil, "control", "group: after the last control event")
	if err != nil {
		return false, err
	}
	if len(settled.unsettled) > 0 || !probe.SameValues(settled.vals, pl.prev.vals) {
		return false, nil
	}
	moved, err := r.groupWatch(ctx, settled, pl.deadline)
	return !moved, err
}

// pipeDupsTamper sends the members' duplicates and forged copies in the
// pipeline, as the group's dups and tamper send them, without their waits
// for quiet; ok false: a probe fell.
func (r *runner) pipeDupsTamper(ctx context.Context, pl *pipeline) (ok bool, err error) {
	ds := r.o.Deliveries
	if p, _ := phaseByName(PhaseDups); r.enabled(PhaseDups) && r.o.N >= 2 && !r.isUnmet(p) {
		start := time.Now()
		for _, i := range pl.members {
			r.phaseStarted(&ds[i], PhaseDups)
		}
		ms, last, down, err := r.sendGroupDups(ctx, pl.members, pl.piped, pl.prev)
		if err != nil || down {
			return false, err
		}
		pl.dups, pl.prev, pl.sent, pl.dupsTook = ms, last, time.Now(), time.Since(start)
	}
	if p, _ := phaseByName(PhaseTamper); r.enabled(PhaseTamper) && !r.isUnmet(p) {
		start := time.Now()
		for _, i := range pl.members {
			r.phaseStarted(&ds[i], PhaseTamper)
		}
		ms, skipped, last, down, err := r.sendGroupTamper(ctx, pl.members, pl.prev)
		if err != nil || down {
			return false, err
		}
		pl.tamper, pl.skipped, pl.prev, pl.sent, pl.tamperTook = ms, skipped, last, time.Now(), time.Since(start)
	}
	return true, nil
}

// isUnmet reports whether p cannot run for want of an input.
func (r *runner) isUnmet(p phase) bool {
	res, _ := r.unmet(p)
	return res != nil
}

// pipeJudge judges the members' first copies and control events the
// pipeline sent, and leaves their duplicates and forged copies to be
// judged when their phases come (groupTally.pre); i is the delivery an
// error came with.
func (r *runner) pipeJudge(ctx context.Context, pl *pipeline, frs []*firstResult, tally *groupTally) (i int, err error) {
	ds := r.o.Deliveries
	for _, i := range pl.members {
		fr := pl.piped[i]
		r.learn(fr.after.at.Sub(fr.sentAt))
		if err := r.firstFinish(ctx, &ds[i], fr); err != nil {
			return i, err
		}
		frs[i] = fr
	}
	for _, i := range pl.members {
		d, c := &ds[i], pl.ctls[i]
		ad := &additivity{known: true}
		r.additive[d.ID] = ad
		r.judgeControl(ad, d, frs[i], c.id, c.a, c.ctl)
		r.step(Step{Phase: "control", DeliveryID: d.ID, N: 1, Attempts: []store.Attempt{c.a}, Effect: c.ctl, Changed: anyChanged(c.ctl)})
	}
	tally.add(PhaseFirst, len(pl.members))
	tally.piped = true
	tally.pre = map[string]func([]int) (map[int]*report.PhaseResult, []int, error){}
	if pl.dups != nil {
		// The forged copies' windows come after the duplicates' last:
		// a change there may be a duplicate's late work.
		tail := false
		for _, m := range pl.tamper {
			tail = tail || !probe.SameValues(m.from.vals, m.to.vals)
		}
		tally.pre[PhaseDups] = func(members []int) (map[int]*report.PhaseResult, []int, error) {
			return r.judgeGroupDups(ctx, members, frs, pl.dups, pl.dupsTook, true, tail)
		}
	}
	if pl.skipped != nil {
		tally.pre[PhaseTamper] = func(members []int) (map[int]*report.PhaseResult, []int, error) {
			return r.judgeGroupTamper(members, pl.tamper, pl.skipped, pl.tamperTook)
		}
	}
	return 0, nil
}

// pipeDrain waits, after a pipeline given up, until the probes have been
// quiet for a late-effect window since the last change seen (within
// --settle-max of the last copy, answered at last): the copies' late work
// lands before the first copies are sent again, not in their windows.
func (r *runner) pipeDrain(ctx context.Context, last time.Time) error {
	for {
		rd, err := r.read(ctx, nil, PhaseFirst, "group: after the copies sent back to back")
		if err != nil {
			return err
		}
		moved, err := r.groupWindow(ctx, rd, last)
		if err != nil || !moved || time.Since(last) >= r.o.SettleMax {
			return err
		}
	}
}

// allNumbers reports whether every value is a number.
func allNumbers(vals []probe.Value) bool {
	for _, v := range vals {
		if !v.IsNum {
			return false
		}
	}
	return true
}
