package keycheck

import (
	"context"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// OutageTimeout bounds the wait for the answer to the request sent while
// the idempotency store is down (or the run's timeout, when shorter): an
// API whose store client queues commands while it reconnects holds the
// request, and the full timeout would only add to the run. A correct API
// refuses at once.
const OutageTimeout = 10 * time.Second

// checkOutage stops the idempotency store (the store-down command), sends
// the body with a fresh key, reads the probes, and starts the store again
// (the store-up command, also when sending failed): an API that cannot
// record the key must refuse before doing anything (503), or a retry would
// run twice. Work that appears only once the store is back was held, not
// done without the store: the same request is sent again then, to see
// whether its key was recorded.
func (r *runner) checkOutage(ctx context.Context) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	want := p.OutageStatus
	if want == 0 {
		want = 503
	}
	res := &report.KeyCheckResult{Sent: "the body with a fresh key while the idempotency store is down",
		Expected: fmt.Sprintf("%d before doing anything; effect +0", want)}
	from, err := r.before(ctx, nameOutage)
	if err != nil {
		return res, err
	}
	if err := r.shell(ctx, r.o.StoreDownCmd); err != nil {
		return res, setupf("store-down command: %v", err)
	}
	nonce := newNonce()
	m := r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce})
	bound := min(r.o.Timeout, OutageTimeout)
	sentAt := time.Now()
	a, err := r.sendWithin(ctx, nameOutage, m, bound)
	waited := time.Since(sentAt)
	var during reading
	if err == nil {
		during, err = r.after(ctx, nameOutage, "while the store was down", from, false)
	}
	if err := r.shell(context.WithoutCancel(ctx), r.o.StoreUpCmd); err != nil {
		return res, setupf("store-up command: %v", err)
	}
	if err != nil {
		return res, err
	}
	res.Attempts = 1
	to, err := r.after(ctx, nameOutage, "after the store came back", during, false)
	if err != nil {
		return res, err
	}
	e1, e2 := r.effectOf(from, during), r.effectOf(during, to)
	res.Effect = r.effectOf(from, to).String()
	res.Observed = fmt.Sprintf("%s%s; effect %s while the store was down, %s after it came back", answerText(a), timedOut(a, waited, bound), short(e1), short(e2))
	switch {
	case !e1.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("the API did the work without its idempotency store (%s, effect %s while it was down): a retry of this request would run again", answerText(a), e1)
	case !e2.none():
		return r.outageHeld(ctx, res, m, a, to, e2)
	case is2xx(a):
		res.Status, res.Why = report.Fail, fmt.Sprintf("the API answered %s without its idempotency store, and did nothing", answerText(a))
	case a.Status == want:
		res.Status = report.Pass
	case a.Status >= 500:
		res.Status, res.Why = report.Warn, fmt.Sprintf("answered %d, not %d: nothing was done, but a client cannot tell this from a failed operation", a.Status, want)
	case !answered(a):
		res.Status, res.Why = report.Warn, fmt.Sprintf("%s while the store was down, not %d; nothing was done", answerText(a), want)
	default:
		res.Status, res.Why = report.Warn, fmt.Sprintf("answered %s, not %d; nothing was done", answerText(a), want)
	}
	return res, nil
}

// outageHeld judges a request sent while the store was down (m, answered
// a) whose work appeared only after the store came back (e): the API held
// it. The same request again tells whether its key was recorded then.
func (r *runner) outageHeld(ctx context.Context, res *report.KeyCheckResult, m *message.Request, a store.Attempt, from reading, e effect) (*report.KeyCheckResult, error) {
	a2, err := r.send(ctx, nameOutage, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	res.Sent += ", then the same request once it was back"
	to, err := r.after(ctx, nameOutage, "after the retry", from, false)
	if err != nil {
		return res, err
	}
	e3 := r.effectOf(from, to)
	res.Observed += fmt.Sprintf("; the retry %s%s, effect %s", answerText(a2), r.idText(a2), short(e3))
	held := fmt.Sprintf("the API held the request while its store was down — it got %s — and did the work only once the store came back (effect %s)", answerText(a), e)
	if !e3.none() {
		res.Status, res.Why = report.Fail, held+fmt.Sprintf(", without recording its key: the retry with the same key ran again (effect %s)", e3)
		return res, nil
	}
	res.Status, res.Why = report.Warn, held+fmt.Sprintf(": the retry with the same key then got %s and ran nothing, but the first request got %s for work that was done", answerText(a2), answerText(a))
	return res, nil
}

// timedOut says that a got no answer within bound, when it waited that
// long in vain.
func timedOut(a store.Attempt, waited, bound time.Duration) string {
	if answered(a) || waited < bound-bound/20 {
		return ""
	}
	return fmt.Sprintf(" after %s, the longest keycheck waits while the store is down", bound)
}
