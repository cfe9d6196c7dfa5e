package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// order sends the deliveries in their captured order, reversed, and in up to
// 5 seeded shuffles, resetting the state before each; the final probe values
// must be the same every time.
func (r *runner) order(ctx context.Context) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseOrder, Statuses: map[string]int{}}
	orderings := r.orderings()
	r.note("order: %d orderings (captured, reversed, %d seeded shuffles); seed %d, repeat with %s %d", len(orderings), len(orderings)-2, r.o.Seed, r.name(InputSeed), r.o.Seed)
	runs := make([]orderRun, len(orderings))
	for oi, ord := range orderings {
		var err error
		if runs[oi], err = r.sendOrdering(ctx, ph, oi, ord); err != nil {
			return nil, err
		}
		r.step(Step{Phase: PhaseOrder, N: oi + 1, What: runs[oi].name, Values: valueTexts(runs[oi].final)})
	}
	unjudged := r.judgeOrderings(ph, runs)
	ph.Duration = time.Since(start)
	answers := &answerTally{what: "deliveries sent"}
	for _, run := range runs {
		answers.add(run.sent...)
	}
	defer answers.conclude(ph, fmt.Sprintf("%d orderings of deliveries %s", len(orderings), runs[0].name))
	if len(ph.Violations) > 0 {
		ph.Status = report.Fail
		ph.Message = fmt.Sprintf("the final state depends on delivery order: %s", ph.Violations[0].Message)
		return ph, nil
	}
	if unjudged == len(orderings)-1 {
		ph.Status = report.NotJudged
		ph.Message = "not judged: " + firstOr(ph.Warnings, "")
		return ph, nil
	}
	ph.Status = report.Pass
	ph.Message = fmt.Sprintf("%d orderings of deliveries %s left the same final state (seed %d)", len(orderings)-unjudged, runs[0].name, r.o.Seed)
	return ph, nil
}

// orderings are the orders the deliveries are sent in (indexes into
// Deliveries): captured, reversed, and up to 5 distinct seeded shuffles.
func (r *runner) orderings() [][]int {
	n := len(r.o.Deliveries)
	captured := make([]int, n)
	for i := range captured {
		captured[i] = i
	}
	orderings := [][]int{captured, reversed(captured)}
	seen := map[string]bool{key(captured): true, key(orderings[1]): true}
	for tries := 0; len(orderings) < 7 && tries < 100; tries++ {
		p := r.rng.Perm(n)
		if !seen[key(p)] {
			seen[key(p)] = true
			orderings = append(orderings, p)
		}
	}
	return orderings
}

// orderRun is one ordering sent: its name (the delivery ids in order) and
// the probe values after the reset before it and after its last delivery.
type orderRun struct {
	name         string
	start, final []probe.Value
	// sent are the deliveries' attempts, in order.
	sent []store.Attempt
}

// sendOrdering resets the state and sends the deliveries in ordering ord
// (number oi), counting the attempts in ph.
func (r *runner) sendOrdering(ctx context.Context, ph *report.PhaseResult, oi int, ord []int) (orderRun, error) {
	var run orderRun
	if err := r.reset(ctx); err != nil {
		return run, err
	}
	var ids []string
	for _, idx := range ord {
		ids = append(ids, fmt.Sprint(r.o.Deliveries[idx].ID))
	}
	run.name = strings.Join(ids, ",")
	st, err := r.read(ctx, nil, PhaseOrder, "after reset, before "+run.name)
	if err != nil {
		return run, err
	}
	run.start = st.vals
	n := len(r.o.Deliveries)
	for k, idx := range ord {
		d := &r.o.Deliveries[idx]
		a := r.send(ctx, r.sameIdentity(d, d.Req, d.EventID), replay.SendOptions{})
		if err := r.record(ctx, &a, d, PhaseOrder, oi*n+k+1, d.EventID); err != nil {
			return run, err
		}
		countStatuses(ph.Statuses, a)
		ph.Attempts++
		run.sent = append(run.sent, a)
		if (a.Err != "" || !is2xx(a.Status)) && !isServerError(a) {
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("in order %s delivery %d was answered %s (want 2xx: the provider would retry it)", run.name, d.ID, statusText(a)))
		}
		if _, err := r.read(ctx, d, PhaseOrder, fmt.Sprintf("order %s after %d", run.name, d.ID)); err != nil {
			return run, err
		}
	}
	fin, err := r.read(ctx, nil, PhaseOrder, "final "+run.name)
	if err != nil {
		return run, err
	}
	run.final = fin.vals
	return run, nil
}

// judgeOrderings compares every ordering's final state with the captured
// order's, adding violations and warnings to ph; it returns how many
// orderings could not be judged.
func (r *runner) judgeOrderings(ph *report.PhaseResult, runs []orderRun) (unjudged int) {
	reset := r.name(InputReset)
	base := runs[0]
	for _, o := range runs[1:] {
		// Judge an ordering only from the same starting state, and only when
		// its deliveries did something: a reset that leaves the handler's
		// record of processed events behind turns every later ordering into
		// duplicates, which says nothing about order.
		if !probe.SameValues(o.start, base.start) {
			unjudged++
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("order %s not judged: %s did not restore the same state (before it: %s; before the captured order: %s)",
				o.name, reset, strings.Join(valueTexts(o.start), "; "), strings.Join(valueTexts(base.start), "; ")))
			continue
		}
		if probe.SameValues(o.final, o.start) && !probe.SameValues(base.final, base.start) {
			unjudged++
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("order %s not judged: its deliveries changed nothing (were they taken for duplicates? %s should also clear the handler's record of processed events)", o.name, reset))
			continue
		}
		for k, name := range r.c.Probes {
			if !o.final[k].Equal(base.final[k]) {
				ph.Violations = append(ph.Violations, report.Violation{Probe: name, Before: base.final[k].String(), After: o.final[k].String(), Want: base.final[k].String(),
					Message: fmt.Sprintf("in order %s %s ended at %s; in the captured order %s it ended at %s%s", o.name, name, o.final[k], base.name, base.final[k], fieldsHint(base.final[k], o.final[k]))})
			}
		}
	}
	return unjudged
}

func valueTexts(vs []probe.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

func reversed(a []int) []int {
	out := make([]int, len(a))
	for i, x := range a {
		out[len(a)-1-i] = x
	}
	return out
}

func key(a []int) string { return fmt.Sprint(a) }
