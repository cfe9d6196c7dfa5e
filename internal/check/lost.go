package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// lost sends a fresh event whose answer the sender never sees, then the
// provider's retry of it, twice: once with the answer lost on its way back
// (the handler finished), once with the sender giving up before the answer
// (a provider timeout: a Go handler sees its request context cancelled).
// Each time the combined effect must be E once.
func (r *runner) lost(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseLost, Statuses: map[string]int{}}
	if !fr.fresh {
		ph.Status, ph.Message = report.Skip, "not run: "+freshReason(d, r.o.Secret)
		return ph, nil
	}
	trials := []struct {
		what string
		opt  replay.SendOptions
	}{
		{"answer lost on its way back", replay.SendOptions{Lose: true}},
		{"sender gave up before the answer", replay.SendOptions{Lose: true, LoseEarly: true}},
	}
	var passed, notJudged []string
	for ti, tr := range trials {
		exact, err := r.exactJudgement(ctx, d, fr)
		if err != nil {
			return nil, err
		}
		req, id, ok, why := r.freshIdentity(d)
		if !ok {
			ph.Status, ph.Message = report.Skip, "not run: "+why
			return ph, nil
		}
		before, err := r.read(ctx, d, PhaseLost, fmt.Sprintf("trial %d before", ti+1))
		if err != nil {
			return nil, err
		}
		a1 := r.send(ctx, req, tr.opt)
		a1.Edit = tr.what
		if err := r.record(ctx, &a1, d, PhaseLost, 2*ti+1, id); err != nil {
			return nil, err
		}
		mid, err := r.readChanged(ctx, d, PhaseLost, fmt.Sprintf("trial %d after the lost copy", ti+1), before)
		if err != nil {
			return nil, err
		}
		a2 := r.send(ctx, asRetry(d, r.sameIdentity(d, req), 1), replay.SendOptions{})
		a2.Edit = "provider's retry"
		if err := r.record(ctx, &a2, d, PhaseLost, 2*ti+2, id); err != nil {
			return nil, err
		}
		after, err := r.read(ctx, d, PhaseLost, fmt.Sprintf("trial %d after the retry", ti+1))
		if err != nil {
			return nil, err
		}
		ph.Attempts += 2
		countStatuses(ph.Statuses, a1, a2)
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseLost, before, after)...)
		j := judgeOnce(r.c.Probes, fr.effect, before.vals, after.vals, exact, r.o.ResetCmd != "", fr.before.vals, fr.after.vals)
		label := fmt.Sprintf("fresh event %s, %s, then the provider's retry", id, tr.what)
		for _, v := range j.violations {
			v.EventID = id
			v.Copy = 2*ti + 2
			v.Message = label + ": " + v.Message
			if anyChangedVals(before.vals, mid.vals) && !sameValues(mid.vals, after.vals) {
				v.Message += " (the retry did the work again after the lost copy had done it)"
			}
			ph.Violations = append(ph.Violations, v)
		}
		for _, w := range j.warnings {
			ph.Warnings = append(ph.Warnings, label+": "+w)
		}
		switch {
		case a2.Err != "":
			ph.Violations = append(ph.Violations, report.Violation{Copy: 2*ti + 2, EventID: id, Message: label + ": the retry got no answer: " + a2.Err})
		case !is2xx(a2.Status):
			ph.Violations = append(ph.Violations, report.Violation{Copy: 2*ti + 2, EventID: id, Status: a2.Status,
				Message: fmt.Sprintf("%s: the retry was answered %d: a duplicate answered %d makes the provider retry again", label, a2.Status, a2.Status)})
		}
		r.progress("lost     delivery %d trial %d (%s): retry %s → %s", d.ID, ti+1, tr.what, statusText(a2), j.status)
		if len(ph.Violations) > 0 {
			break
		}
		switch j.status {
		case report.Pass:
			passed = append(passed, tr.what)
		default:
			notJudged = append(notJudged, tr.what)
		}
	}
	ph.Duration = time.Since(start)
	switch {
	case len(ph.Violations) > 0:
		ph.Status = report.Fail
		ph.Message = ph.Violations[0].Message
	case len(notJudged) == 0:
		ph.Status = report.Pass
		ph.Message = "a fresh event whose answer never reached the sender (" + strings.Join(passed, "; ") + "), then the provider's retry: effect equals the first delivery's each time"
		if len(ph.Warnings) > 0 {
			ph.Message += " (some probes not judged, see warnings)"
		}
	case len(passed) > 0:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("passed (%s); not judged (%s), see warnings", strings.Join(passed, "; "), strings.Join(notJudged, "; "))
	default:
		ph.Status = report.NotJudged
		ph.Message = "not judged: " + firstOr(ph.Warnings, "no probe moved")
	}
	return ph, nil
}
