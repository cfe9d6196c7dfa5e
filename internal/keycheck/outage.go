package keycheck

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// OutageTimeout bounds the wait for the answer to the request sent while
// the idempotency store is down (or the run's timeout, when shorter): an
// API whose store client queues commands while it reconnects holds the
// request, and the full timeout would only add to the run. A correct API
// refuses at once.
const OutageTimeout = 10 * time.Second

// checkOutage stops the idempotency store (the store-down command), sends
// the body with a fresh key, reads the probes, and starts the store again
// (the store-up command, also when sending failed): an API that cannot
// record the key must refuse before doing anything (503), or a retry would
// run twice. Work that appears only once the store is back was held, not
// done without the store: the same request is sent again then, to see
// whether its key was recorded.
func (r *runner) checkOutage(ctx context.Context) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	want := p.OutageStatus
	if want == 0 {
		want = 503
	}
	res := &report.KeyCheckResult{Sent: "the body with a fresh key while the idempotency store is down",
		Expected: fmt.Sprintf("%d before doing anything; effect +0", want)}
	from, err := r.before(ctx, nameOutage)
	if err != nil {
		return res, err
	}
	if err := r.shell(ctx, r.o.StoreDownCmd); err != nil {
		return res, setupf("store-down command: %v", err)
	}
	nonce := newNonce()
	m := r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce})
	bound := min(r.o.Timeout, OutageTimeout)
	sentAt := time.Now()
	a, err := r.sendWithin(ctx, nameOutage, m, bound)
	waited := time.Since(sentAt)
	var during reading
	if err == nil {
		if !answered(a) && r.apiGone() {
			return r.outageDied(ctx, res, a, true)
		}
		during, err = r.after(ctx, nameOutage, "while the store was down", from, false)
		if err != nil && ctx.Err() == nil && r.apiGone() {
			return r.outageDied(ctx, res, a, true)
		}
	}
	if err := r.shell(context.WithoutCancel(ctx), r.o.StoreUpCmd); err != nil {
		return res, setupf("store-up command: %v", err)
	}
	if err != nil {
		return res, err
	}
	res.Attempts = 1
	to, err := r.after(ctx, nameOutage, "after the store came back", during, false)
	if err != nil && ctx.Err() == nil && r.apiGone() {
		return r.outageDied(ctx, res, a, false)
	}
	if err != nil {
		return res, err
	}
	e1, e2 := r.effectOf(from, during), r.effectOf(during, to)
	res.Effect = r.effectOf(from, to).String()
	res.Observed = fmt.Sprintf("%s%s; effect %s while the store was down, %s after it came back", answerText(a), timedOut(a, waited, bound), short(e1), short(e2))
	switch {
	case !e1.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("the API did the work without its idempotency store (%s, effect %s while it was down): a retry of this request would run again", answerText(a), e1)
	case !e2.none():
		return r.outageHeld(ctx, res, m, a, to, e2)
	case is2xx(a):
		res.Status, res.Why = report.Fail, fmt.Sprintf("the API answered %s without its idempotency store, and did nothing", answerText(a))
	case a.Status == want:
		res.Status = report.Pass
	case a.Status >= 500:
		res.Status, res.Why = report.Warn, fmt.Sprintf("answered %d, not %d: nothing was done, but a client cannot tell this from a failed operation", a.Status, want)
	case !answered(a):
		res.Status, res.Why = report.Warn, fmt.Sprintf("%s while the store was down, not %d; nothing was done", answerText(a), want)
	default:
		res.Status, res.Why = report.Warn, fmt.Sprintf("answered %s, not %d; nothing was done", answerText(a), want)
	}
	return res, nil
}

