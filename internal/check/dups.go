package check

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// dups sends N-1 more copies of the first delivery's event, one by one:
// none may change anything, and each must be answered 2xx.
func (r *runner) dups(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseDups, Statuses: map[string]int{}}
	if r.o.N < 2 {
		ph.Status = report.Skip
		ph.Message = r.name(InputCopies) + " 1 sends no duplicate"
		return ph, nil
	}
	// The duplicates are judged from the quiet reading before them: the
	// first copy's effect, and anything that landed after it was read.
	base, err := r.readQuiet(ctx, d, PhaseDups, "before")
	if err != nil {
		return nil, err
	}
	frd := *fr
	frd.after = base
	fr = &frd
	prev := fr.after
	t := &dupsTally{reported: map[string]bool{}, answers: answerTally{what: "duplicates", followUp: true}}
	for i := 2; i <= r.o.N; i++ {
		req := r.sameIdentity(d, fr.req, fr.eventID)
		a := r.send(ctx, req, replay.SendOptions{})
		if err := r.record(ctx, &a, d, PhaseDups, i, fr.eventID); err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, a)
		ph.Attempts++
		cur, err := r.afterDup(ctx, d, fr, i)
		if err != nil {
			return nil, err
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseDups, prev, cur)...)
		changed := r.judgeDup(ph, fr, t, i, a, prev, cur)
		prev = cur
		r.step(Step{Phase: PhaseDups, DeliveryID: d.ID, N: i, Attempts: []store.Attempt{a}, Changed: changed})
	}
	last, err := r.read(ctx, d, PhaseDups, "after the last copy")
	if err != nil {
		return nil, err
	}
	ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseDups, prev, last)...)
	r.judgeLateDups(ph, fr, t, prev, last)
	prev = last
	if t.answers.retries > 0 {
		// Duplicates asked to come back later: the provider does, once, and
		// that copy must be answered 2xx and change nothing.
		n := r.o.N + 1
		a, after, err := r.retryLater(ctx, d, PhaseDups, fr.req, fr.eventID, n, last)
		if err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, a)
		ph.Attempts++
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseDups, last, after)...)
		judgeRetryLater(ph, a, fr.eventID)
		r.judgeDupRetry(ph, fr, t, n, last, after)
		prev = after
	}
	ph.Duration = time.Since(start)
	r.dupsVerdict(ph, fr, t, prev)
	t.answers.conclude(ph, fmt.Sprintf("%d duplicates (same event id)", r.o.N-1))
	return ph, nil
}

// judgeDupRetry judges the provider's retry (copy n) after duplicates were
// asked to retry later: read from prev to cur, it must change nothing.
func (r *runner) judgeDupRetry(ph *report.PhaseResult, fr *firstResult, t *dupsTally, n int, prev, cur reading) {
	for k, name := range r.c.Probes {
		if cur.vals[k].Equal(prev.vals[k]) || t.reported[name] {
			continue
		}
		t.reported[name] = true
		ph.Violations = append(ph.Violations, report.Violation{Copy: n, EventID: fr.eventID, Probe: name,
			Before: prev.vals[k].String(), After: cur.vals[k].String(), Want: prev.vals[k].String(),
			Message: fmt.Sprintf("the provider's retry after a retry-later answer (copy %d, same event id %s) changed %s from %s to %s (want %s)",
				n, fr.eventID, name, prev.vals[k], cur.vals[k], prev.vals[k])})
		t.changed = append(t.changed, fmt.Sprint(n))
	}
}

