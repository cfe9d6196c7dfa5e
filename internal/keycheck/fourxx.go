package keycheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// check4xx sends the invalid body (a 4xx) with a fresh key, again, then the
// valid body with the same key. Contracts let a 4xx be kept or not, so
// this reports which (info); a 4xx that was kept (its repeat marked as a
// replay) must then refuse the changed body with the reuse status, and a
// changed body must never get the stored 4xx.
func (r *runner) check4xx(ctx context.Context) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	res := &report.KeyCheckResult{Sent: "the invalid body with a fresh key, again, then the valid body with the same key",
		Expected: fmt.Sprintf("kept or not (info); when kept, the valid body gets %d (reuse)", p.ReuseStatus)}
	from, err := r.before(ctx, name4xx)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	key := r.newKey(nonce)
	bad := r.build(req{body: r.o.InvalidBody, key: key, nonce: nonce})
	a1, err := r.send(ctx, name4xx, bad, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	a2, err := r.send(ctx, name4xx, bad, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	a3, err := r.send(ctx, name4xx, r.build(req{body: r.o.Body, key: key, nonce: nonce}), replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 3
	to, err := r.after(ctx, name4xx, "after", from, is2xx(a3))
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	marked := p.ReplayHeader != "" && strings.EqualFold(strings.TrimSpace(a2.ResponseHeaders.Get(p.ReplayHeader)), p.ReplayValue)
	res.Observed = fmt.Sprintf("%s, %s, then the valid body %s; effect %s", answerText(a1), answerText(a2), answerText(a3), e)
	switch {
	case a1.Status < 400 || a1.Status >= 500:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the invalid body answered %s, not a 4xx: give %s the API refuses", answerText(a1), r.name(InputInvalidBody))
	case !e.none() && !e.is(1):
		res.Status, res.Why = report.Fail, fmt.Sprintf("an invalid body, its repeat and a valid body with one key did more than one operation's work (effect %s)", e)
	case sameAnswer(a1, a3):
		res.Status, res.Why = report.Fail, fmt.Sprintf("no fingerprint: the valid body with the key got the stored %d of the invalid one", a1.Status)
	case is2xx(a3) && marked:
		res.Status, res.Why = report.Fail, fmt.Sprintf("the 4xx was kept (its repeat carried %s) yet the valid body with the same key ran: no fingerprint", p.ReplayHeader)
	case is2xx(a3):
		res.Status, res.Why = report.Info, "the 4xx was not kept: the valid body with the same key ran (effect "+e.String()+")"
	case a3.Status == p.ReuseStatus && e.none():
		res.Status, res.Why = report.Info, fmt.Sprintf("the 4xx was kept: the valid body with the same key got %d (reuse)", a3.Status)
	default:
		res.Status, res.Why = report.Info, fmt.Sprintf("the 4xx was kept: the valid body with the same key answered %s", answerText(a3))
		if s := p.styleOf(sitReuse, a3.Status); s != "" {
			res.Why += " (" + s + ")"
		}
	}
	return res, nil
}
