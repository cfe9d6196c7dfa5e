package keycheck

import (
	"context"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// checkOutage stops the idempotency store (the store-down command), sends
// the body with a fresh key and starts the store again (the store-up
// command, also when sending failed): an API that cannot record the key
// must refuse before doing anything (503), or a retry would run twice.
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
	a, sendErr := r.send(ctx, nameOutage, r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce}), replay.SendOptions{})
	if err := r.shell(context.WithoutCancel(ctx), r.o.StoreUpCmd); err != nil {
		return res, setupf("store-up command: %v", err)
	}
	if sendErr != nil {
		return res, sendErr
	}
	res.Attempts = 1
	to, err := r.after(ctx, nameOutage, "after", from, false)
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("%s; effect %s", answerText(a), e)
	switch {
	case !e.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("the API did the work without its idempotency store (%s, effect %s): a retry of this request would run again", answerText(a), e)
	case is2xx(a):
		res.Status, res.Why = report.Fail, fmt.Sprintf("the API answered %s without its idempotency store", answerText(a))
	case a.Status == want:
		res.Status = report.Pass
	case a.Status >= 500:
		res.Status, res.Why = report.Warn, fmt.Sprintf("answered %d, not %d: nothing was done, but a client cannot tell this from a failed operation", a.Status, want)
	case !answered(a):
		res.Status, res.Why = report.Warn, fmt.Sprintf("no answer (%s) while the store was down; nothing was done", answerText(a))
	default:
		res.Status, res.Why = report.Warn, fmt.Sprintf("answered %s, not %d; nothing was done", answerText(a), want)
	}
	return res, nil
}
