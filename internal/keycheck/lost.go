package keycheck

import (
	"context"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkLost sends the body with a fresh key and hangs up once the answer
// reaches the socket (replay's lost answer: the API did the work, the
// client never saw the result), then retries twice: the operation must
// have run once (E) and the retries get one stored answer. A retry that
// meets the in-flight status (the API still finishing the lost request)
// is sent again a little later.
func (r *runner) checkLost(ctx context.Context) (*report.KeyCheckResult, error) {
	res := &report.KeyCheckResult{Sent: "the body with a fresh key, its answer lost (connection closed), then the same request twice",
		Expected: "effect E once; the retries get the stored 2xx answer"}
	from, err := r.before(ctx, nameLost)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	m := r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce})
	lost, err := r.send(ctx, nameLost, m, replay.SendOptions{Lose: true})
	if err != nil {
		return res, err
	}
	if lost.Err != "" {
		return res, setupf("the request whose answer was to be lost got %s", answerText(lost))
	}
	var retries []store.Attempt
	for i := 0; len(retries) < 2 && i < 10; i++ {
		a, err := r.send(ctx, nameLost, m, replay.SendOptions{})
		if err != nil {
			return res, err
		}
		if a.Status == r.o.Profile.InFlightStatus && len(retries) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		retries = append(retries, a)
	}
	res.Attempts = r.copies[nameLost]
	to, err := r.after(ctx, nameLost, "after", from, true)
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	res.Observed = "lost, then " + answersText(retries) + "; effect " + e.String()
	switch {
	case len(retries) < 2:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the retries kept answering %d (in flight) for a second", r.o.Profile.InFlightStatus)
	case e.more(1) && e.exact && e.is(1+len(retries)):
		hint, err := r.keyIgnored(ctx, nameLost)
		if err != nil {
			return res, err
		}
		res.Status, res.Why = report.Fail, "every retry after a lost answer ran the operation again: the key is not honoured"+hint
	case e.more(1):
		res.Status, res.Why = report.Fail, "the retry after a lost answer ran the operation again: the key's result was not kept when the answer could not be delivered"
	case e.none():
		res.Status, res.Why = report.Inconclusive, "the probes saw no effect of the lost request and its retries"
	case !is2xx(retries[0]):
		res.Status, res.Why = report.Fail, fmt.Sprintf("the retry after a lost answer got %s, not the stored 2xx answer: the client cannot learn the operation's result", answerText(retries[0]))
	default:
		res.Status, res.Why = r.judgeReplays(retries[0], retries[1:], effect{}, "second retry")
	}
	return res, nil
}