// outageHeld judges a request sent while the store was down (m, answered
// a) whose work appeared only after the store came back (e): the API held
// it. The same request again tells whether its key was recorded then.
func (r *runner) outageHeld(ctx context.Context, res *report.KeyCheckResult, m *message.Request, a store.Attempt, from reading, e effect) (*report.KeyCheckResult, error) {
	a2, err := r.send(ctx, nameOutage, m, replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	res.Sent += ", then the same request once it was back"
	to, err := r.after(ctx, nameOutage, "after the retry", from, false)
	if err != nil {
		return res, err
	}
	e3 := r.effectOf(from, to)
	res.Observed += fmt.Sprintf("; the retry %s%s, effect %s", answerText(a2), r.idText(a2), short(e3))
	held := fmt.Sprintf("the API held the request while its store was down — it got %s — and did the work only once the store came back (effect %s)", answerText(a), e)
	if !e3.none() {
		res.Status, res.Why = report.Fail, held+fmt.Sprintf(", without recording its key: the retry with the same key ran again (effect %s)", e3)
		return res, nil
	}
	res.Status, res.Why = report.Warn, held+fmt.Sprintf(": the retry with the same key then got %s and ran nothing, but the first request got %s for work that was done", answerText(a2), answerText(a))
	return res, nil
}

// timedOut says that a got no answer within bound, when it waited that
// long in vain.
func timedOut(a store.Attempt, waited, bound time.Duration) string {
	if answered(a) || waited < bound-bound/20 {
		return ""
	}
	return fmt.Sprintf(" after %s, the longest keycheck waits while the store is down", bound)
}

// comeBackTimeout bounds the wait for an API that stopped answering during
// the outage to accept connections again once its store is back (or the
// run's timeout, when shorter).
const comeBackTimeout = 10 * time.Second

// outageDied judges an API that stopped accepting connections while its
// idempotency store was down (a is what the request got; storeDown: the
// store is still down): its process died with the store, as one whose Redis client has no error listener does. The store
// is started again; the API may come back by itself (a supervisor), else
// the command that started it (serve) starts it again, else the checks
// after this one cannot run. The probes are read again only from an API
// that answers: one served by the dead process cannot be.
func (r *runner) outageDied(ctx context.Context, res *report.KeyCheckResult, a store.Attempt, storeDown bool) (*report.KeyCheckResult, error) {
	if storeDown {
		if err := r.shell(context.WithoutCancel(ctx), r.o.StoreUpCmd); err != nil {
			return res, setupf("store-up command: %v", err)
		}
	}
	res.Attempts = 1
	upAt := time.Now()
	back := ""
	wait := min(comeBackTimeout, r.o.Timeout)
	if r.o.Serve != nil && !r.o.Serve.Running() {
		wait = 0 // its process is gone: nothing brings it back by itself
	}
	for deadline := upAt.Add(wait); ; time.Sleep(20 * time.Millisecond) {
		if r.apiListening() {
			back = fmt.Sprintf("it accepted connections again %s after the store came back", time.Since(upAt).Round(10*time.Millisecond))
			break
		}
		if !time.Now().Before(deadline) {
			break
		}
	}
	if back == "" && r.o.Serve != nil {
		r.o.Serve.Stop()
		if err := r.o.Serve.Start(ctx); err != nil {
			return res, &SetupError{Err: fmt.Errorf("outage: starting the API again: %w", err)}
		}
		back = "it did not come back by itself; the command that started it started it again"
	}
	res.Observed = fmt.Sprintf("%s; the API stopped accepting connections while its store was down; %s", answerText(a), orText(back, fmt.Sprintf("it did not accept connections again within %s after the store came back", wait)))
	res.Status = report.Fail
	res.Why = "the API stopped answering when its idempotency store went away: its process died with the store (a store client whose connection errors are not handled ends the process, as a Redis client without an error listener does), " +
		"so every request in flight is lost and none is answered until it is restarted — handle the store's errors and answer 503 (if the store-down command stops the API itself, that is the cause)"
	if back == "" {
		res.Observed += "; the probes were not read again"
		if served := r.probesServedByAPI(); len(served) > 0 {
			res.Observed += fmt.Sprintf(" (probe %s: served by the API itself, which is down)", strings.Join(served, ", "))
		}
		r.gone = "the API stopped answering in outage and did not come back"
		r.gen++
		return res, nil
	}
	r.gen++
	if _, err := probe.ReadAll(ctx, r.o.Probes); err != nil {
		res.Observed += "; the probes could not be read afterwards: " + err.Error()
	}
	return res, nil
}

// apiGone reports whether the API's address stops accepting connections
// within half a second: a process that is exiting has closed the
// connections it served a moment before its listening socket.
func (r *runner) apiGone() bool {
	for deadline := time.Now().Add(500 * time.Millisecond); ; time.Sleep(20 * time.Millisecond) {
		if !r.apiListening() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
	}
}

// apiListening reports whether the API's address accepts connections.
func (r *runner) apiListening() bool {
	host := replay.DialAddr(r.target.URL)
	c, err := net.DialTimeout("tcp", host, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func orText(s, alt string) string {
	if s != "" {
		return s
	}
	return alt
}

// probesServedByAPI names the probes whose definition names the API's
// address (an HTTP probe of its own debug route): a dead API takes them
// with it.
func (r *runner) probesServedByAPI() []string {
	var out []string
	for i, p := range r.o.Probes {
		def := p.Name()
		if i < len(r.o.ProbeDefs) {
			def = r.o.ProbeDefs[i]
		}
		if strings.Contains(def, "//"+r.target.URL.Host+"/") || strings.HasSuffix(def, "//"+r.target.URL.Host) {
			out = append(out, p.Name())
		}
	}
	return out
}
