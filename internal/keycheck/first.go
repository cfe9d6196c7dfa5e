package keycheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkFirst sends the body once with a fresh key: the API must accept it
// (2xx) and the probes must change. What they change by is E, the effect
// of one operation, which every other check is judged in. A first request
// the API refuses is a setup problem (the request is wrong: credentials,
// body), never a verdict on its idempotency.
func (r *runner) checkFirst(ctx context.Context) (*report.KeyCheckResult, error) {
	res := &report.KeyCheckResult{Sent: fmt.Sprintf("%s %s with a fresh key", r.o.Method, r.path),
		Expected: "2xx; the probes change (E)"}
	from, err := r.before(ctx, nameFirst)
	if err != nil {
		return res, err
	}
	nonce := newNonce()
	key := r.newKey(nonce)
	m := r.build(req{body: r.o.Body, key: key, nonce: nonce})
	a, err := r.send(ctx, nameFirst, m, replay.SendOptions{})
	res.Attempts = 1
	if err != nil {
		return res, err
	}
	res.Observed = answerText(a)
	if !is2xx(a) {
		return res, r.firstRefused(ctx, res, a, key, nonce)
	}
	to, err := r.after(ctx, nameFirst, "after", from, true)
	if err != nil {
		return res, err
	}
	r.e = deltas(from, to)
	r.first = &sent{req: m, a: a}
	changed := false
	for _, d := range r.e {
		changed = changed || d.changed
	}
	e := r.effectOf(from, to)
	r.k.Effect = e.parts()
	if !changed {
		res.Status = report.Inconclusive
		res.Effect = "+0"
		res.Why = "the probes saw no effect of an accepted request: nothing can be proven; probe what the API changes (a row count, a counter)"
		return res, nil
	}
	if !to.lastChange.IsZero() {
		r.learn(to.lastChange.Sub(a.SentAt))
	}
	res.Status = report.Pass
	res.Effect = "+E (" + strings.Join(e.parts(), ", ") + ")"
	res.Observed = answerText(a) + r.idText(a) + "; effect E: " + strings.Join(e.parts(), ", ")
	return res, nil
}

// firstRefused is the setup error for a first request the API refused.
// Middleware that validates the key's format (Fiber's accepts 36
// characters only, and answers any other length with a 500) refuses every
// keyed request, and "fix the body" would send its user the wrong way: the
// same request without a key tells which it is.
func (r *runner) firstRefused(ctx context.Context, res *report.KeyCheckResult, a store.Attempt, key, nonce string) error {
	said := fmt.Sprintf("the first request (%s %s with a fresh key) answered %s%s", r.o.Method, r.path, answerText(a), excerptIf(a.ResponseBody))
	if answered(a) {
		b, err := r.send(ctx, nameFirst, r.build(req{body: r.o.Body, nonce: nonce}), replay.SendOptions{})
		if err != nil {
			return err
		}
		res.Attempts++
		if is2xx(b) {
			hint := "some middleware accepts UUIDs only, 36 characters: the default without " + r.name(InputKeyPattern)
			if r.o.KeyPattern == "" {
				hint = "the key sent was a UUID"
			}
			return setupf("%s, but the same request without a key answered %s: the API refused the key itself (%d characters, %s in %s); give %s a pattern it accepts (%s)",
				said, answerText(b), len(key), bodyExcerpt([]byte(key)), r.o.KeyHeader, r.name(InputKeyPattern), hint)
		}
	}
	return setupf("%s: the API did not accept it, so nothing can be judged; fix the request (%s, %s) until a fresh key succeeds",
		said, r.name(InputBody), r.name(InputHeader))
}

// excerptIf is ": BODY" for a non-empty body.
func excerptIf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return " " + bodyExcerpt(b)
}
