package keycheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

// checkMethods sends each other mutating route (--also: PATCH, DELETE…)
// twice with one key: the second must get the first's stored answer and
// change nothing. {id} in a route is the id of the first answer.
func (r *runner) checkMethods(ctx context.Context) (*report.KeyCheckResult, error) {
	res := &report.KeyCheckResult{Sent: fmt.Sprintf("each of %d other routes twice with one key", len(r.o.Also)),
		Expected: "per route: the stored answer for the second; effect +0 from it"}
	var paths []string
	for _, rt := range r.o.Also {
		paths = append(paths, rt.Path)
	}
	if err := r.freshID(ctx, nameMethods, paths...); err != nil {
		return res, err
	}
	var obs []string
	res.Status = report.Pass
	worse := func(s report.Status, why string) {
		if rank(s) > rank(res.Status) {
			res.Status, res.Why = s, why
		}
	}
	for _, rt := range r.o.Also {
		path := r.expandID(rt.Path)
		what := rt.Method + " " + path
		if strings.Contains(rt.Path, "{id}") && path == rt.Path {
			worse(report.Inconclusive, fmt.Sprintf("%s: the first answer has no %s to fill {id} with; give %s", rt.Method+" "+rt.Path, r.o.IDPath, r.name(InputIDPath)))
			continue
		}
		from, err := r.before(ctx, nameMethods)
		if err != nil {
			return res, err
		}
		nonce := newNonce()
		m := r.build(req{method: rt.Method, target: path, body: rt.Body, key: r.newKey(nonce), nonce: nonce})
		a1, err := r.send(ctx, nameMethods, m, replay.SendOptions{})
		if err != nil {
			return res, err
		}
		mid, err := r.after(ctx, nameMethods, "after the first "+what, from, false)
		if err != nil {
			return res, err
		}
		a2, err := r.send(ctx, nameMethods, m, replay.SendOptions{})
		if err != nil {
			return res, err
		}
		to, err := r.after(ctx, nameMethods, "after the second "+what, mid, false)
		if err != nil {
			return res, err
		}
		e1, e2 := r.effectOf(from, mid), r.effectOf(mid, to)
		obs = append(obs, fmt.Sprintf("%s: %s (%s), then %s (%s)", what, answerText(a1), short(e1), answerText(a2), short(e2)))
		switch {
		case !is2xx(a1):
			worse(report.Inconclusive, fmt.Sprintf("%s answered %s: not judged", what, answerText(a1)))
		case !e2.none():
			worse(report.Fail, fmt.Sprintf("%s sent twice with one key changed the probes twice (%s, then %s): the key is not honoured on %s", what, short(e1), short(e2), rt.Method))
		case !sameAnswer(a1, a2):
			worse(report.Fail, fmt.Sprintf("%s sent twice with one key answered %s, then %s: not the stored answer", what, answerText(a1), answerText(a2)))
		case e1.none():
			r.note("methods: the probes saw no effect of %s; it was judged by its answers", what)
		}
	}
	res.Attempts = r.copies[nameMethods]
	res.Observed = strings.Join(obs, "; ")
	return res, nil
}

// short is an effect without its deltas when there is none.
func short(e effect) string {
	if e.none() {
		return "+0"
	}
	return e.String()
}

func rank(s report.Status) int {
	switch s {
	case report.Fail:
		return 3
	case report.Inconclusive:
		return 2
	case report.Warn:
		return 1
	}
	return 0
}

// expandID fills {id} with the id of the first answer (or of the fresh
// operation freshID made).
func (r *runner) expandID(path string) string {
	if !strings.Contains(path, "{id}") || r.first == nil {
		return path
	}
	a := r.first.a
	if r.idFrom != nil {
		a = *r.idFrom
	}
	id := idOf(a.ResponseBody, r.o.IDPath)
	if id == "" {
		return path
	}
	return strings.ReplaceAll(path, "{id}", id)
}

// freshID, when a reset ran since the id that fills {id} was taken and one
// of paths holds {id}, sends the body once more with a fresh key (for
// check), so that {id} names what exists now: the reset may have removed
// the first operation's resource.
func (r *runner) freshID(ctx context.Context, check string, paths ...string) error {
	if !r.idStale || !slices.ContainsFunc(paths, func(p string) bool { return strings.Contains(p, "{id}") }) {
		return nil
	}
	nonce := newNonce()
	a, err := r.send(ctx, check, r.build(req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce}), replay.SendOptions{})
	if err != nil {
		return err
	}
	r.idStale = false
	if is2xx(a) && idOf(a.ResponseBody, r.o.IDPath) != "" {
		r.idFrom = &a
	}
	return nil
}
