package check

import (
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"slices"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// The crash phase kills the handler (SIGKILL to the --serve process group)
// while it handles a fresh event, restarts it, and sends the provider's retry
// when the killed copy got no 2xx. The bugs it looks for live in a window of
// a few milliseconds on a warm handler: work committed and the answer lost
// (the retry does the work again), or the event recorded as handled before
// its work (the retry is taken as a duplicate and the work is lost). So:
//
//   - it learns what a restart with no event changes (startup writes, calls
//     to the sink) and does not charge that to the events it kills;
//   - it times warm answers (fresh events after a warm-up; the first answer
//     after a start is the cold one) and sweeps its kills across that
//     window, more densely the shorter it is;
//   - its first kills land at the first probe change seen while the copy is
//     in flight: the effect is committed, the answer not yet sent;
//   - every kill is classified (before the request was fully sent, mid-handling,
//     after the answer); only mid-handling kills count as evidence that the
//     handler survives a crash, and too few of them leave the phase not
//     judged rather than passed.

// The crash phase's budget.
const (
	// minMidKills is how many kills must land mid-handling (the request
	// completely written, no answer byte yet) and be judged for a pass.
	minMidKills = 3
	// triggerTrials kill at the first probe change.
	triggerTrials = 2
	// calibrationSamples warm answers are timed, after one warm-up.
	calibrationSamples = 5
	// maxExtraTrials more timed kills, aimed at the shortest warm answer,
	// are made when too few of the planned ones landed mid-handling.
	maxExtraTrials = 4
)

// killPlan is one trial's kill: at the first probe change seen while the copy
// is in flight (onChange; at once when the answer comes first), else delay
// after the request's last byte.
type killPlan struct {
	onChange bool
	delay    time.Duration
	// afterAnswer: aimed after the warm answer, where a handler that
	// answers first and works from memory loses the event.
	afterAnswer bool
}

// crashPlan is the crash phase's kills for a handler whose warm answers take
// window (nearly the shortest: a loaded machine only makes answers slower)
// and warm (the median): first at the first probe change, then a sweep
// evenly across the window (more kills the shorter it is: scheduling jitter
// is a larger part of a short window), then one at 1.5 × warm, after the
// answer, where a handler that answers first and works from memory loses the
// event.
func crashPlan(window, warm time.Duration) []killPlan {
	if window < 300*time.Microsecond {
		window = 300 * time.Microsecond
	}
	if warm < window {
		warm = window
	}
	n := 6
	switch {
	case window < 10*time.Millisecond:
		n = 10
	case window < 50*time.Millisecond:
		n = 8
	}
	var p []killPlan
	for range triggerTrials {
		p = append(p, killPlan{onChange: true})
	}
	for i := range n {
		p = append(p, killPlan{delay: window * time.Duration(2*i+1) / time.Duration(2*n)})
	}
	return append(p, killPlan{delay: warm * 3 / 2, afterAnswer: true})
}

// extraKill is the i-th extra timed kill (i < maxExtraTrials): spread over
// the first two thirds of the shortest warm answer, where a kill is least
// likely to come after it.
func extraKill(warmMin time.Duration, i int) killPlan {
	return killPlan{delay: warmMin * 2 * time.Duration(i+1) / time.Duration(3*(maxExtraTrials+1))}
}

// killClass is where a kill landed in the killed copy's exchange.
type killClass int

const (
	// killBeforeRead: the request was not completely written when the
	// signal was sent.
	killBeforeRead killClass = iota
	// killMid: the request was written, no answer byte had come.
	killMid
	// killAfterAnswer: the handler had answered.
	killAfterAnswer
)

func (k killClass) String() string {
	switch k {
	case killBeforeRead:
		return "before the request was fully sent"
	case killMid:
		return "mid-handling, no answer yet"
	}
	return "after the answer"
}

// classifyKill says where a kill whose signal was sent at killAt landed for
// the copy a it interrupted; acted says a probe had already changed while
// the copy was in flight. An answer read after killAt was still written
// before the handler died, so it counts as an answer. A handler whose effect
// was seen had read the request, whenever the sender got round to noting its
// last byte (the write returns to a goroutine that a busy machine may run
// after the handler has committed): that kill is mid-handling, never "before
// the request was fully sent".
func classifyKill(a store.Attempt, killAt time.Time, acted bool) killClass {
	switch {
	case a.Status != 0:
		return killAfterAnswer
	case acted:
		return killMid
	case a.CompletedAt.IsZero() || a.CompletedAt.After(killAt):
		return killBeforeRead
	}
	return killMid
}

// crashPhase is one delivery's crash phase under way.
type crashPhase struct {
	r  *runner
	d  *Delivery
	fr *firstResult
	ph *report.PhaseResult
	// copies numbers the stored attempts.
	copies int
	// restart is what a restart with no event changed (restartLearned).
	restart restartEffect
	// warm is the median warm answer, warmMin the shortest, window the
	// second shortest (the sweep's: one freak answer does not narrow it).
	warm, warmMin, window time.Duration
	// cold: the handler was restarted and has handled no event since.
	cold bool
	// kills counts the kills by class; midJudged the mid-handling ones whose
	// trial was judged pass; notJudged the trials left unjudged.
	kills     [3]int
	midJudged int
	notJudged int
	// answers counts the copies answered 5xx or asked to retry later.
	answers answerTally
	// restartCost is how long a kill, a restart and the settled reading
	// after it took (learnRestart), for the estimate.
	restartCost time.Duration
	// recovered is the longest a killed copy's work took to appear after
	// the restart, when it came later than a reading's usual wait for a
	// change: a queue that outlived the process handed the job out again.
	recovered time.Duration
	// last is the last settled reading of a trial (before or after it).
	last reading
	// spared counts the kills not made because the copy was answered
	// first, in all and at the current point of the plan (spare).
	spared, sparedHere int
}

func (r *runner) crash(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseCrash, Statuses: map[string]int{}}
	c := &crashPhase{r: r, d: d, fr: fr, ph: ph, answers: answerTally{what: "copies answered (warm-ups, timed answers, retries after a restart)"}}
	if err := c.learnRestart(ctx); err != nil {
		return nil, err
	}
	if err := c.calibrate(ctx); err != nil {
		return nil, err
	}
	plan := crashPlan(c.window, c.warm)
	c.estimate(ctx, len(plan), time.Since(start))
	extra := 0
	for i := 0; i < len(plan); i++ {
		res, again, why, err := c.trial(ctx, i, plan[i])
		if err != nil {
			return nil, err
		}
		if why != "" {
			return skipped(ph, why), nil
		}
		if again {
			i-- // the copy was answered before its kill was due: aim again
			continue
		}
		if res == report.Fail || c.answers.failed() {
			break // proven; later trials would only repeat it
		}
		if i == len(plan)-1 && c.midJudged < minMidKills && extra < maxExtraTrials {
			plan = append(plan, extraKill(c.warmMin, extra))
			extra++
		}
	}
	ph.Duration = time.Since(start)
	c.conclude()
	c.answers.conclude(ph, "crash")
	if took := r.o.Serve.KillTook(); took > 0 {
		r.note("delivery %d: crash: each kill ran the kill command, which took %s to %s: a timed kill started it %s (its fastest) before the moment aimed at (a point of the warm answer time, never before the request was written), a kill at the first probe change when the probe moved, and a kill classed mid-handling is one whose copy had no answer when the command ended",
			d.ID, roundDur(r.o.Serve.KillLead()), roundDur(took), roundDur(r.o.Serve.KillLead()))
	}
	if c.recovered > 0 {
		r.note("delivery %d: crash: the work of a killed copy appeared up to %s after the restart: the handler's queue outlived the process and handed the job out again, "+
			"so a reading after a restart waits for the work up to %s %s", d.ID, roundDur(c.recovered), r.name(InputSettleMax), report.Duration(r.o.SettleMax))
	}
	return ph, nil
}

