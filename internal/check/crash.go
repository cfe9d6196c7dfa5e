package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// crashDelays are the instants, after sending, at which the handler is
// killed: swept across its measured handling time, and once after its answer
// (1.5 × the handling time), where a handler that answers first and works
// from memory loses the event.
func crashDelays(handling time.Duration) []time.Duration {
	if handling < 2*time.Millisecond {
		handling = 2 * time.Millisecond
	}
	return []time.Duration{handling / 4, handling / 2, handling * 3 / 4, handling * 3 / 2}
}

// ackLostHint is the fix for a handler that answered 2xx and then lost the
// work when its process died.
const ackLostHint = "do the work (or durably enqueue it, e.g. insert it into a jobs table a worker resumes after a restart) " +
	"before answering 2xx: a provider never retries a delivery it got a 2xx for"

// crash kills the handler (SIGKILL to its process group) while it handles a
// fresh event and restarts it. A real provider retries only a delivery that
// got no 2xx: when the killed copy had not been answered, the retry is sent;
// when it had been answered 2xx, nothing is sent again. Either way the final
// effect must be exactly the first delivery's (0 after a 2xx: the handler
// acknowledged the event and lost its work).
func (r *runner) crash(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseCrash, Statuses: map[string]int{}}
	if r.o.Serve == nil {
		ph.Status, ph.Message = report.Skip, "not run: needs --serve CMD so hookreplay can kill and restart the handler"
		return ph, nil
	}
	if !fr.fresh {
		ph.Status, ph.Message = report.Skip, "not run: "+freshReason(d, r.o.Secret)
		return ph, nil
	}
	handling := fr.att.Latency
	delays := crashDelays(handling)
	judgedPass, notJudged := 0, 0
	for i, delay := range delays {
		exact, err := r.exactJudgement(ctx, d, fr)
		if err != nil {
			return nil, err
		}
		req, id, ok, why := r.freshIdentity(d)
		if !ok {
			ph.Status, ph.Message = report.Skip, "not run: "+why
			return ph, nil
		}
		before, err := r.read(ctx, d, PhaseCrash, fmt.Sprintf("trial %d before", i+1))
		if err != nil {
			return nil, err
		}
		sent := make(chan store.Attempt, 1)
		go func() { sent <- r.send(ctx, req, replay.SendOptions{}) }()
		time.Sleep(delay)
		r.o.Serve.Kill()
		a1 := <-sent
		a1.Edit = fmt.Sprintf("handler killed %s after sending", delay.Round(time.Microsecond))
		if err := r.record(ctx, &a1, d, PhaseCrash, 2*i+1, id); err != nil {
			return nil, err
		}
		if err := r.o.Serve.Start(ctx); err != nil {
			return nil, &SetupError{Err: fmt.Errorf("crash phase: restart: %w", err)}
		}
		acked := a1.Err == "" && !a1.Lost && is2xx(a1.Status)
		var a2 store.Attempt
		var trial string
		if acked {
			ph.Attempts++
			countStatuses(ph.Statuses, a1)
			trial = fmt.Sprintf("killed %s after sending, after it had answered %d (a provider does not retry an answered delivery, so no retry was sent), restarted",
				delay.Round(time.Microsecond), a1.Status)
		} else {
			a2 = r.send(ctx, asRetry(d, r.sameIdentity(d, req), 1), replay.SendOptions{})
			a2.Edit = "provider's retry after the restart"
			if err := r.record(ctx, &a2, d, PhaseCrash, 2*i+2, id); err != nil {
				return nil, err
			}
			countStatuses(ph.Statuses, a1, a2)
			ph.Attempts += 2
			trial = fmt.Sprintf("killed %s after sending (first copy: %s), restarted, retry answered %s",
				delay.Round(time.Microsecond), statusText(a1), statusText(a2))
		}
		after, err := r.readChanged(ctx, d, PhaseCrash, fmt.Sprintf("trial %d after restart", i+1), before)
		if err != nil {
			return nil, err
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseCrash, before, after)...)
		j := judgeOnce(r.c.Probes, fr.effect, before.vals, after.vals, exact, r.o.ResetCmd != "", fr.before.vals, fr.after.vals)
		for _, v := range j.violations {
			v.EventID = id
			v.Copy = 2*i + 2
			if acked {
				v.Copy = 2*i + 1
				if strings.Contains(v.Message, "work was lost") {
					v.Message = strings.Replace(v.Message, "the event's work was lost", fmt.Sprintf("answered %d but the work was lost when the process died", a1.Status), 1)
					v.Hint = ackLostHint
				}
			}
			v.Message = trial + ": " + v.Message
			ph.Violations = append(ph.Violations, v)
		}
		for _, w := range j.warnings {
			ph.Warnings = append(ph.Warnings, trial+": "+w)
		}
		switch j.status {
		case report.Pass:
			judgedPass++
		case report.NotJudged:
			notJudged++
		}
		if !acked && (a2.Err != "" || !is2xx(a2.Status)) {
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("trial %d: the retry after the restart was answered %s (want 2xx)", i+1, statusText(a2)))
		}
		r.progress("crash    delivery %d trial %d: %s → %s", d.ID, i+1, trial, j.status)
		if len(j.violations) > 0 {
			break // proven; later trials would only repeat it
		}
	}
	ph.Duration = time.Since(start)
	switch {
	case len(ph.Violations) > 0:
		ph.Status = report.Fail
		ph.Message = ph.Violations[0].Message
	case judgedPass > 0:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("killed the handler at %d points across and after its %s handling time; after the restart (and the provider's retry where the killed copy got no 2xx) each event's effect was exactly once", len(delays), roundDur(handling))
	default:
		ph.Status = report.NotJudged
		ph.Message = fmt.Sprintf("not judged in %d of %d trials: %s", notJudged, len(delays), firstOr(ph.Warnings, "no probe moved"))
	}
	return ph, nil
}
