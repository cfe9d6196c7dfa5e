package check

// Group testing: deliveries whose probes are not scoped (SELECT count(*)
// FROM credits, a command printing a number) read the same values, so
// their phases cannot run side by side as scoped ones do (schedule.go).
// They can still share the waiting, which is most of a check's time: a
// group runs each phase for every delivery in turn, one delivery's copies
// after the other's, with one read of the probes between two deliveries
// (a peek) and one wait for quiet per phase, instead of a wait for quiet
// (and a one-second late-effect window after each first copy) per delivery.
//
// A peek attributes a change to a delivery only when the handler's work is
// in place when it answers, so a group is formed only from deliveries whose
// first copy showed exactly that (the probes read at its answer were its
// settled effect), whose probes are numbers and whose effect is a sum of
// non-negative changes: duplicates that do the work again then add, and
// cannot hide behind another delivery's change. A delivery's phase result
// comes from the group only when it passed there — the change between its
// peeks is exactly what the phase expects (nothing for dups and tamper, one
// event's effect per fresh event for burst and lost), every copy was
// answered 2xx, or refused for tamper, and the wait for quiet at the end
// saw nothing land after the last peek. Anything else (a change where none
// is due, a late change, an answer other than 2xx) runs that delivery's
// phase again alone, with the code and fresh events a run of one uses, so
// a failing delivery's verdict and message are exactly the ones it gets
// alone (dups with a fresh event: the handler has seen the group's copies
// of the first one, dupsAgain). A change where none is due may be late
// work of any delivery peeked at before it, so those are tried again as a
// group of their own (suspicion). The first copies share one late-effect
// window at the end; a probe that moves in it, or between two deliveries,
// sends every deferred first copy again alone.
//
// The order changes what state each delivery's phases find (phase after
// phase instead of delivery after delivery), which only a handler whose
// effect adds up per event cannot tell: the first delivery is checked
// alone, as a run of one, and its control event must show exactly that
// (runGrouped), or every delivery runs alone.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// errMovedBetween: a probe changed between one grouped delivery's settled
// reading and the next one's first copy: late work of an earlier delivery.
var errMovedBetween = errors.New("a probe moved between two deliveries' first copies")

// groupedPhase runs phase p for members (indexes into Options.Deliveries)
// as a group and returns the result of every member the group judged, and
// the members to try again as a group of their own (suspicion); the others
// run the phase alone.
type groupedPhase func(r *runner, ctx context.Context, p phase, members []int, frs []*firstResult) (map[int]*report.PhaseResult, []int, error)

// groupedPhases are the phases a group runs together. latency sends
// nothing, retention forgets one event, crash kills the handler: they run
// per delivery.
var groupedPhases = map[string]groupedPhase{
	PhaseDups:   (*runner).groupDups,
	PhaseTamper: (*runner).groupTamper,
	PhaseBurst:  (*runner).groupBurst,
	PhaseLost:   (*runner).groupLost,
}

// groupTally counts, per phase, the deliveries whose result came from the
// group, for the run's note.
type groupTally struct {
	phases   []string
	grouped  map[string]int
	firstRun int // first copies sent again alone
	// piped: the first copies and control events were sent back to back
	// (grouptest_pipe.go); pipeRedone: that was tried and given up.
	piped, pipeRedone bool
	// pre judges, for the members given, a phase whose copies were sent
	// with the first copies (grouptest_pipe.go), as run would.
	pre map[string]func(members []int) (map[int]*report.PhaseResult, []int, error)
}

func (g *groupTally) add(phase string, n int) {
	if g.grouped == nil {
		g.grouped = map[string]int{}
	}
	if _, ok := g.grouped[phase]; !ok {
		g.phases = append(g.phases, phase)
	}
	g.grouped[phase] += n
}

// groupWhy says why deliveries whose probes are not scoped are checked one
// at a time rather than as a group; "" when they can be grouped.
func (r *runner) groupWhy() string {
	switch {
	case len(r.o.Deliveries) < 2:
		return "one delivery"
	case r.o.Jobs == 1:
		return "one job was asked for"
	case r.o.Sink != nil || r.o.SMTP != nil:
		return "a sink's calls are listed under the delivery that caused them"
	case r.o.ResetCmd != "":
		return r.name(InputReset) + " restores the whole handler's state"
	case r.o.Serve != nil && r.enabled(PhaseCrash):
		return "the crash phase kills the one process that serves every event"
	}
	for _, d := range r.o.Deliveries {
		if !canFresh(&d, r.o.Secret) {
			return fmt.Sprintf("delivery %d cannot be given a fresh event id", d.ID)
		}
	}
	return ""
}