// conclude sets the phase's status and message from its trials.
func (c *crashPhase) conclude() {
	ph := c.ph
	total := c.kills[killBeforeRead] + c.kills[killMid] + c.kills[killAfterAnswer]
	landed := fmt.Sprintf("%d of %d kills landed mid-handling (%d before the request was fully sent, %d after the answer)",
		c.kills[killMid], total, c.kills[killBeforeRead], c.kills[killAfterAnswer])
	if c.spared > 0 {
		landed += fmt.Sprintf(", and %d copies answered before the kill aimed inside their handling was due were not killed", c.spared)
	}
	timing := fmt.Sprintf("warm answers %s–%s, the first %s", roundDur(c.warmMin), roundDur(c.warm), roundDur(c.fr.att.Latency))
	switch {
	case len(ph.Violations) > 0:
		ph.Status = report.Fail
		ph.Message = ph.Violations[0].Message + " (" + landed + ")"
	case c.midJudged >= minMidKills:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("%s (%s); after each restart (and the provider's retry where the killed copy got no 2xx) each event's effect was exactly once", landed, timing)
	case c.kills[killMid] < minMidKills:
		ph.Status = report.NotJudged
		ph.Message = fmt.Sprintf("not judged: only %s, %d needed to judge (%s): the kills could not be placed inside the handling reliably", landed, minMidKills, timing)
	default:
		ph.Status = report.NotJudged
		ph.Message = fmt.Sprintf("not judged in %d trials (%s): %s", c.notJudged, landed, firstOr(ph.Warnings, "no probe moved"))
	}
}

