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

// lost sends a fresh event whose answer the sender never sees, then the
// provider's retry of it, twice: once with the answer lost on its way back
// (the handler finished), once with the sender giving up before the answer
// (a provider timeout: a Go handler sees its request context cancelled).
// Each time the combined effect must be E once.
func (r *runner) lost(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseLost, Statuses: map[string]int{}}
	var passed, notJudged []string
	answers := &answerTally{what: "provider's retries", followUp: true}
	for ti, lt := range lostTrials {
		t, why, err := r.startTrial(ctx, d, fr, PhaseLost, fmt.Sprintf("trial %d before", ti+1))
		if err != nil {
			return nil, err
		}
		if t == nil {
			return skipped(ph, why), nil
		}
		a1, a2, mid, after, err := r.lostTrial(ctx, d, t, ti, lt)
		if err != nil {
			return nil, err
		}
		ph.Attempts += 2
		countStatuses(ph.Statuses, a1, a2)
		answers.add(a2)
		if retryAsked(a2) {
			// The retry was asked to come back later: the provider does.
			a3, later, err := r.retryLater(ctx, d, PhaseLost, t.req, t.id, 2*len(lostTrials)+ti+1, after)
			if err != nil {
				return nil, err
			}
			ph.Attempts++
			countStatuses(ph.Statuses, a3)
			judgeRetryLater(ph, a3, t.id)
			after = later
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseLost, t.before, after)...)
		j := r.judge(fr, t, after)
		judgeLost(ph, t, ti, lt.what, j, a2, mid, after)
		r.step(Step{Phase: PhaseLost, DeliveryID: d.ID, N: ti + 1, What: lt.what, Attempts: []store.Attempt{a1, a2}, Status: j.status})
		if len(ph.Violations) > 0 || answers.failed() {
			break
		}
		switch j.status {
		case report.Pass:
			passed = append(passed, lt.what)
		default:
			notJudged = append(notJudged, lt.what)
		}
	}
	ph.Duration = time.Since(start)
	lostVerdict(ph, passed, notJudged)
	answers.conclude(ph, "a fresh event whose answer never reached the sender, then the provider's retry")
	return ph, nil
}

// lostWay is one way a provider loses an answer: what it is, and how the
// copy is sent to lose it.
type lostWay struct {
	what string
	opt  replay.SendOptions
}

// lostTrials are the two ways a provider loses an answer.
var lostTrials = []lostWay{
	{"answer lost on its way back", replay.SendOptions{Lose: true}},
	{"sender gave up before the answer", replay.SendOptions{Lose: true, LoseEarly: true}},
}

// lostTrial sends trial ti's event with its answer lost (a1), reads the
// probes (mid), sends the provider's retry (a2) and reads them again (after).
func (r *runner) lostTrial(ctx context.Context, d *Delivery, t *trial, ti int, lt lostWay) (a1, a2 store.Attempt, mid, after reading, err error) {
	a1 = r.send(ctx, t.req, lt.opt)
	a1.Edit = lt.what
	if err = r.record(ctx, &a1, d, PhaseLost, 2*ti+1, t.id); err != nil {
		return
	}
	if mid, err = r.readChanged(ctx, d, PhaseLost, fmt.Sprintf("trial %d after the lost copy", ti+1), t.before); err != nil {
		return
	}
	a2 = r.send(ctx, asRetry(d, r.sameIdentity(d, t.req, t.id), 1), replay.SendOptions{})
	a2.Edit = "provider's retry"
	if err = r.record(ctx, &a2, d, PhaseLost, 2*ti+2, t.id); err != nil {
		return
	}
	after, err = r.read(ctx, d, PhaseLost, fmt.Sprintf("trial %d after the retry", ti+1))
	return
}

// judgeLost adds trial ti's violations and warnings to ph: j's, labelled,
// and the retry's answer (a2) when it was not 2xx.
func judgeLost(ph *report.PhaseResult, t *trial, ti int, what string, j judgement, a2 store.Attempt, mid, after reading) {
	label := fmt.Sprintf("fresh event %s, %s, then the provider's retry", t.id, what)
	for _, v := range j.violations {
		v.EventID = t.id
		v.Copy = 2*ti + 2
		v.Message = label + ": " + v.Message
		if anyChangedVals(t.before.vals, mid.vals) && !probe.SameValues(mid.vals, after.vals) {
			v.Message += " (the retry did the work again after the lost copy had done it)"
		}
		ph.Violations = append(ph.Violations, v)
	}
	for _, w := range j.warnings {
		ph.Warnings = append(ph.Warnings, label+": "+w)
	}
	switch {
	case a2.Err != "":
		ph.Violations = append(ph.Violations, report.Violation{Copy: 2*ti + 2, EventID: t.id, Message: label + ": the retry got no answer: " + a2.Err})
	case !is2xx(a2.Status) && !isServerError(a2) && !retryAsked(a2):
		ph.Violations = append(ph.Violations, report.Violation{Copy: 2*ti + 2, EventID: t.id, Status: a2.Status,
			Message: fmt.Sprintf("%s: the retry was answered %d: a duplicate answered %d makes the provider retry again", label, a2.Status, a2.Status)})
	}
}

// lostVerdict sets the phase's status and message from its trials.
func lostVerdict(ph *report.PhaseResult, passed, notJudged []string) {
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
}
