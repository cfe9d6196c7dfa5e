package keycheck

import (
	"context"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// checkSafeGet sends a GET with a key, twice: GET is safe, so the header
// is ignored — both answer 2xx, neither is marked a replay, and the key
// used twice is no conflict.
func (r *runner) checkSafeGet(ctx context.Context) (*report.KeyCheckResult, error) {
	path := r.o.GetPath
	if path == "" {
		path = r.path
	}
	path = r.expandID(path)
	res := &report.KeyCheckResult{Sent: "GET " + path + " with a key, twice", Expected: "2xx twice; no replay header, no conflict"}
	nonce := newNonce()
	m := r.build(req{method: "GET", target: path, key: r.newKey(nonce), nonce: nonce})
	a1, err := r.send(ctx, nameSafeGet, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	a2, err := r.send(ctx, nameSafeGet, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	res.Observed = fmt.Sprintf("%s, %s", answerText(a1), answerText(a2))
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
		res.Status, res.Why = report.Skip, fmt.Sprintf("skip: GET %s answered %d; give %s PATH, a route that answers GET", path, a1.Status, r.name(InputGetPath))
	case is2xx(a1) && (a2.Status == p.ReuseStatus || a2.Status == p.InFlightStatus):
		res.Status, res.Why = report.Fail, fmt.Sprintf("the second GET with the same key answered %d: GET must ignore the key", a2.Status)
	case is2xx(a1) && replayed != "":
		res.Status, res.Why = report.Fail, fmt.Sprintf("the second GET with the same key was answered as a replay (%s): GET must ignore the key", replayed)
	case is2xx(a1) && is2xx(a2):
		res.Status = report.Pass
	case !is2xx(a1):
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("GET %s answered %s", path, answerText(a1))
	default:
		res.Status, res.Why = report.Fail, fmt.Sprintf("GET %s answered %s, then %s with the same key: GET must ignore the key", path, answerText(a1), answerText(a2))
	}
	return res, nil
}
