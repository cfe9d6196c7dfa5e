package keycheck

import (
	"context"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkSafeGet sends a GET with a key, the body (an operation that changes
// what the GET shows) with a fresh key, the GET with the first key again,
// then the GET without a key: GET is safe, so the header is ignored — both
// keyed GETs answer 2xx, neither is marked a replay, the key used twice is
// no conflict, and the second keyed GET shows what the keyless one shows.
// A middleware mounted on every route stores the first GET's answer and
// replays it, unmarked: only the keyless GET after it shows the state the
// operation changed.
func (r *runner) checkSafeGet(ctx context.Context) (*report.KeyCheckResult, error) {
	path := r.o.GetPath
	if path == "" {
		path = r.path
	}
	if err := r.freshID(ctx, nameSafeGet, path); err != nil {
		return nil, err
	}
	path = r.expandID(path)
	res := &report.KeyCheckResult{Sent: "GET " + path + " with a key, the body with a fresh key, the GET with the first key again, then without a key",
		Expected: "2xx for each GET; no replay header, no conflict; the second keyed GET shows what the keyless one does"}
	nonce := newNonce()
	m := r.build(req{method: "GET", target: path, key: r.newKey(nonce), nonce: nonce})
	a1, err := r.send(ctx, nameSafeGet, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	var op store.Attempt
	if is2xx(a1) {
		on := newNonce()
		if op, err = r.send(ctx, nameSafeGet, r.build(req{body: r.o.Body, key: r.newKey(on), nonce: on}), replay.SendOptions{}); err != nil {
			return res, err
		}
	}
	a2, err := r.send(ctx, nameSafeGet, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 3
	res.Observed = fmt.Sprintf("%s, the body %s, the same key %s", answerText(a1), answerText(op), answerText(a2))
	p := r.o.Profile
	replayed := func() string {
		for _, h := range []string{p.ReplayHeader, Bird.ReplayHeader, Stripe.ReplayHeader} {
			if h != "" && a2.ResponseHeaders.Get(h) != "" {
				return h + ": " + a2.ResponseHeaders.Get(h)
			}
		}
		return ""
	}()
	switch {
	case (a1.Status == 404 || a1.Status == 405) && r.o.GetPath == "":
		res.Attempts = 1
		res.Observed = answerText(a1)
		res.Status, res.Why = report.Skip, fmt.Sprintf("skip: GET %s answered %d; give %s PATH, a route that answers GET", path, a1.Status, r.name(InputGetPath))
	case !is2xx(a1):
		res.Attempts = 1
		res.Observed = answerText(a1)
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("GET %s answered %s", path, answerText(a1))
	case a2.Status == p.ReuseStatus || a2.Status == p.InFlightStatus:
		res.Status, res.Why = report.Fail, fmt.Sprintf("the second GET with the same key answered %d: GET must ignore the key", a2.Status)
	case replayed != "":
		res.Status, res.Why = report.Fail, fmt.Sprintf("the second GET with the same key was answered as a replay (%s): GET must ignore the key", replayed)
	case !is2xx(a2):
		res.Status, res.Why = report.Fail, fmt.Sprintf("GET %s answered %s, then %s with the same key: GET must ignore the key", path, answerText(a1), answerText(a2))
	case !sameAnswer(a1, a2):
		res.Status = report.Pass // it shows a fresh answer
	default:
		return r.safeGetStale(ctx, res, m, a1, op)
	}
	return res, nil
}

// safeGetStale judges a second keyed GET (m) that answered exactly as the
// first, a1, although the operation op ran between them: a GET without a
// key tells a stored answer from a state the operation did not change.
func (r *runner) safeGetStale(ctx context.Context, res *report.KeyCheckResult, m *message.Request, a1, op store.Attempt) (*report.KeyCheckResult, error) {
	bare := *m
	bare.Headers = m.Headers.Clone().Del(r.o.KeyHeader)
	a3, err := r.send(ctx, nameSafeGet, &bare, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 4
	res.Observed += fmt.Sprintf(" (the first GET's body), without a key %s", answerText(a3))
	if is2xx(a3) && !sameAnswer(a1, a3) {
		// The keyless GET shows the change. The keyed one again tells a
		// stored answer (still the first's) from an operation whose effect
		// became visible only just now (eventual consistency).
		a4, err := r.send(ctx, nameSafeGet, m, replay.SendOptions{})
		if err != nil {
			return res, err
		}
		res.Attempts = 5
		res.Observed += fmt.Sprintf(" %s, the same key again %s", bodyExcerpt(a3.ResponseBody), answerText(a4))
		if !sameAnswer(a1, a4) {
			res.Observed += " (the change)"
			res.Status = report.Pass
			return res, nil
		}
		res.Observed += " (the first GET's body)"
	}
	switch {
	case is2xx(a3) && !sameAnswer(a1, a3):
		res.Status, res.Why = report.Fail, fmt.Sprintf("the GETs with the same key got the first GET's answer %s, unmarked, while a GET without a key between them answered %s: "+
			"the GET's answer was stored under the key and replayed, so a client polling with a key never sees the change (the middleware runs on every route; GET must ignore the key)",
			bodyExcerpt(a1.ResponseBody), bodyExcerpt(a3.ResponseBody))
	case is2xx(a3):
		res.Status = report.Pass
		res.Observed += " (the same body)"
		if is2xx(op) {
			res.Why = "the body's operation did not change what GET " + m.Target + " shows, so a stored GET answer could not be told from a fresh one; give " + r.name(InputGetPath) + " a route that lists what the body creates"
		}
	default:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("GET %s without a key answered %s", m.Target, answerText(a3))
	}
	return res, nil
}