// estimate tells the Observer how long the crash phase expects to take now
// that it has calibrated (elapsed so far): a slow handler, whose restarts
// take seconds, makes it minutes. A trial costs a restart (measured, with
// the reading after it), a warm-up, the killed copy and the retry (about a
// warm answer each) and one settled reading; up to maxExtraTrials more are
// made when too few kills land mid-handling. When the run's deadline
// (--max-time) comes first, the estimate says so.
func (c *crashPhase) estimate(ctx context.Context, trials int, elapsed time.Duration) {
	settle := c.r.effSettle
	if q := c.shortQuiet(); q > 0 {
		settle = q
	}
	trial := c.restartCost + 3*c.warm + settle
	least := elapsed + time.Duration(trials)*trial
	most := least + maxExtraTrials*trial
	text := fmt.Sprintf("%d trials of about %s each (a restart %s, warm answers %s): about %s in all, up to %s with %d extra trials",
		trials, report.Duration(roundDur(trial)), report.Duration(roundDur(c.restartCost)), report.Duration(roundDur(c.warm)),
		report.Duration(roundDur(least)), report.Duration(roundDur(most)), maxExtraTrials)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < most-elapsed {
		text += fmt.Sprintf("; the run has %s left and stops there, writing the reports of what was judged", report.Duration(roundDur(time.Until(dl))))
	}
	c.r.obs.Note(Note{Kind: NoteEstimate, DeliveryID: c.d.ID, Phase: PhaseCrash, After: least, Text: text})
}

// sendFresh sends one fresh event the handler is not killed handling (a
// warm-up or a timed answer) and records it; why says what it is for.
func (c *crashPhase) sendFresh(ctx context.Context, why string) (store.Attempt, error) {
	req, id, ok, _ := c.r.freshIdentity(c.d)
	if !ok {
		return store.Attempt{}, nil
	}
	a := c.r.send(ctx, req, replayOptions)
	a.Edit = why
	c.copies++
	if err := c.r.record(ctx, &a, c.d, PhaseCrash, c.copies, id); err != nil {
		return a, err
	}
	c.ph.Attempts++
	countStatuses(c.ph.Statuses, a)
	c.answers.add(a)
	c.cold = false
	return a, nil
}

// calibrate times warm answers: one fresh event warms the handler up (the
// first answer after a start is the cold one: connections, JIT, lazy
// imports), then calibrationSamples more are timed. When none is answered
// 2xx, the earlier phases' answers after the first stand in.
func (c *crashPhase) calibrate(ctx context.Context) error {
	var lat []time.Duration
	for i := 0; i <= calibrationSamples; i++ {
		why := "timing a warm answer (not killed)"
		if i == 0 {
			why = "warm-up after a restart (not killed)"
		}
		a, err := c.sendFresh(ctx, why)
		if err != nil {
			return err
		}
		if i > 0 && a.Err == "" && is2xx(a.Status) {
			lat = append(lat, a.Latency)
		}
	}
	if len(lat) == 0 && len(c.r.answers) > 1 {
		lat = append(lat, c.r.answers[1:]...)
	}
	if len(lat) == 0 {
		lat = []time.Duration{c.fr.att.Latency}
	}
	slices.Sort(lat)
	c.warm, c.warmMin, c.window = lat[len(lat)/2], lat[0], lat[min(1, len(lat)-1)]
	return nil
}

