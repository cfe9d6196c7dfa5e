package keycheck

import (
	"context"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// check5xx sends the fail body (a 5xx the first time its nonce is seen)
// with a fresh key, then the same request again. A 5xx says nothing was
// done, so it must not be kept: the retry runs (2xx, effect E). Under the
// stripe profile a stored 500 is replayed instead.
func (r *runner) check5xx(ctx context.Context) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	res := &report.KeyCheckResult{Sent: "the fail body with a fresh key (a 5xx), then the same request again"}
	if p.Open5xx {
		res.Expected = "the retry runs (2xx, effect E), or the stored 5xx (the server's choice)"
	} else if p.Replays5xx {
		res.Expected = "the stored 5xx for the retry (the same status and body); effect +0"
	} else {
		res.Expected = "the retry runs: 2xx, effect E — not the stored 5xx"
	}
	from, err := r.before(ctx, name5xx)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	m := r.build(req{body: r.o.FailBody, key: r.newKey(nonce), nonce: nonce})
	a1, err := r.send(ctx, name5xx, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	a2, err := r.send(ctx, name5xx, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	to, err := r.after(ctx, name5xx, "after", from, !p.Replays5xx && is2xx(a2))
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("%s, then %s%s; effect %s", answerText(a1), answerText(a2), r.idText(a2), e)
	// kept: the retry got the stored 5xx. Byte-equal is the proof; a
	// middleware that replays through the app's error handler changes the
	// body (a fresh request id), yet marks the replay or keeps its id.
	kept, how := sameAnswer(a1, a2), ""
	if !kept && a2.Status == a1.Status {
		if m := r.replayMark(a2); m != "" && r.replayMark(a1) == "" {
			kept, how = true, fmt.Sprintf(" (the retry carries %s; its body differs in bytes)", m)
		} else if id := idOf(a1.ResponseBody, r.o.IDPath); id != "" && id == idOf(a2.ResponseBody, r.o.IDPath) {
			kept, how = true, fmt.Sprintf(" (the retry carries the first answer's %s %q)", r.o.IDPath, id)
		}
	}
	if how != "" {
		res.Observed += how
	}
	switch {
	case a1.Status < 500:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the fail body answered %s, not a 5xx: give %s that fails the first time its %s is seen", answerText(a1), r.name(InputFailBody), NoncePlaceholder)
	case e.more(1):
		res.Status, res.Why = report.Fail, fmt.Sprintf("the failed request and its retry together did more than one operation's work (effect %s): the 5xx did work it did not undo", e)
	case p.Open5xx && kept && e.none():
		res.Status, res.Why = report.Info, fmt.Sprintf("the %d was kept and replayed%s: that key can never succeed; %s leaves a 5xx to the server's documentation", a1.Status, how, p.title())
	case p.Replays5xx && kept:
		res.Status = report.Pass
	case p.Replays5xx && is2xx(a2):
		res.Status, res.Why = report.Warn, fmt.Sprintf("the retry ran again (%s); %s replays a stored 5xx", answerText(a2), p.title())
	case kept:
		res.Status, res.Why = report.Fail, fmt.Sprintf("a stored %d was replayed%s: the retry after a 5xx never runs, so a passing failure becomes permanent for that key", a1.Status, how)
	case is2xx(a2) && e.is(1):
		res.Status = report.Pass
	case is2xx(a2) && e.none():
		res.Status, res.Why = report.Inconclusive, "the retry answered 2xx but the probes saw no effect"
	case a2.Status == p.ReuseStatus || a2.Status == p.InFlightStatus:
		res.Status, res.Why = report.Fail, fmt.Sprintf("the retry after a 5xx answered %d: the failed attempt's key was kept, so the retry never runs", a2.Status)
	case a2.Status >= 500:
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the retry failed again (%s, another answer than the first): give %s that fails only the first time its %s is seen", answerText(a2), r.name(InputFailBody), NoncePlaceholder)
	default:
		res.Status, res.Why = report.Fail, fmt.Sprintf("the retry after a 5xx answered %s", answerText(a2))
	}
	return res, nil
}