// memberWhy says why the delivery whose first phase gave fr cannot be in
// a group; "" when it can.
func (r *runner) memberWhy(fr *firstResult) string {
	switch {
	case !fr.usable || !fr.fresh:
		return "its first copy gave no effect to judge against"
	case fr.late:
		return "its effect landed after the handler answered (work behind a queue), so a read between two deliveries cannot tell whose work it shows"
	}
	positive := false
	for k := range r.c.Probes {
		b, a := fr.before.vals[k], fr.after.vals[k]
		if !b.IsNum || !a.IsNum {
			return fmt.Sprintf("probe %s is not a number", r.c.Probes[k])
		}
		d, ok := probe.Delta(b, a)
		if !ok || d < 0 {
			return fmt.Sprintf("its effect on %s is negative, so another delivery's change could hide it", r.c.Probes[k])
		}
		positive = positive || d > 0
	}
	if !positive {
		return "its first copy changed no probe"
	}
	return ""
}

// runGrouped checks the first delivery alone, every phase, as a run of
// one does: it learns the settle, and its control event shows whether a
// fresh event's effect adds up to the first's. When it does, the other
// deliveries are checked as a group, phase after phase; when it does not
// (the effect depends on state), or the delivery cannot be in a group,
// every delivery is checked alone, one after another, in the order given.
// A delivery whose first copy changed nothing (an event type the handler
// ignores) proves nothing either way: the next one is checked alone and
// may lead the group instead.
func (r *runner) runGrouped(ctx context.Context) error {
	ds := r.o.Deliveries
	drs := make([]*report.DeliveryResult, len(ds))
	for i, d := range ds {
		drs[i] = &report.DeliveryResult{DeliveryID: d.ID, Provider: d.Provider, EventID: d.EventID, EventIDs: d.EventIDs, EventType: d.EventType}
	}
	keep := func() {
		for _, dr := range drs {
			if len(dr.Phases) > 0 {
				r.c.Deliveries = append(r.c.Deliveries, *dr)
			}
		}
	}
	lead, why := -1, ""
	for i := range ds {
		// Checked as a run of one checks it, its phases inside first's
		// late-effect window when they fit there (overlap.go).
		fr, err := r.firstCaught(ctx, &ds[i])
		if err != nil {
			drs[i].Phases = append(drs[i].Phases, r.errored(PhaseFirst, err))
			keep()
			return err
		}
		if _, err := r.deliveryRest(ctx, ds[i], fr, drs[i]); err != nil {
			keep()
			return err
		}
		if why = r.leaderWhy(&ds[i], fr); why == "" {
			lead = i
			break
		}
		if fr.usable && anyChanged(fr.effect) {
			break // its effect shows the deliveries cannot be grouped
		}
		if i+1 < len(ds) {
			why = ""
		}
	}
	if lead < 0 && why != "" {
		checked := len(drs)
		for i, dr := range drs {
			if len(dr.Phases) == 0 {
				checked = i
				break
			}
		}
		r.note("%d deliveries were checked one at a time: no probe is scoped to a delivery, and delivery %d, checked alone, showed that they cannot be checked as a group: %s (docs/guide.md, \"Probes that are not scoped: a group\")", len(ds), ds[checked-1].ID, why)
		for i := checked; i < len(ds); i++ {
			dr, err := r.delivery(ctx, ds[i])
			if dr != nil {
				drs[i] = dr
			}
			if err != nil {
				keep()
				return err
			}
		}
		keep()
		return r.all(ctx)
	}
	if lead < 0 || lead == len(ds)-1 {
		keep() // every delivery was checked alone
		return r.all(ctx)
	}
	frs := make([]*firstResult, len(ds)) // nil up to lead: checked alone
	tally := &groupTally{}
	piped, in, err := r.groupPipeline(ctx, lead+1, frs, tally)
	if err == nil && !piped {
		var i int
		i, err = r.groupFirst(ctx, lead+1, frs, tally)
		in = []int{i}
	}
	if err != nil {
		for _, i := range in {
			drs[i].Phases = append(drs[i].Phases, r.errored(PhaseFirst, err))
		}
		keep()
		return err
	}
	for _, p := range phases {
		if p.delivery == nil || !(p.always || r.enabled(p.name)) {
			continue
		}
		grouped, started, err := r.groupPhase(ctx, p, frs, tally)
		if err != nil {
			for i := range started {
				drs[i].Phases = append(drs[i].Phases, r.errored(p.name, err))
			}
			keep()
			return err
		}
		for i := range ds {
			if frs[i] == nil {
				continue
			}
			res, err := r.deliveryPhaseOr(ctx, p, &ds[i], frs[i], grouped[i], started[i])
			if err != nil {
				drs[i].Phases = append(drs[i].Phases, r.errored(p.name, err))
				keep()
				return err
			}
			if res != nil {
				drs[i].Phases = append(drs[i].Phases, *res)
			}
		}
	}
	for i, dr := range drs {
		if frs[i] != nil {
			dr.Effect = frs[i].effect
			forgetfulHints(dr)
		}
	}
	keep()
	r.groupNote(lead, frs, tally)
	return r.all(ctx)
}

