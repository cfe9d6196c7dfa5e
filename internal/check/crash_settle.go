package check

import (
	"context"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// crashMinQuiet is the least a crash trial's reading after the restart
// waits for quiet when the settle is learned: three probe polls.
const crashMinQuiet = 30 * time.Millisecond

// shortQuiet is the quiet period of a trial's reading after the restart
// (and the retry), or 0 for the run's own. With a learned settle, for a
// handler whose effects were all in place when it answered (not first's
// late), the run waits 3 × one event's effect time but at least minQuiet,
// 100ms; a crash trial makes a dozen such readings, each after a restart.
// That reading first waits for a change from before (the retry's work, or
// the killed copy's), and the rest of an event's effects land within the
// learned effect time of its sending, so 3 × that time (at least
// crashMinQuiet) is waited after the change instead. Only a pass is
// trusted from it: a trial judged otherwise is read again with the run's
// quiet (settleAgain) before its judgement counts, so a slower effect never
// becomes a violation.
func (c *crashPhase) shortQuiet() time.Duration {
	r := c.r
	if !r.o.LearnSettle || !r.learned || c.fr.late {
		return 0
	}
	q := max(crashMinQuiet, 3*r.effDur)
	if q >= r.effSettle {
		return 0
	}
	return q
}

// readAfter reads the probes after a trial's restart: it waits for a change
// from before, then for quiet (shortQuiet's, when short says so).
func (c *crashPhase) readAfter(ctx context.Context, point string, before reading) (rd reading, short bool, err error) {
	q := c.shortQuiet()
	c.r.crashQuiet = q
	defer func() { c.r.crashQuiet = 0 }()
	rd, err = c.r.readChanged(ctx, c.d, PhaseCrash, point, before)
	return rd, q > 0, err
}

// settleAgain reads the probes after a trial again, waiting for the run's
// quiet: a judgement other than pass made on a short quiet is made again
// from it.
func (c *crashPhase) settleAgain(ctx context.Context, point string) (reading, error) {
	return c.r.read(ctx, c.d, PhaseCrash, point+" (settled again at the run's quiet)")
}

// maxSparedPerPoint and maxSpared bound the kills not made because their
// copy was answered first (spare): per point of the plan, and in all. A
// point that a handler always answers before is then killed as planned.
const maxSparedPerPoint, maxSpared = 2, 8

// spare reports whether the kill k, aimed inside the handling (a point of
// the sweep, or the first probe change), is better not made now that a, the
// copy it was aimed at, was answered 2xx before it was due (before any
// probe changed): the kill would land after the answer, where a handler
// whose effects were in place when it answered (first's were: not late)
// has nothing left to lose, and the trial would cost a restart and a
// warm-up to tell nothing. The copy is then an event like any other, and
// the kill is aimed again at the warm handler. The kill aimed after the
// answer is always made.
func (c *crashPhase) spare(k killPlan, a store.Attempt) bool {
	if k.afterAnswer || c.fr.late || a.Err != "" || a.Lost || !is2xx(a.Status) {
		return false
	}
	return c.sparedHere < maxSparedPerPoint && c.spared < maxSpared
}

// unkilled records ct.a1, trial i's copy answered before its kill k was
// due (spare), as a copy that was not killed, and settles its effect.
func (c *crashPhase) unkilled(ctx context.Context, t *trial, i int, k killPlan, ct *crashed) error {
	ct.unkilled = true
	a := ct.a1
	a.Edit = fmt.Sprintf("answered %s before the kill aimed at %s after its last byte was due: not killed, the point is aimed again", statusText(a), roundDur(k.delay))
	if k.onChange {
		a.Edit = fmt.Sprintf("answered %s before any probe changed: not killed, the kill at the first probe change is aimed again", statusText(a))
	}
	c.copies++
	if err := c.r.record(ctx, &a, c.d, PhaseCrash, c.copies, t.id); err != nil {
		return err
	}
	c.ph.Attempts++
	countStatuses(c.ph.Statuses, a)
	c.answers.add(a)
	c.spared++
	c.sparedHere++
	c.cold = false // it handled this copy
	return c.settleFresh(ctx, t.before, fmt.Sprintf("trial %d, copy answered before its kill", i+1))
}

// warmUp sends the restarted handler a fresh event before trial i, and
// settles its effect.
func (c *crashPhase) warmUp(ctx context.Context, i int) error {
	prev := c.last
	a, err := c.sendFresh(ctx, "warm-up after the restart (not killed)")
	if err != nil || a.Err != "" || !is2xx(a.Status) {
		return err
	}
	return c.settleFresh(ctx, prev, fmt.Sprintf("trial %d, after the warm-up", i+1))
}

// settleFresh reads the probes after a fresh event that was not killed (a
// warm-up, or a copy answered before its kill), prev being the settled
// reading before it, on shortQuiet. When the change since prev is exactly
// one event's effect, the handler's work for it is all there and the next
// trial starts from this reading; otherwise (and without a short quiet) the
// trial's reading before waits for the run's quiet.
func (c *crashPhase) settleFresh(ctx context.Context, prev reading, point string) error {
	r := c.r
	q := c.shortQuiet()
	if q == 0 || prev.vals == nil {
		return nil
	}
	if ad := r.additive[c.d.ID]; ad == nil || !ad.known || !ad.yes {
		return nil // no exact effect to check the reading against
	}
	r.crashQuiet = q
	rd, err := r.readChanged(ctx, c.d, PhaseCrash, point, prev)
	r.crashQuiet = 0
	if err != nil {
		return err
	}
	if r.judge(c.fr, &trial{exact: true, before: prev}, rd).status != report.Pass {
		r.lastQuiet = nil
	}
	return nil
}