// afterDup reads the probes after duplicate i. For a handler whose work is
// done when it answers, a peek: what it did is visible now and names the
// copy. For one whose first copy's effect landed after its answer, a
// settled reading (per-copy settling): a duplicate's late work is then
// charged to the copy that caused it, before the next copy is sent, so
// every copy that did the work again is counted (with peeks, a copy's late
// effect showed in the next copy's reading and several copies in one).
//
// A handler whose late work takes longer than maxPerCopySettle is peeked at
// instead (nine duplicates would each wait that long); the copies that did
// the work after answering are then counted from the amount (dupsVerdict).
func (r *runner) afterDup(ctx context.Context, d *Delivery, fr *firstResult, i int) (reading, error) {
	if fr.late && r.effSettle <= maxPerCopySettle {
		return r.read(ctx, d, PhaseDups, fmt.Sprintf("after copy %d (settled)", i))
	}
	return r.peek(ctx, d, PhaseDups, fmt.Sprintf("after copy %d", i))
}

// maxPerCopySettle is the longest quiet period dups waits for after each
// copy (per-copy settling). A variable for the tests.
var maxPerCopySettle = time.Second

// timesDone is how many times the duplicates did the event's work in all,
// from the amounts: a numeric probe that moved from its value after the
// first copy (fr.after) to last by a whole multiple of the first copy's
// change. 0 when no probe says.
func (r *runner) timesDone(fr *firstResult, last reading) int {
	most := 0
	for k := range r.c.Probes {
		e := fr.effect[k]
		if e.Delta == nil || *e.Delta == 0 {
			continue
		}
		d, ok := probe.Delta(fr.after.vals[k], last.vals[k])
		if !ok || d == 0 {
			continue
		}
		times := d / *e.Delta
		if rt := math.Round(times); rt >= 1 && math.Abs(times-rt) <= 1e-6*rt && int(rt) > most {
			most = int(rt)
		}
	}
	return most
}

// dupsTally is what the duplicates did so far.
type dupsTally struct {
	// changed lists the copies that moved a probe.
	changed []string
	// badStatus counts copies not answered 2xx, other than the 5xx and
	// retry-later answers answers counts.
	badStatus int
	answers   answerTally
	// reported holds the probes a violation was shown for: the first copy
	// that changed a probe is the one to show; the message counts the rest.
	reported map[string]bool
}

// judgeDup judges copy i (answered a, read cur after prev) and reports
// whether it moved a probe.
func (r *runner) judgeDup(ph *report.PhaseResult, fr *firstResult, t *dupsTally, i int, a store.Attempt, prev, cur reading) bool {
	// A copy "did the work again" when it moved a probe since the reading
	// before it; the violation is against the value after first.
	changed := false
	for k, name := range r.c.Probes {
		if !cur.vals[k].Equal(prev.vals[k]) {
			changed = true
		}
		if cur.vals[k].Equal(fr.after.vals[k]) || t.reported[name] {
			continue
		}
		t.reported[name] = true
		hint := ""
		if columnHint(fr.after.vals[k], cur.vals[k]) != "" {
			hint = "probe the business columns, not a timestamp the handler stamps on every call; if those changed too, " + report.Hint(PhaseDups)
		}
		ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID, Probe: name, Hint: hint,
			Before: prev.vals[k].String(), After: cur.vals[k].String(), Want: fr.after.vals[k].String(),
			Message: fmt.Sprintf("copy %d (same event id %s) changed %s from %s to %s (want %s, its value after the first copy)%s",
				i, fr.eventID, name, prev.vals[k], cur.vals[k], fr.after.vals[k], columnHint(fr.after.vals[k], cur.vals[k])+fieldsHint(fr.after.vals[k], cur.vals[k]))})
	}
	if changed {
		t.changed = append(t.changed, fmt.Sprint(i))
	}
	t.answers.add(a)
	switch {
	case isServerError(a) || retryAsked(a):
	case t.badStatus > 0 && (a.Err != "" || !is2xx(a.Status)):
		t.badStatus++ // shown once; the message counts them
	case a.Err != "":
		t.badStatus++
		ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID,
			Message: fmt.Sprintf("copy %d got no answer: %s", i, a.Err)})
	case !is2xx(a.Status):
		t.badStatus++
		ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID, Status: a.Status,
			Message: fmt.Sprintf("copy %d was answered %d: a duplicate answered %d makes the provider retry again", i, a.Status, a.Status)})
	}
	return changed
}

