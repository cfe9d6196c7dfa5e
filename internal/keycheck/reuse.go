package keycheck

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// The reuse checks send the body with a fresh key, then another request
// with the same key: the API must compare the request with the one the key
// was first used for (its fingerprint: method, path, query, body — for
// JSON, whitespace included) and refuse it with the profile's reuse
// status, changing nothing. Getting the stored 2xx means there is no
// fingerprint; a new operation means the key was ignored.

// variant is the other request a reuse check sends with the key.
type variant struct {
	desc string
	q    req
	// skip, when set, says why the check cannot run.
	skip string
}

func (r *runner) checkReuseBody(ctx context.Context) (*report.KeyCheckResult, error) {
	return r.reuse(ctx, nameReuseBody, func(q req) variant {
		q.body = otherBody(q.body)
		return variant{desc: "another body", q: q}
	})
}

func (r *runner) checkReuseWhitespace(ctx context.Context) (*report.KeyCheckResult, error) {
	return r.reuse(ctx, nameReuseWhitespace, func(q req) variant {
		t := bytes.TrimSpace(q.body)
		if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
			return variant{skip: "skip: the body is not a JSON object or array"}
		}
		i := bytes.IndexAny(q.body, "{[")
		ws := append(append(append([]byte{}, q.body[:i+1]...), ' '), q.body[i+1:]...)
		q.body = ws
		return variant{desc: "the same JSON with an extra space", q: q}
	})
}

func (r *runner) checkReuseQuery(ctx context.Context) (*report.KeyCheckResult, error) {
	return r.reuse(ctx, nameReuseQuery, func(q req) variant {
		sep := "?"
		if strings.Contains(r.path, "?") {
			sep = "&"
		}
		q.target = r.path + sep + "hookreplay_reuse=1"
		return variant{desc: "an extra query parameter (" + sep + "hookreplay_reuse=1)", q: q}
	})
}

func (r *runner) checkReuseMethod(ctx context.Context) (*report.KeyCheckResult, error) {
	return r.reuse(ctx, nameReuseMethod, func(q req) variant {
		q.method = "PUT"
		if r.o.Method != "POST" {
			q.method = "POST"
		}
		return variant{desc: "method " + q.method, q: q}
	})
}

// fingerprintPart is the part of a request (Profile.OpenFingerprint) each
// reuse check changes beyond the body.
var fingerprintPart = map[string]string{nameReuseWhitespace: "whitespace", nameReuseQuery: "query", nameReuseMethod: "method"}

var partWords = map[string]string{"whitespace": "JSON whitespace (it compares the parsed body)", "query": "query", "method": "method"}

// otherBody changes a body as little as it can, so that an API that
// validates before it looks up the key still accepts its shape: a body with
// {{nonce}} gets one more character there (free text by construction); else
// a JSON object gets one more member, anything else one more byte.
func otherBody(b []byte) []byte {
	if bytes.Contains(b, []byte(NoncePlaceholder)) {
		return bytes.Replace(b, []byte(NoncePlaceholder), []byte(NoncePlaceholder+"x"), 1)
	}
	t := bytes.TrimSpace(b)
	if len(t) > 1 && t[0] == '{' {
		rest := bytes.TrimSpace(t[1:])
		sep := ","
		if len(rest) > 0 && rest[0] == '}' {
			sep = ""
		}
		return append([]byte(`{"hookreplay_reuse":1`+sep), t[1:]...)
	}
	return append(append([]byte{}, b...), 'x')
}

