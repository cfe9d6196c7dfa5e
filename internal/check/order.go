package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// order sends the deliveries in their captured order, reversed, and in up to
// 5 seeded shuffles, resetting the state before each; the final probe values
// must be the same every time.
func (r *runner) order(ctx context.Context) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseOrder, Statuses: map[string]int{}}
	n := len(r.o.Deliveries)
	explicit := len(r.o.Phases) > 0
	switch {
	case n < 2 && !explicit:
		return nil, nil
	case n < 2:
		ph.Status, ph.Message = report.Skip, "not run: needs two or more deliveries"
		return ph, nil
	case r.o.ResetCmd == "":
		ph.Status, ph.Message = report.Skip, "not run: needs --reset-cmd to restore the handler's state before each ordering"
		return ph, nil
	}
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
	r.note("order: %d orderings (captured, reversed, %d seeded shuffles); seed %d, repeat with --seed %d", len(orderings), len(orderings)-2, r.o.Seed, r.o.Seed)
	var finals, starts [][]string
	var names []string
	for oi, ord := range orderings {
		if err := r.reset(ctx); err != nil {
			return nil, err
		}
		var ids []string
		for _, idx := range ord {
			ids = append(ids, fmt.Sprint(r.o.Deliveries[idx].ID))
		}
		name := strings.Join(ids, ",")
		names = append(names, name)
		st, err := r.read(ctx, nil, PhaseOrder, "after reset, before "+name)
		if err != nil {
			return nil, err
		}
		starts = append(starts, valueTexts(st.vals))
		for k, idx := range ord {
			d := &r.o.Deliveries[idx]
			a := r.send(ctx, r.sameIdentity(d, d.Req), replay.SendOptions{})
			if err := r.record(ctx, &a, d, PhaseOrder, oi*n+k+1, d.EventID); err != nil {
				return nil, err
			}
			countStatuses(ph.Statuses, a)
			ph.Attempts++
			if a.Err != "" || !is2xx(a.Status) {
				ph.Warnings = append(ph.Warnings, fmt.Sprintf("in order %s delivery %d was answered %s (want 2xx: the provider would retry it)", name, d.ID, statusText(a)))
			}
			if _, err := r.read(ctx, d, PhaseOrder, fmt.Sprintf("order %s after %d", name, d.ID)); err != nil {
				return nil, err
			}
		}
		fin, err := r.read(ctx, nil, PhaseOrder, "final "+name)
		if err != nil {
			return nil, err
		}
		vs := valueTexts(fin.vals)
		finals = append(finals, vs)
		r.progress("order    %s → %s", name, strings.Join(vs, "; "))
	}
	unjudged := 0
	for oi := 1; oi < len(finals); oi++ {
		// Judge an ordering only from the same starting state, and only when
		// its deliveries did something: a reset that leaves the handler's
		// record of processed events behind turns every later ordering into
		// duplicates, which says nothing about order.
		if !slices.Equal(starts[oi], starts[0]) {
			unjudged++
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("order %s not judged: --reset-cmd did not restore the same state (before it: %s; before the captured order: %s)",
				names[oi], strings.Join(starts[oi], "; "), strings.Join(starts[0], "; ")))
			continue
		}
		if slices.Equal(finals[oi], starts[oi]) && !slices.Equal(finals[0], starts[0]) {
			unjudged++
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("order %s not judged: its deliveries changed nothing (were they taken for duplicates? --reset-cmd should also clear the handler's record of processed events)", names[oi]))
			continue
		}
		for k, name := range r.c.Probes {
			if finals[oi][k] != finals[0][k] {
				ph.Violations = append(ph.Violations, report.Violation{Probe: name, Before: finals[0][k], After: finals[oi][k], Want: finals[0][k],
					Message: fmt.Sprintf("in order %s %s ended at %s; in the captured order %s it ended at %s", names[oi], name, finals[oi][k], names[0], finals[0][k])})
			}
		}
	}
	ph.Duration = time.Since(start)
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
	ph.Message = fmt.Sprintf("%d orderings of deliveries %s left the same final state (seed %d)", len(orderings)-unjudged, names[0], r.o.Seed)
	return ph, nil
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