// judgeLateDups judges what changed after the last copy's peek (prev) until
// the settled reading (last): work the handler did after answering, which
// no single copy can be named for.
func (r *runner) judgeLateDups(ph *report.PhaseResult, fr *firstResult, t *dupsTally, prev, last reading) {
	late := false
	for k, name := range r.c.Probes {
		if last.vals[k].Equal(prev.vals[k]) {
			continue
		}
		late = true
		if last.vals[k].Equal(fr.after.vals[k]) || t.reported[name] {
			continue
		}
		t.reported[name] = true
		ph.Violations = append(ph.Violations, report.Violation{EventID: fr.eventID, Probe: name,
			Before: prev.vals[k].String(), After: last.vals[k].String(), Want: fr.after.vals[k].String(),
			Message: fmt.Sprintf("after the duplicates (same event id %s) were answered, %s changed from %s to %s (want %s, its value after the first copy): work done after answering, by copies that cannot be told apart%s",
				fr.eventID, name, prev.vals[k], last.vals[k], fr.after.vals[k], columnHint(fr.after.vals[k], last.vals[k])+fieldsHint(fr.after.vals[k], last.vals[k]))})
	}
	if late {
		t.changed = append(t.changed, "after answering")
	}
}

// dupsVerdict sets the phase's status and message from the tally; last is
// the reading after the last copy.
func (r *runner) dupsVerdict(ph *report.PhaseResult, fr *firstResult, t *dupsTally, last reading) {
	n := r.o.N - 1
	if len(t.changed) == 0 && t.badStatus == 0 && len(ph.Violations) == 0 {
		if t.answers.retries > 0 {
			ph.Status = report.Pass
			ph.Message = fmt.Sprintf("%d duplicates (same event id) changed nothing; %d were asked to retry later and the provider's retry was answered 2xx", n, t.answers.retries)
			return
		}
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("%d duplicates (same event id) changed nothing and were answered 2xx", n)
		return
	}
	ph.Status = report.Fail
	var parts []string
	if len(t.changed) > 0 {
		copies := t.changed
		if copies[len(copies)-1] == "after answering" {
			copies = copies[:len(copies)-1]
		}
		times := r.timesDone(fr, last)
		switch {
		case times > len(copies) && len(copies) < len(t.changed):
			// Work done after answering shows in later readings, several
			// copies' at once: the amount says how many did it.
			what := "copies seen at once: none"
			if len(copies) > 0 {
				what = "seen at once: copies " + strings.Join(copies, ", ")
			}
			parts = append(parts, fmt.Sprintf("%d of %d duplicates did the work again, after they were answered (%s; the rest from the amount, %d × one event's effect)", min(times, n), n, what, times))
		case len(copies) == 0:
			parts = append(parts, fmt.Sprintf("the %d duplicates did the work again after they were answered", n))
		case len(copies) < len(t.changed):
			parts = append(parts, fmt.Sprintf("%d of %d duplicates did the work again (copies %s, and more after they were answered)", len(copies), n, strings.Join(copies, ", ")))
		default:
			parts = append(parts, fmt.Sprintf("%d of %d duplicates did the work again (copies %s)", len(copies), n, strings.Join(copies, ", ")))
		}
		for k, name := range r.c.Probes {
			if !last.vals[k].Equal(fr.after.vals[k]) {
				parts = append(parts, fmt.Sprintf("%s ended at %s (want %s)%s", name, last.vals[k], fr.after.vals[k], columnHint(fr.after.vals[k], last.vals[k])+fieldsHint(fr.after.vals[k], last.vals[k])))
			}
		}
	}
	if t.badStatus > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d duplicates were not answered 2xx", t.badStatus, n))
	}
	if len(parts) == 0 && len(ph.Violations) > 0 {
		parts = append(parts, ph.Violations[0].Message)
	}
	ph.Message = strings.Join(parts, "; ")
}
