package keycheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
)

// knownKeyHeaders are the headers idempotency middleware reads the key
// from: the ietf draft's and Stripe's, and the X- form that Fiber's
// middleware/idempotency defaults to.
var knownKeyHeaders = []string{"Idempotency-Key", "X-Idempotency-Key"}

// keyIgnored is the diagnosis for a check in which every request with one
// key ran as a new operation: the API honoured no key in the key header.
// That is an API without idempotency, or an API that reads its key from
// another header — a setup mistake, not a finding. It sends the body twice
// with one fresh key in each other known header: an API that honours one
// of them is a setup error naming the header (exit 2, nothing judged on a
// key the API never read). Otherwise it returns the words a fail appends.
// It runs once per keycheck; only counting probes can tell one operation
// from two, so with textual ones it only words the hint.
func (r *runner) keyIgnored(ctx context.Context, check string) (string, error) {
	if r.headerTried != nil {
		return r.ignoredHint(), nil
	}
	r.headerTried = []string{}
	if !r.countingProbes() {
		return r.ignoredHint(), nil
	}
	for _, h := range knownKeyHeaders {
		if strings.EqualFold(h, r.o.KeyHeader) {
			continue
		}
		from, err := r.before(ctx, check)
		if err != nil {
			return "", err
		}
		nonce := newNonce()
		m := r.build(req{body: r.o.Body, nonce: nonce})
		m.Headers = append(m.Headers.Del(h), message.Header{Name: h, Value: r.newKey(nonce)})
		a1, err := r.send(ctx, check, m, replay.SendOptions{})
		if err != nil {
			return "", err
		}
		a2, err := r.send(ctx, check, m, replay.SendOptions{})
		if err != nil {
			return "", err
		}
		to, err := r.after(ctx, check, "after trying "+h, from, true)
		if err != nil {
			return "", err
		}
		r.headerTried = append(r.headerTried, h)
		if e := r.effectOf(from, to); is2xx(a1) && is2xx(a2) && e.exact && e.is(1) {
			return "", setupf("the API ignored the key in %s (every request with one key ran again) but honours it in %s (a request sent twice with one key there ran once): give %s %s",
				r.o.KeyHeader, h, r.name(InputKeyHeader), h)
		}
	}
	return r.ignoredHint(), nil
}

// ignoredHint is what a fail whose key was ignored adds.
func (r *runner) ignoredHint() string {
	tried := ""
	if len(r.headerTried) > 0 {
		tried = " (" + strings.Join(r.headerTried, ", ") + " was ignored too)"
	}
	return fmt.Sprintf("; if the API reads its key from a header other than %s%s, give %s NAME", r.o.KeyHeader, tried, r.name(InputKeyHeader))
}

// countingProbes: every probe reads a number, so effects can be counted.
func (r *runner) countingProbes() bool {
	for _, d := range r.e {
		if !d.num {
			return false
		}
	}
	return len(r.e) > 0
}