func (r *runner) reuse(ctx context.Context, name string, mk func(req) variant) (*report.KeyCheckResult, error) {
	p := r.o.Profile
	nonce := newNonce()
	base := req{body: r.o.Body, key: r.newKey(nonce), nonce: nonce}
	v := mk(base)
	if v.skip != "" {
		return &report.KeyCheckResult{Status: report.Skip, Why: v.skip}, nil
	}
	res := &report.KeyCheckResult{Sent: "the body with a fresh key, then " + v.desc + " with the same key",
		Expected: fmt.Sprintf("%d (reuse) for the second; effect +0 from it", p.ReuseStatus)}
	// A profile that compares parsed parameters sees the same request.
	same := name == nameReuseWhitespace && !p.WhitespaceIsReuse
	if same {
		res.Expected = "the stored answer for the second (the same parameters); effect +0 from it"
	}
	part := fingerprintPart[name]
	open := part != "" && slices.Contains(p.OpenFingerprint, part)
	if open {
		res.Expected = fmt.Sprintf("%d (reuse) for the second, or (the server's choice) the stored answer", p.ReuseStatus)
		if part != "whitespace" {
			res.Expected += " or a new operation (keys per method and URL)"
		}
	}
	from, err := r.before(ctx, name)
	if err != nil {
		return res, err
	}
	a1, err := r.send(ctx, name, r.build(base), replay.SendOptions{})
	if err != nil {
		return res, err
	}
	mid, err := r.after(ctx, name, "after the first", from, true)
	if err != nil {
		return res, err
	}
	a2, err := r.send(ctx, name, r.build(v.q), replay.SendOptions{})
	if err != nil {
		return res, err
	}
	res.Attempts = 2
	to, err := r.after(ctx, name, "after", mid, false)
	if err != nil {
		return res, err
	}
	e := r.effectOf(mid, to)
	res.Effect = e.String()
	res.Observed = fmt.Sprintf("%s, then %s; effect %s", answerText(a1), answerText(a2), e)
	switch {
	case !is2xx(a1):
		res.Status, res.Why = report.Inconclusive, fmt.Sprintf("the first request answered %s", answerText(a1))
	case open && is2xx(a2) && sameAnswer(a1, a2) && e.none():
		res.Status, res.Why = report.Info, fmt.Sprintf("%s got the stored answer: the API's fingerprint leaves out the %s, which %s leaves to the server", v.desc, partWords[part], p.title())
	case open && part != "whitespace" && is2xx(a2) && e.is(1):
		res.Status, res.Why = report.Info, fmt.Sprintf("%s ran as a new operation (%s%s): the API keys by method and URL as well, which %s leaves to the server; a client that changes the %s on a retry does the work twice", v.desc, answerText(a2), r.idText(a2), p.title(), part)
	case same && a2.Status == p.ReuseStatus && e.none():
		res.Status, res.Why = report.Warn, fmt.Sprintf("%s answered %d (reuse): stricter than %s, which compares the parameters", v.desc, a2.Status, p.title())
	case same:
		res.Status, res.Why = r.judgeReplays(a1, []store.Attempt{a2}, e, v.desc)
	case is2xx(a2) && sameAnswer(a1, a2):
		res.Status, res.Why = report.Fail, fmt.Sprintf("no fingerprint: %s got the stored answer (%s)", v.desc, answerText(a2))
	case !e.none():
		res.Status, res.Why = report.Fail, fmt.Sprintf("no fingerprint: %s with a used key was run as a new operation (effect %s, %s%s)", v.desc, e, answerText(a2), r.idText(a2))
	case is2xx(a2):
		res.Status, res.Why = report.Fail, fmt.Sprintf("%s with a used key answered %s: a client reusing a key by mistake is not told", v.desc, answerText(a2))
	case a2.Status == p.ReuseStatus:
		res.Status = report.Pass
		if why := p.errorShape(a2.ResponseHeaders.Get("Content-Type")); why != "" {
			res.Status, res.Why = report.Warn, why
		}
	case name == nameReuseMethod && (a2.Status == 404 || a2.Status == 405):
		res.Status, res.Why = report.Info, fmt.Sprintf("%s answered %d: the API has no such route here, so the key was never looked at", v.desc, a2.Status)
	case a2.Status == p.InFlightStatus:
		res.Status, res.Why = report.Warn, fmt.Sprintf("%s answered %d, the in-flight status, not %d (reuse)", v.desc, a2.Status, p.ReuseStatus)
		if s := p.styleOf(sitReuse, a2.Status); s != "" {
			res.Why = s
		}
	case a2.Status >= 400 && a2.Status < 500:
		res.Status, res.Why = report.Warn, fmt.Sprintf("%s answered %d, not %d (reuse)", v.desc, a2.Status, p.ReuseStatus)
		if s := p.styleOf(sitReuse, a2.Status); s != "" {
			res.Why = s
		}
	default:
		res.Status, res.Why = report.Fail, fmt.Sprintf("%s with a used key answered %s, not %d (reuse)", v.desc, answerText(a2), p.ReuseStatus)
	}
	return res, nil
}
