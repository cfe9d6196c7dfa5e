package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

func (r *runner) dups(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseDups, Statuses: map[string]int{}}
	if r.o.N < 2 {
		ph.Status = report.Skip
		ph.Message = "-n 1 sends no duplicate"
		return ph, nil
	}
	prev := fr.after
	changedCopies, badStatus := 0, 0
	reported := map[string]bool{}
	var changedList []string
	for i := 2; i <= r.o.N; i++ {
		req := r.sameIdentity(d, fr.req)
		a := r.send(ctx, req, replay.SendOptions{})
		if err := r.record(ctx, &a, d, PhaseDups, i, fr.eventID); err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, a)
		ph.Attempts++
		cur, err := r.read(ctx, d, PhaseDups, fmt.Sprintf("after copy %d", i))
		if err != nil {
			return nil, err
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseDups, prev, cur)...)
		// A copy "did the work again" when it moved a probe since the
		// reading before it; the violation is against the value after first.
		changed := false
		for k, name := range r.c.Probes {
			if !cur.vals[k].Equal(prev.vals[k]) {
				changed = true
			}
			if cur.vals[k].Equal(fr.after.vals[k]) {
				continue
			}
			if reported[name] {
				continue // the first copy that changed a probe is the one to show; the message counts the rest
			}
			reported[name] = true
			hint := ""
			if columnHint(fr.after.vals[k], cur.vals[k]) != "" {
				hint = "probe the business columns, not a timestamp the handler stamps on every call; if those changed too, " + report.Hint(PhaseDups)
			}
			ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID, Probe: name, Hint: hint,
				Before: prev.vals[k].String(), After: cur.vals[k].String(), Want: fr.after.vals[k].String(),
				Message: fmt.Sprintf("copy %d (same event id %s) changed %s from %s to %s (want %s, its value after the first copy)%s",
					i, fr.eventID, name, prev.vals[k], cur.vals[k], fr.after.vals[k], columnHint(fr.after.vals[k], cur.vals[k]))})
		}
		if changed {
			changedCopies++
			changedList = append(changedList, fmt.Sprint(i))
		}
		switch {
		case badStatus > 0 && (a.Err != "" || !is2xx(a.Status)):
			badStatus++ // shown once; the message counts them
		case a.Err != "":
			badStatus++
			ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID,
				Message: fmt.Sprintf("copy %d got no answer: %s", i, a.Err)})
		case !is2xx(a.Status):
			badStatus++
			ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID, Status: a.Status,
				Message: fmt.Sprintf("copy %d was answered %d: a duplicate answered %d makes the provider retry again", i, a.Status, a.Status)})
		}
		prev = cur
		r.progress("dups     delivery %d copy %d: %s%s", d.ID, i, statusText(a), map[bool]string{true: ", probes changed", false: ""}[changed])
	}
	ph.Duration = time.Since(start)
	n := r.o.N - 1
	if changedCopies == 0 && badStatus == 0 && len(ph.Violations) == 0 {
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("%d duplicates (same event id) changed nothing and were answered 2xx", n)
		return ph, nil
	}
	ph.Status = report.Fail
	var parts []string
	if changedCopies > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d duplicates did the work again (copies %s)", changedCopies, n, strings.Join(changedList, ", ")))
		for k, name := range r.c.Probes {
			if !prev.vals[k].Equal(fr.after.vals[k]) {
				parts = append(parts, fmt.Sprintf("%s ended at %s (want %s)%s", name, prev.vals[k], fr.after.vals[k], columnHint(fr.after.vals[k], prev.vals[k])))
			}
		}
	}
	if badStatus > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d duplicates were not answered 2xx", badStatus, n))
	}
	ph.Message = strings.Join(parts, "; ")
	return ph, nil
}
