package keycheck

import (
	"context"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkScope sends the body with a fresh key as the first account, then
// the same key and body as another account: keys belong to the account
// that sends them, so the second is a new operation of its own. The other
// account receiving the first's stored answer is a data leak; a conflict
// means keys are global.
func (r *runner) checkScope(ctx context.Context) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	res := &report.KeyCheckResult{Sent: "the body with a fresh key, then the same key and body from the other account",
		Expected: "the other account's request runs: 2xx with its own answer, effect E again"}
	from, err := r.before(ctx, nameScope)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	key := r.newKey(nonce)
	a1, err := r.send(ctx, nameScope, r.build(req{body: r.o.Body, key: key, nonce: nonce}), replay.SendOptions{})
	if err != nil {
		return res, err
	}
	mid, err := r.after(ctx, nameScope, "after the first account", from, true)
	if err != nil {
		return res, err
	}
	a2, err := r.send(ctx, nameScope, r.build(req{body: r.o.Body, key: key, nonce: nonce, as: r.o.OtherAccount}), replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	to, err := r.after(ctx, nameScope, "after the other account", mid, is2xx(a2))
	if err != nil {
		return res, err
	}
	e := r.effectOf(mid, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("first account %s%s, other account %s%s; effect %s", answerText(a1), r.idText(a1), answerText(a2), r.idText(a2), e)
	switch {
	case !is2xx(a1):
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the first account's request answered %s", answerText(a1))
	case is2xx(a2) && sameAnswer(a1, a2) && e.none():
		res.Status, res.Why = report.Fail, "data leak: the other account received the first account's answer — keys are not scoped per account"
	case is2xx(a2) && e.is(1):
		res.Status = report.Pass
	case (a2.Status == p.ReuseStatus || a2.Status == p.InFlightStatus || a2.Status == 409 || a2.Status == 422) && e.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("keys are not scoped per account: the other account's request with the same key was refused with %d, as if the first account's key were its own", a2.Status)
	case is2xx(a2) && e.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("the other account got 2xx%s but nothing ran: it was answered from the first account's key", r.idText(a2))
	case e.none():
		return r.scopeRefused(ctx, res, a1, a2, to)
	default:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the other account's request answered %s with effect %s", answerText(a2), e)
	}
	return res, nil
}

// scopeRefused tells apart why the other account's request with the first
// account's key was refused (a2, nothing ran): it sends the same body from
// the other account with a fresh key. Run, the refusal came from the key
// alone: another account's existing key, so keys are global. Refused too,
// the other account cannot make the request at all (its credentials, or
// the body belongs to the first account): not judged.
func (r *runner) scopeRefused(ctx context.Context, res *report.KeyCheckResult, a1, a2 store.Attempt, from reading) (*report.KeyCheckResult, error) {
	nonce := newNonce()
	a3, err := r.send(ctx, nameScope, r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce, as: r.o.OtherAccount}), replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 3
	res.Sent += ", then the body from the other account with a fresh key"
	to, err := r.after(ctx, nameScope, "after the other account's fresh key", from, is2xx(a3))
	if err != nil {
		return res, err
	}
	e3 := r.effectOf(from, to)
	res.Observed = fmt.Sprintf("first account %s%s, other account with the same key %s%s (effect +0), other account with a fresh key %s%s (effect %s)",
		answerText(a1), r.idText(a1), answerText(a2), excerptIf(excerptBytes(a2)), answerText(a3), r.idText(a3), short(e3))
	switch {
	case a2.Status == 429 || a2.Status == 503:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the other account's request with the first account's key answered %d (busy or rate limited, not a judgement of the key): run scope again on its own", a2.Status)
	case is2xx(a3) && e3.is(1):
		res.Status, res.Why = report.Fail, fmt.Sprintf("keys are not scoped per account: the other account's request was refused with %s only because the first account had used its key — "+
			"the same body from the other account with a fresh key ran (%s, effect %s), so one account's keys block another's", answerText(a2), answerText(a3), e3)
	case a3.Status == 401 || a3.Status == 403:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the other account's requests answered %s with the first account's key and %s with a fresh one: check the credentials given with %s", answerText(a2), answerText(a3), r.name(InputOtherAccount))
	default:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the other account's request answered %s with the first account's key and %s (effect %s) with a fresh one: "+
			"it cannot make this request at all, so what the key did is not known", answerText(a2), answerText(a3), e3)
	}
	return res, nil
}