// restartServer starts the handler again after a kill.
func (c *crashPhase) restartServer(ctx context.Context) error {
	if err := c.r.o.Serve.Start(ctx); err != nil {
		var se *ServeError
		if errors.As(err, &se) {
			se.Restart = true
			return &SetupError{Err: se}
		}
		return &SetupError{Err: fmt.Errorf("crash phase: restart: %w", err)}
	}
	c.cold = true
	return nil
}

// crashed is what one crash trial sent and saw.
type crashed struct {
	// a1 is the copy the handler was killed handling; a2 the provider's
	// retry, sent only when a1 got no 2xx (acked false).
	a1, a2 store.Attempt
	acked  bool
	// class is where the kill landed.
	class killClass
	// retryMarks names the headers that marked a2 as the provider's retry
	// (Slack's X-Slack-Retry-Num); none when the provider does not mark them.
	retryMarks []string
	// what describes the trial.
	what  string
	after reading
	// waited, when set, is how long the reading after the restart waited
	// for the work of a handler that works behind a queue.
	waited time.Duration
	// short: after waited shortQuiet, not the run's quiet; point is where
	// it was read.
	short bool
	point string
	// unkilled: a1 was answered before its kill was due, and the kill was
	// not made (crashPhase.spare).
	unkilled bool
}

func (c *crashed) attempts() []store.Attempt {
	if c.acked {
		return []store.Attempt{c.a1}
	}
	return []store.Attempt{c.a1, c.a2}
}

// trial runs trial i: a warm-up when the handler was restarted, a fresh
// event killed as k says, the restart and the retry, judged. It returns the
// trial's status, or why the phase cannot run.
func (c *crashPhase) trial(ctx context.Context, i int, k killPlan) (res report.Status, again bool, why string, err error) {
	r := c.r
	// A kill at the first probe change needs no warm handler: it follows
	// the handler's work whenever it comes, and a cold one only leaves
	// longer for it to land before the answer.
	if c.cold && !k.onChange {
		if err := c.warmUp(ctx, i); err != nil {
			return "", false, "", err
		}
	}
	t, why, err := r.startTrial(ctx, c.d, c.fr, PhaseCrash, fmt.Sprintf("trial %d before", i+1))
	if err != nil || t == nil {
		return "", false, why, err
	}
	c.last = t.before
	ct, err := c.killTrial(ctx, t, i, k)
	if err != nil || ct.unkilled {
		return "", ct != nil, "", err
	}
	c.sparedHere = 0
	judged := *t
	judged.before = c.restart.added(t.before)
	j := r.judge(c.fr, &judged, ct.after)
	if ct.short && j.status != report.Pass {
		if ct.after, err = c.settleAgain(ctx, ct.point); err != nil {
			return "", false, "", err
		}
		j = r.judge(c.fr, &judged, ct.after)
	}
	c.ph.Effects = append(c.ph.Effects, r.effects(ctx, c.d, PhaseCrash, t.before, ct.after)...)
	judgeCrash(c.ph, t, i, ct, j, r.name(InputSettleMax))
	c.kills[ct.class]++
	switch {
	case j.status == report.NotJudged:
		c.notJudged++
	case j.status == report.Pass && ct.class == killMid:
		c.midJudged++
	}
	c.last = ct.after
	r.step(Step{Phase: PhaseCrash, DeliveryID: c.d.ID, N: i + 1, What: ct.what, Attempts: ct.attempts(), Status: j.status})
	return j.status, false, "", nil
}

