package keycheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// checkKeyLength sends the body with a key one character over the
// profile's maximum: the API must refuse it with the profile's status and
// do nothing (a key it cannot store is a key it cannot honour).
func (r *runner) checkKeyLength(ctx context.Context) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	n := p.MaxKeyLength + 1
	res := &report.KeyCheckResult{Sent: fmt.Sprintf("the body with a key of %d characters", n),
		Expected: fmt.Sprintf("%d; effect +0", p.KeyTooLongStatus)}
	from, err := r.before(ctx, nameKeyLength)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	key := strings.Repeat(strings.ReplaceAll(newUUID(), "-", ""), n/32+1)[:n]
	a, err := r.send(ctx, nameKeyLength, r.build(req{body: r.o.Body, key: key, nonce: nonce}), replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 1
	to, err := r.after(ctx, nameKeyLength, "after", from, false)
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("%s; effect %s", answerText(a), e)
	switch {
	case is2xx(a) || !e.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("a key of %d characters (over the maximum %d) was accepted (%s, effect %s): the API cannot honour a key it does not keep whole", n, p.MaxKeyLength, answerText(a), e)
	case a.Status == p.KeyTooLongStatus:
		res.Status = report.Pass
	case a.Status >= 400 && a.Status < 500:
		res.Status, res.Why = report.Warn, fmt.Sprintf("a key of %d characters answered %d, not %d", n, a.Status, p.KeyTooLongStatus)
		if s := p.styleOf(sitTooLong, a.Status); s != "" {
			res.Why = s
		}
	default:
		res.Status, res.Why = report.Fail, fmt.Sprintf("a key of %d characters answered %s, not %d", n, answerText(a), p.KeyTooLongStatus)
	}
	return res, nil
}
