package keycheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkBurst sends --burst copies with one key, every connection opened
// and every request written but its last byte, then the last bytes
// released together (replay.Burst): the tightest overlap a client's
// retries can have. The operation must run once (E); the other copies get
// the stored answer or the in-flight status, never a second 2xx with
// another id. A check-then-insert claim passes every sequential test and
// fails only here.
//
// A passing burst is sent again with fresh keys (BurstRounds in all): one
// burst can land while the server's connection handling happens to
// serialise the copies, and a race shows in some bursts only.
func (r *runner) checkBurst(ctx context.Context) (*report.KeyCheckResult, error) {
	n := r.o.Burst
	res := &report.KeyCheckResult{Sent: fmt.Sprintf("%d copies with one key, last bytes released together (%d rounds, a fresh key each)", n, r.o.BurstRounds),
		Expected: fmt.Sprintf("effect E once per round; the other copies get the stored answer or %d (in flight), never a second 2xx with another id", r.o.Profile.InFlightStatus)}
	var all []store.Attempt
	for round := 1; round <= r.o.BurstRounds; round++ {
		if round > 1 {
			if err := r.reset(ctx, nameBurst); err != nil {
				return res, err
			}
		}
		from, err := r.before(ctx, nameBurst)
		if err != nil {
			return res, err
		}
		nonce := newNonce()
		m := r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce})
		as, err := r.burst(ctx, nameBurst, m, n)
		if err != nil {
			return res, err
		}
		all = append(all, as...)
		res.Attempts = len(all)
		to, err := r.after(ctx, nameBurst, fmt.Sprintf("after round %d", round), from, true)
		if err != nil {
			return res, err
		}
		e := r.effectOf(from, to)
		res.Effect = e.String()
		spread := replay.Spread(as)
		res.Observed = fmt.Sprintf("round %d: %s; effect %s; last bytes within %s", round, answersText(as), e, report.Duration(spread))
		status, why := r.judgeBurst(as, e)
		if status == report.Fail && e.exact && e.is(n) && !r.keyHonoured {
			hint, err := r.keyIgnored(ctx, nameBurst)
			if err != nil {
				return res, err
			}
			why += hint
		}
		if status != report.Pass || round == r.o.BurstRounds {
			res.Status, res.Why = status, why
			if status == report.Pass {
				res.Observed = fmt.Sprintf("%d rounds: %s; effect E each", round, answersText(all))
			}
			return res, nil
		}
	}
	return res, nil
}

func (r *runner) judgeBurst(as []store.Attempt, e effect) (report.Status, string) {
	var ok []store.Attempt
	others := map[string]int{}
	for _, a := range as {
		switch {
		case is2xx(a):
			ok = append(ok, a)
		case a.Status == r.o.Profile.InFlightStatus:
		default:
			others[answerText(a)]++
		}
	}
	for _, a := range ok[min(1, len(ok)):] {
		if !sameAnswer(ok[0], a) && !bytesEqual(ok[0].ResponseBody, a.ResponseBody) && !sameJSON(ok[0].ResponseBody, a.ResponseBody) {
			return report.Fail, fmt.Sprintf("two 2xx with different answers under one key%s and%s: the claim is not atomic (check-then-insert)", r.idText(ok[0]), r.idText(a))
		}
	}
	switch {
	case e.more(1):
		return report.Fail, fmt.Sprintf("effect %s from copies with one key: the operation ran more than once; the claim is not atomic (check-then-insert)", e)
	case e.none():
		return report.Inconclusive, "the probes saw no effect of the burst"
	case len(ok) == 0:
		return report.Fail, fmt.Sprintf("the operation ran (effect %s) but no copy got a 2xx answer", e)
	}
	if len(others) > 0 {
		var parts []string
		for t, c := range others {
			parts = append(parts, fmt.Sprintf("%s ×%d", t, c))
		}
		msg := "some copies got neither the stored answer nor the in-flight status: " + strings.Join(parts, ", ")
		for t := range others {
			var code int
			if _, err := fmt.Sscan(t, &code); err == nil {
				if s := r.o.Profile.styleOf(sitInFlight, code); s != "" {
					msg += " (" + s + ")"
				}
			}
		}
		return report.Warn, msg
	}
	return report.Pass, ""
}