// killTrial sends t's event, kills the handler as k says, restarts it, sends
// the provider's retry when the killed copy got no 2xx, and reads the probes
// after.
func (c *crashPhase) killTrial(ctx context.Context, t *trial, i int, k killPlan) (*crashed, error) {
	r := c.r
	sent := make(chan store.Attempt, 1)
	// A timed kill counts from the request's last byte as the sender wrote
	// it, not from an estimate of how long writing takes: on a loaded
	// machine, or on the first connection to a restarted process, the
	// write can take longer than any estimate, and a kill before the
	// request is complete tells nothing about the handler.
	written := make(chan time.Time, 1)
	opt := replayOptions
	opt.Written = func(at time.Time) { written <- at }
	called := time.Now()
	// A panic of the send (reading the handler's answer) is raised here
	// once the copy is accounted for: the kill and restart still happen.
	var trap panics.Trap
	go func() {
		var a store.Attempt
		defer func() { sent <- a }()
		defer trap.Guard()
		a = r.send(ctx, t.req, opt)
	}()
	var (
		ct       = &crashed{}
		answered bool
		trigger  string
	)
	if k.onChange {
		ct.a1, answered, trigger = c.awaitChange(ctx, t.before.vals, sent)
	} else {
		select {
		case at := <-written:
			// A kill command's own time (its fastest run) is taken off
			// the wait, never before the request was written.
			sleepUntil(at.Add(max(0, k.delay-r.o.Serve.KillLead())))
		case ct.a1 = <-sent: // not written (an error), or already answered
			answered = true
		}
		if !answered {
			select {
			case ct.a1 = <-sent:
				answered = true
			default:
			}
		}
	}
	if answered && trigger == "" && c.spare(k, ct.a1) {
		trap.Rethrow()
		return ct, c.unkilled(ctx, t, i, k, ct)
	}
	killAt, killErr := r.o.Serve.Kill(ctx)
	if !answered {
		ct.a1 = <-sent
	}
	trap.Rethrow()
	if killErr != nil {
		return nil, &SetupError{Err: fmt.Errorf("crash phase: %w", killErr)}
	}
	ct.class = classifyKill(ct.a1, killAt, trigger != "")
	when := killWhen(ct.a1, killAt, called)
	switch {
	case trigger != "":
		ct.what = fmt.Sprintf("killed at the first probe change (%s), %s (%s)", trigger, when, ct.class)
	case k.onChange:
		ct.what = fmt.Sprintf("killed as soon as it answered, before any probe changed, %s (%s)", when, ct.class)
	default:
		ct.what = fmt.Sprintf("killed %s (%s)", when, ct.class)
	}
	ct.a1.Edit = "handler " + ct.what
	c.copies++
	// The copy is recorded once the handler is back, with the kill and
	// the restart's end in its detail: the run's timeline draws them.
	restartErr := c.restartServer(ctx)
	markKill(&ct.a1, killAt, time.Now(), restartErr == nil)
	if err := r.record(ctx, &ct.a1, c.d, PhaseCrash, c.copies, t.id); err != nil {
		return nil, err
	}
	if restartErr != nil {
		return nil, restartErr
	}
	ct.acked = ct.a1.Err == "" && !ct.a1.Lost && is2xx(ct.a1.Status)
	ph := c.ph
	if ct.acked {
		ph.Attempts++
		countStatuses(ph.Statuses, ct.a1)
		ct.what += fmt.Sprintf(", after it had answered %d (a provider does not retry an answered delivery, so no retry was sent), restarted", ct.a1.Status)
	} else {
		ct.a2 = r.send(ctx, asRetry(c.d, r.sameIdentity(c.d, t.req, t.id), 1), replayOptions)
		ct.a2.Edit = "provider's retry after the restart"
		ct.retryMarks = verify.RetryHeaders(c.d.Scheme)
		c.copies++
		if err := r.record(ctx, &ct.a2, c.d, PhaseCrash, c.copies, t.id); err != nil {
			return nil, err
		}
		c.cold = false
		c.answers.add(ct.a2)
		countStatuses(ph.Statuses, ct.a1, ct.a2)
		ph.Attempts += 2
		ct.what += fmt.Sprintf(" (first copy: %s), restarted, retry answered %s", statusText(ct.a1), statusText(ct.a2))
	}
	restarted := time.Now()
	point := fmt.Sprintf("trial %d after restart", i+1)
	ct.point = point
	var err error
	if ct.after, ct.short, err = c.readAfter(ctx, point, t.before); err != nil {
		return nil, err
	}
	if c.fr.late && probe.SameValues(ct.after.vals, t.before.vals) {
		// The handler works behind a queue: one that outlives the process
		// hands a dead worker's job out again, but only once its lock
		// expires (BullMQ: 30 s, then its next stalled-job check), so the
		// work may still come. Wait for it up to --settle-max before
		// calling it lost; a queue in memory never brings it.
		if ct.after, err = r.readChangedWithin(ctx, c.d, PhaseCrash, point+" (waiting for a queue to recover the job)", t.before, r.o.SettleMax); err != nil {
			return nil, err
		}
		ct.waited = time.Since(restarted)
		if !probe.SameValues(ct.after.vals, t.before.vals) && !ct.after.lastChange.IsZero() {
			c.recovered = max(c.recovered, ct.after.lastChange.Sub(restarted))
		}
	}
	return ct, nil
}
