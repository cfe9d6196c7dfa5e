package check

import (
	"context"
	"errors"
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
	handling := fr.att.Latency
	delays := crashDelays(handling)
	judgedPass, notJudged := 0, 0
	for i, delay := range delays {
		t, why, err := r.startTrial(ctx, d, fr, PhaseCrash, fmt.Sprintf("trial %d before", i+1))
		if err != nil {
			return nil, err
		}
		if t == nil {
			return skipped(ph, why), nil
		}
		ct, err := r.crashTrial(ctx, d, t, i, delay, ph)
		if err != nil {
			return nil, err
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseCrash, t.before, ct.after)...)
		j := r.judge(fr, t, ct.after)
		judgeCrash(ph, t, i, ct, j)
		switch j.status {
		case report.Pass:
			judgedPass++
		case report.NotJudged:
			notJudged++
		}
		r.step(Step{Phase: PhaseCrash, DeliveryID: d.ID, N: i + 1, What: ct.what, Attempts: ct.attempts(), Status: j.status})
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

// crashed is what one crash trial sent and saw.
type crashed struct {
	// a1 is the copy the handler was killed handling; a2 the provider's
	// retry, sent only when a1 got no 2xx (acked false).
	a1, a2 store.Attempt
	acked  bool
	// what describes the trial.
	what  string
	after reading
}

func (c *crashed) attempts() []store.Attempt {
	if c.acked {
		return []store.Attempt{c.a1}
	}
	return []store.Attempt{c.a1, c.a2}
}

// crashTrial sends trial i's event, kills the handler delay after sending,
// restarts it, sends the provider's retry when the killed copy got no 2xx,
// and reads the probes after. It counts what it sent in ph.
func (r *runner) crashTrial(ctx context.Context, d *Delivery, t *trial, i int, delay time.Duration, ph *report.PhaseResult) (*crashed, error) {
	sent := make(chan store.Attempt, 1)
	go func() { sent <- r.send(ctx, t.req, replay.SendOptions{}) }()
	time.Sleep(delay)
	r.o.Serve.Kill()
	c := &crashed{a1: <-sent}
	c.a1.Edit = fmt.Sprintf("handler killed %s after sending", roundDur(delay))
	if err := r.record(ctx, &c.a1, d, PhaseCrash, 2*i+1, t.id); err != nil {
		return nil, err
	}
	if err := r.o.Serve.Start(ctx); err != nil {
		var se *ServeError
		if errors.As(err, &se) {
			se.Restart = true
			return nil, &SetupError{Err: se}
		}
		return nil, &SetupError{Err: fmt.Errorf("crash phase: restart: %w", err)}
	}
	c.acked = c.a1.Err == "" && !c.a1.Lost && is2xx(c.a1.Status)
	if c.acked {
		ph.Attempts++
		countStatuses(ph.Statuses, c.a1)
		c.what = fmt.Sprintf("killed %s after sending, after it had answered %d (a provider does not retry an answered delivery, so no retry was sent), restarted",
			roundDur(delay), c.a1.Status)
	} else {
		c.a2 = r.send(ctx, asRetry(d, r.sameIdentity(d, t.req), 1), replay.SendOptions{})
		c.a2.Edit = "provider's retry after the restart"
		if err := r.record(ctx, &c.a2, d, PhaseCrash, 2*i+2, t.id); err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, c.a1, c.a2)
		ph.Attempts += 2
		c.what = fmt.Sprintf("killed %s after sending (first copy: %s), restarted, retry answered %s",
			roundDur(delay), statusText(c.a1), statusText(c.a2))
	}
	var err error
	c.after, err = r.readChanged(ctx, d, PhaseCrash, fmt.Sprintf("trial %d after restart", i+1), t.before)
	return c, err
}

// judgeCrash adds trial i's violations and warnings to ph.
func judgeCrash(ph *report.PhaseResult, t *trial, i int, c *crashed, j judgement) {
	for _, v := range j.violations {
		v.EventID = t.id
		v.Copy = 2*i + 2
		if c.acked {
			v.Copy = 2*i + 1
			if strings.Contains(v.Message, "work was lost") {
				v.Message = strings.Replace(v.Message, "the event's work was lost", fmt.Sprintf("answered %d but the work was lost when the process died", c.a1.Status), 1)
				v.Hint = ackLostHint
			}
		}
		v.Message = c.what + ": " + v.Message
		ph.Violations = append(ph.Violations, v)
	}
	for _, w := range j.warnings {
		ph.Warnings = append(ph.Warnings, c.what+": "+w)
	}
	if !c.acked && (c.a2.Err != "" || !is2xx(c.a2.Status)) {
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("trial %d: the retry after the restart was answered %s (want 2xx)", i+1, statusText(c.a2)))
	}
}
