package keycheck

import (
	"context"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// checkNoKey sends the body twice without a key: without a key there is
// nothing to deduplicate by, so both run (2E). An API that deduplicates
// by body is reported plainly (info): clients sending the same message
// twice on purpose lose the second. An API that requires the key (a 4xx
// without one) is reported as such.
func (r *runner) checkNoKey(ctx context.Context) (*report.KeyCheckResult, error) {
	res := &report.KeyCheckResult{Sent: "the body twice without a key", Expected: "both processed: 2xx twice, effect 2E"}
	from, err := r.before(ctx, nameNoKey)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	m := r.build(req{body: r.o.Body, nonce: nonce})
	a1, err := r.send(ctx, nameNoKey, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	a2, err := r.send(ctx, nameNoKey, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	to, err := r.after(ctx, nameNoKey, "after", from, is2xx(a1))
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("%s, %s; effect %s", answerText(a1), answerText(a2), e)
	switch {
	case !is2xx(a1) && a1.Status >= 400 && a1.Status < 500 && e.none():
		res.Status, res.Why = report.Info, fmt.Sprintf("the API requires the key: a request without one answered %d", a1.Status)
	case is2xx(a1) && is2xx(a2) && e.is(2):
		res.Status = report.Pass
	case is2xx(a1) && e.is(1):
		res.Status, res.Why = report.Info, fmt.Sprintf("the API deduplicates by body without a key: the second identical request changed nothing (%s)", answerText(a2))
	case e.more(2):
		res.Status, res.Why = report.Fail, fmt.Sprintf("two requests without a key did more than two operations' work (effect %s)", e)
	default:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("requests without a key answered %s, %s with effect %s", answerText(a1), answerText(a2), e)
	}
	return res, nil
}