// leaderWhy says why the deliveries cannot be grouped after the first one,
// d, was checked alone with first phase fr; "" when they can.
func (r *runner) leaderWhy(d *Delivery, fr *firstResult) string {
	if why := r.memberWhy(fr); why != "" {
		return why
	}
	ad := r.additive[d.ID]
	switch {
	case len(r.controlPhases) == 0:
		return "no phase sends a control event (burst, lost), so nothing showed that one event's effect does not depend on state"
	case ad == nil || !ad.known:
		return "its control event was not sent, so nothing showed that one event's effect does not depend on state"
	case !ad.yes:
		return "its control event (a second fresh event) did not change the probes exactly as its first copy did: the effect depends on state, which the order of a group's copies would change"
	}
	return ""
}

// groupFirst sends the first copy of every delivery after the first, one
// after another, each read until settled; a delivery whose whole effect was
// in place as it was answered leaves its late-effect window to the group,
// which watches once after the last. A probe that moves between two
// deliveries or in that window, or a delivery whose effect came late after
// deferred ones, sends every deferred first copy again alone. It returns
// the index of the delivery an error came with.
func (r *runner) groupFirst(ctx context.Context, from int, frs []*firstResult, tally *groupTally) (int, error) {
	ds := r.o.Deliveries
	var prev *reading // the settled reading after the last first copy sent
	var deferred []int
	alone := false
	// again sends the deferred deliveries' first copies again alone, then
	// delivery i's (sent already when sent), and every later one alone.
	again := func(i int, sent bool) (int, error) {
		tally.firstRun += len(deferred)
		if sent {
			tally.firstRun++
		}
		for _, j := range append(deferred, i) {
			if j < 0 {
				continue
			}
			fr, err := r.first(ctx, &ds[j])
			if err != nil {
				return j, err
			}
			frs[j] = fr
		}
		deferred, alone = nil, true
		return 0, nil
	}
	for i := from; i < len(ds); i++ {
		if alone {
			fr, err := r.first(ctx, &ds[i])
			if err != nil {
				return i, err
			}
			frs[i] = fr
			continue
		}
		fr, err := r.firstSend(ctx, &ds[i], true, prev)
		switch {
		case errors.Is(err, errMovedBetween):
			if j, err := again(i, false); err != nil {
				return j, err
			}
			continue
		case err != nil:
			return i, err
		case !fr.deferred && len(deferred) > 0:
			// Its late effects may be a deferred delivery's.
			if j, err := again(i, true); err != nil {
				return j, err
			}
			continue
		case !fr.deferred:
			if err := r.firstFinish(ctx, &ds[i], fr); err != nil {
				return i, err
			}
		default:
			deferred = append(deferred, i)
		}
		frs[i] = fr
		prev = &fr.after
	}
	if len(deferred) == 0 {
		return 0, nil
	}
	moved, err := r.groupWindow(ctx, *prev, frs[deferred[len(deferred)-1]].sentAt)
	if err != nil {
		return deferred[0], err
	}
	if moved {
		return again(-1, false)
	}
	for _, i := range deferred {
		if err := r.firstFinish(ctx, &ds[i], frs[i]); err != nil {
			return i, err
		}
	}
	tally.add(PhaseFirst, len(deferred))
	return 0, nil
}

// groupWindow watches the probes after rd, the settled reading after the
// last deferred first copy (sent at sent), for calibrate's late-effect
// window, and reports whether any moved. The window is stored as a reading
// of no delivery: it is the group's.
func (r *runner) groupWindow(ctx context.Context, rd reading, sent time.Time) (bool, error) {
	window := max(4*r.o.Settle, time.Second)
	from := rd.at
	if !rd.lastChange.IsZero() {
		from = rd.lastChange
	}
	deadline := from.Add(window)
	if limit := sent.Add(r.o.SettleMax); deadline.After(limit) {
		deadline = limit
	}
	return r.groupWatch(ctx, rd, deadline)
}

// groupWatch watches the probes after rd until deadline and reports
// whether any moved; what it saw is stored as the group's late-effect
// window.
func (r *runner) groupWatch(ctx context.Context, rd reading, deadline time.Time) (bool, error) {
	r.clk.settleBegin()
	defer r.clk.settleEnd()
	start := time.Now()
	vals := rd.vals
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(r.pollInterval()):
		}
		var err error
		if vals, err = probe.ReadAll(ctx, r.o.Probes); err != nil {
			return false, &SetupError{Err: err}
		}
		if !probe.SameValues(vals, rd.vals) {
			break
		}
	}
	w := reading{vals: vals, at: time.Now(), from: start}
	r.markSinks(&w)
	if err := r.storeReading(ctx, nil, PhaseFirst, "group: late-effect window", w); err != nil {
		return false, err
	}
	return !probe.SameValues(vals, rd.vals), nil
}

