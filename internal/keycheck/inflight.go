package keycheck

import (
	"context"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkInFlight sends the slow body with a fresh key and, while it runs,
// a copy with the same key: the copy must get the profile's in-flight
// status at once, and the operation run once. An API that holds the copy
// until the first finishes and then replays it is safe but ties up a
// connection per retry: a warn. One that runs the copy too has no
// in-flight marker (it records the key only when the operation is done).
func (r *runner) checkInFlight(ctx context.Context) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	res := &report.KeyCheckResult{Sent: fmt.Sprintf("the slow body with a fresh key, and %s later a copy with the same key", r.o.InFlightDelay),
		Expected: fmt.Sprintf("%d (in flight) for the copy while the first runs; effect E once", p.InFlightStatus)}
	from, err := r.before(ctx, nameInFlight)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	m := r.build(req{body: r.o.SlowBody, key: r.newKey(nonce), nonce: nonce})
	var slow store.Attempt
	var wg sync.WaitGroup
	var trap panics.Trap // the slow request's panic, raised here
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer trap.Guard()
		slow = replay.Send(ctx, r.target, m, replay.SendOptions{})
	}()
	select {
	case <-ctx.Done():
		wg.Wait()
		trap.Rethrow()
		return res, ctx.Err()
	case <-time.After(r.o.InFlightDelay):
	}
	cp := replay.Send(ctx, r.target, m, replay.SendOptions{})
	wg.Wait()
	trap.Rethrow()
	for _, a := range []*store.Attempt{&slow, &cp} {
		if err := r.record(ctx, nameInFlight, m, a); err != nil {
			return res, err
		}
	}
	res.Attempts = 2
	to, err := r.after(ctx, nameInFlight, "after", from, true)
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	slowDone := answeredAt(slow)
	res.Observed = fmt.Sprintf("slow request %s after %s; copy %s after %s; effect %s", answerText(slow), slow.Latency.Round(time.Millisecond),
		answerText(cp), cp.Latency.Round(time.Millisecond), e)
	switch {
	case !is2xx(slow):
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the slow request answered %s: give %s that succeeds", answerText(slow), r.name(InputSlowBody))
	case !slowDone.After(cp.CompletedAt):
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the slow request was answered (after %s) before its copy was sent: %s must take longer than %s", slow.Latency.Round(time.Millisecond), r.name(InputSlowBody), r.o.InFlightDelay)
	case e.more(1) || (is2xx(cp) && !sameAnswer(slow, cp) && !sameJSON(slow.ResponseBody, cp.ResponseBody)):
		res.Status, res.Why = report.Fail, fmt.Sprintf("no in-flight marker: a copy sent while the first was running ran too (effect %s, copy %s%s): the key is recorded only when the operation is done", e, answerText(cp), r.idText(cp))
	case e.none():
		res.Status, res.Why = report.Inconclusive, "the probes saw no effect of the slow request"
	case cp.Status == p.InFlightStatus:
		res.Status = report.Pass
		if why := p.errorShape(cp.ResponseHeaders.Get("Content-Type")); why != "" {
			res.Status, res.Why = report.Warn, why
		}
		if held(cp, slowDone) {
			res.Status, res.Why = report.Warn, fmt.Sprintf("the copy was held until the first finished, then answered %d: the in-flight status should come at once", cp.Status)
		}
	case is2xx(cp) && held(cp, slowDone):
		res.Status, res.Why = report.Warn, fmt.Sprintf("waited, then replayed: the copy was held until the first finished (%s), then got the stored answer; the profile answers %d at once", cp.Latency.Round(time.Millisecond), p.InFlightStatus)
	default:
		res.Status, res.Why = report.Warn, fmt.Sprintf("the copy answered %s, not %d (in flight)", answerText(cp), p.InFlightStatus)
		if s := p.styleOf(sitInFlight, cp.Status); s != "" {
			res.Why += ": " + s
		}
	}
	return res, nil
}

// held reports whether the copy cp was held until the slow request was
// answered (at slowDone) rather than answered at once. The two answers of a
// holding API leave it a few milliseconds apart, and which of them the
// client reads first is up to the scheduler (under load the copy's was read
// first), so the test is not their order: cp was held when it waited at
// least half the time the slow request still had to run when cp was sent.
func held(cp store.Attempt, slowDone time.Time) bool {
	if cp.CompletedAt.IsZero() || slowDone.IsZero() {
		return false
	}
	return cp.Latency >= slowDone.Sub(cp.CompletedAt)/2
}

// answeredAt is when a's answer arrived (zero when it got none).
func answeredAt(a store.Attempt) time.Time {
	if a.Status == 0 || a.CompletedAt.IsZero() {
		return time.Time{}
	}
	return a.CompletedAt.Add(a.Latency)
}
