package keycheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkKeyLength sends the body with a key one character over the
// profile's maximum: the API must refuse it with the profile's status and
// do nothing. What makes a long key dangerous is an API that accepts it
// but cannot keep it whole — a column that cuts it, so two keys that
// differ only at the end are one key. So an accepted key is sent again
// (it must get the stored answer) and then with its last character
// changed (another key: it must run): kept whole, a longer maximum than
// the profile's is a warn; cut or not honoured is a fail. A refusal with
// another status than the profile's is a warn too (nothing was done);
// Fiber's middleware, for one, answers every key that is not 36
// characters long with a 500.
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
	m := r.build(req{body: r.o.Body, key: key, nonce: nonce})
	a, err := r.send(ctx, nameKeyLength, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 1
	to, err := r.after(ctx, nameKeyLength, "after", from, is2xx(a))
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("%s%s; effect %s", answerText(a), excerptIf(excerptBytes(a)), e)
	switch {
	case is2xx(a) && e.is(1):
		return r.longKeyKept(ctx, res, m, a, from, to, n)
	case is2xx(a) || !e.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("a key of %d characters (over the maximum %d) was accepted (%s, effect %s): the API cannot honour a key it does not keep whole", n, p.MaxKeyLength, answerText(a), e)
	case a.Status == p.KeyTooLongStatus:
		res.Status = report.Pass
	case a.Status >= 400 && a.Status < 500:
		res.Status, res.Why = report.Warn, fmt.Sprintf("a key of %d characters answered %d, not %d", n, a.Status, p.KeyTooLongStatus)
		if s := p.styleOf(sitTooLong, a.Status); s != "" {
			res.Why = s
		}
	case a.Status >= 500:
		res.Status, res.Why = report.Warn, fmt.Sprintf("a key of %d characters was refused with %d, not %d: nothing was done, but a 5xx tells the client to retry the same key, where a 4xx says the key is wrong", n, a.Status, p.KeyTooLongStatus)
	default:
		res.Status, res.Why = report.Fail, fmt.Sprintf("a key of %d characters answered %s, not %d", n, answerText(a), p.KeyTooLongStatus)
	}
	return res, nil
}

// longKeyKept judges a key over the maximum that the API accepted and ran
// once: m again must get the stored answer, and m with the key's last
// character changed must run as the other key it is.
func (r *runner) longKeyKept(ctx context.Context, res *report.KeyCheckResult, m *message.Request, a store.Attempt, start, from reading, n int) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	key := m.Headers.Get(r.o.KeyHeader)
	last := byte('0')
	if key[len(key)-1] == '0' {
		last = '1'
	}
	other := *m
	other.Headers = m.Headers.Clone().Set(r.o.KeyHeader, key[:len(key)-1]+string(last))
	again, err := r.send(ctx, nameKeyLength, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	mid, err := r.after(ctx, nameKeyLength, "after the same long key", from, false)
	if err != nil {
		return res, err
	}
	b, err := r.send(ctx, nameKeyLength, &other, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 3
	to, err := r.after(ctx, nameKeyLength, "after the long key changed at its end", mid, true)
	if err != nil {
		return res, err
	}
	e1, e2 := r.effectOf(from, mid), r.effectOf(mid, to)
	res.Effect = r.effectOf(start, to).String()
	res.Sent += ", the same again, then with its last character changed"
	res.Observed = fmt.Sprintf("%s%s, the same key %s (effect %s), the key changed at its end %s%s (effect %s)",
		answerText(a), r.idText(a), answerText(again), short(e1), answerText(b), r.idText(b), short(e2))
	switch {
	case !e1.none():
		hint := ""
		if e1.exact && e1.is(1) {
			// Every key may be ignored: a key in the wrong header.
			if hint, err = r.keyIgnored(ctx, nameKeyLength); err != nil {
				return res, err
			}
		}
		res.Status, res.Why = report.Fail, fmt.Sprintf("a key of %d characters (over the maximum %d) was accepted but not honoured: the same request with it ran again (effect %s)%s", n, p.MaxKeyLength, e1, hint)
	case e2.none() && is2xx(b) && idOf(b.ResponseBody, r.o.IDPath) == idOf(a.ResponseBody, r.o.IDPath):
		res.Status, res.Why = report.Fail, fmt.Sprintf("keys are cut: a key of %d characters was accepted, and another that differs from it only in its last character got its stored answer%s — two clients' keys can be one", n, r.idText(b))
	case is2xx(b) && e2.is(1) && r.storedAnswer(a, again):
		res.Status, res.Why = report.Warn, fmt.Sprintf("a key of %d characters was accepted and kept whole (the same key got the stored answer, one differing in its last character ran): a longer maximum than %d; %s says %d", n, p.MaxKeyLength, p.title(), p.KeyTooLongStatus)
	case is2xx(b) && e2.is(1):
		res.Status, res.Why = report.Fail, fmt.Sprintf("a key of %d characters (over the maximum %d) was accepted, but the same request with it again answered %s, not the stored answer %s: a client retrying with that key gets no result", n, p.MaxKeyLength, answerText(again), answerText(a))
	default:
		res.Status, res.Why = report.Fail, fmt.Sprintf("a key of %d characters (over the maximum %d) was accepted (%s); a key differing from it in its last character answered %s with effect %s", n, p.MaxKeyLength, answerText(a), answerText(b), e2)
	}
	return res, nil
}

// excerptBytes is the body of a non-2xx answer, for a report line.
func excerptBytes(a store.Attempt) []byte {
	if is2xx(a) {
		return nil
	}
	return a.ResponseBody
}

// storedAnswer: b is the stored answer to a — byte-equal, or a 2xx with
// a's id, or a's status marked as a replay.
func (r *runner) storedAnswer(a, b store.Attempt) bool {
	if sameAnswer(a, b) {
		return true
	}
	if a.Status != b.Status {
		return false
	}
	if id := idOf(a.ResponseBody, r.o.IDPath); id != "" && id == idOf(b.ResponseBody, r.o.IDPath) {
		return true
	}
	return r.replayMark(b) != "" && r.replayMark(a) == ""
}