// groupPhase runs p for the deliveries that can be in a group, when p is
// one a group runs and two or more can; started holds those told to the
// Observer as started.
func (r *runner) groupPhase(ctx context.Context, p phase, frs []*firstResult, tally *groupTally) (map[int]*report.PhaseResult, map[int]bool, error) {
	run := groupedPhases[p.name]
	if run == nil {
		return nil, nil, nil
	}
	if res, _ := r.unmet(p); res != nil {
		return nil, nil, nil
	}
	var members []int
	for i, fr := range frs {
		if fr != nil && r.memberWhy(fr) == "" {
			members = append(members, i)
		}
	}
	if len(members) < 2 && tally.pre[p.name] == nil {
		return nil, nil, nil
	}
	started := map[int]bool{}
	for _, i := range members {
		if tally.pre[p.name] == nil {
			r.phaseStarted(&r.o.Deliveries[i], p.name)
		}
		started[i] = true
	}
	out := map[int]*report.PhaseResult{}
	pre := tally.pre[p.name] // sent with the first copies (grouptest_pipe.go)
	for todo := members; len(todo) >= 2 || pre != nil; {
		var got map[int]*report.PhaseResult
		var again []int
		var err error
		if pre != nil {
			got, again, err = pre(members)
			pre = nil
		} else {
			got, again, err = run(r, ctx, p, todo, frs)
		}
		if err != nil {
			return nil, started, err
		}
		for i, res := range got {
			out[i] = res
		}
		if len(again) >= len(todo) {
			break
		}
		todo = again
	}
	n := 0
	for i, res := range out {
		if res.Status == report.Pass && !r.ranAlone[r.o.Deliveries[i].ID] {
			n++
		}
	}
	clear(r.ranAlone)
	tally.add(p.name, n)
	return out, started, nil
}

// groupNote says which phases ran as a group, for how many deliveries,
// and which deliveries could not be in it and why.
func (r *runner) groupNote(lead int, frs []*firstResult, tally *groupTally) {
	n := len(r.o.Deliveries)
	first := fmt.Sprintf("delivery %d was checked alone first", r.o.Deliveries[0].ID)
	if lead > 0 {
		first = fmt.Sprintf("the first %d were checked alone, one at a time (the first copies before delivery %d's changed nothing)", lead+1, r.o.Deliveries[lead].ID)
	}
	var parts []string
	for _, ph := range tally.phases {
		parts = append(parts, fmt.Sprintf("%s %d", ph, tally.grouped[ph]))
	}
	text := fmt.Sprintf("%d deliveries: %s (delivery %d's control event showed that one event's effect adds up), then the other %d as a group, "+
		"one after another with one wait for quiet per phase: no probe is scoped to a delivery, so a read of the probes between two deliveries' copies tells their effects apart (docs/guide.md, \"Probes that are not scoped: a group\")",
		n, first, r.o.Deliveries[lead].ID, n-lead-1)
	if len(parts) > 0 {
		text += "; deliveries judged in the group, by phase: " + strings.Join(parts, ", ") + "; the others ran that phase alone (a change where none was due, or an answer other than 2xx, is judged alone)"
	} else {
		text += "; none passed a phase in the group, so every phase ran alone"
	}
	switch {
	case tally.piped:
		text += "; their first copies, duplicates and forged copies were sent back to back, then their control events in the reverse order, with one wait for quiet after the last, and each control event changed the probes exactly as its delivery's first copy did, which tells every delivery's effect apart (a late effect would have shown in another delivery's window)"
	case tally.pipeRedone:
		text += "; their copies sent back to back did not tell every delivery's effect apart (an answer other than 2xx, a copy that changed nothing as it was answered, a control event that did not change the probes as its first copy did, or a change after the last), so the first copies were sent again, each read until settled (stored as \"redone: first\")"
	}
	if tally.firstRun > 0 {
		text += fmt.Sprintf("; %d first copies were sent again alone: a probe moved between deliveries or in the group's late-effect window", tally.firstRun)
	}
	var out []string
	for i, fr := range frs {
		if fr == nil {
			continue
		}
		if why := r.memberWhy(fr); why != "" {
			out = append(out, fmt.Sprintf("delivery %d (%s)", r.o.Deliveries[i].ID, why))
		}
	}
	if len(out) > 0 {
		text += "; not in the group: " + strings.Join(out, "; ")
	}
	r.c.Notes = append(r.c.Notes, text)
	r.obs.Note(Note{Kind: NoteAdded, Text: text})
}
