package keycheck

import (
	"context"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// checkExpiry sends the body with a fresh key, waits the key's time to
// live, and sends it again: the key has expired, so it is a new operation.
// Still getting the stored answer means keys are kept longer than said.
func (r *runner) checkExpiry(ctx context.Context) (*report.KeyCheckResult, error) {
	res := &report.KeyCheckResult{Sent: fmt.Sprintf("the body with a fresh key, then the same request after %s", r.o.TTL),
		Expected: "a new operation: 2xx, effect E again"}
	from, err := r.before(ctx, nameExpiry)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	m := r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce})
	a1, err := r.send(ctx, nameExpiry, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	mid, err := r.after(ctx, nameExpiry, "after the first", from, true)
	if err != nil {
		return res, err
	}
	if wait := r.o.TTL - time.Since(answeredAt(a1)); wait > 0 {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(wait):
		}
	}
	a2, err := r.send(ctx, nameExpiry, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	to, err := r.after(ctx, nameExpiry, "after", mid, is2xx(a2) && !sameAnswer(a1, a2))
	if err != nil {
		return res, err
	}
	e := r.effectOf(mid, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("%s%s, then after %s %s%s; effect %s", answerText(a1), r.idText(a1), r.o.TTL, answerText(a2), r.idText(a2), e)
	switch {
	case !is2xx(a1):
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the first request answered %s", answerText(a1))
	case is2xx(a2) && e.is(1):
		res.Status = report.Pass
	case sameAnswer(a1, a2) && e.none():
		res.Status, res.Why = report.Warn, fmt.Sprintf("still replayed after %s: keys are kept longer than that", r.o.TTL)
	default:
		res.Status, res.Why = report.Warn, fmt.Sprintf("after %s the key answered %s with effect %s, not a new operation", r.o.TTL, answerText(a2), e)
	}
	return res, nil
}
