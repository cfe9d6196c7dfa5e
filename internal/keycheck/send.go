package keycheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// NoncePlaceholder is replaced in bodies (and key patterns) by a fresh
// random token per check.
const NoncePlaceholder = "{{nonce}}"

// UUIDPlaceholder is replaced in a key pattern by a fresh UUID.
const UUIDPlaceholder = "{{uuid}}"

// newUUID is a random (version 4) UUID, 36 characters.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newNonce is a fresh token for {{nonce}}.
func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "hr" + hex.EncodeToString(b[:])
}

// newKey makes a key from the pattern (a UUID when there is none).
func (r *runner) newKey(nonce string) string {
	if r.o.KeyPattern == "" {
		return newUUID()
	}
	k := strings.ReplaceAll(r.o.KeyPattern, UUIDPlaceholder, newUUID())
	return strings.ReplaceAll(k, NoncePlaceholder, nonce)
}

// req is one request as a check wants it sent.
type req struct {
	method string
	target string // request-target ("" : the --to path)
	body   []byte
	key    string // "" : no key header
	nonce  string
	// as replaces headers of the same name (another account's credentials).
	as message.Headers
}

// build makes the request: the run's headers, the key header (or none),
// Content-Type for a body when not given, {{nonce}} filled in.
func (r *runner) build(q req) *message.Request {
	m := &message.Request{Method: q.method, Target: q.target, Proto: "HTTP/1.1", Headers: r.o.Headers.Clone()}
	if m.Method == "" {
		m.Method = r.o.Method
	}
	if m.Target == "" {
		m.Target = r.path
	}
	m.Headers = m.Headers.Del(r.o.KeyHeader)
	for _, h := range q.as {
		m.Headers = m.Headers.Set(h.Name, h.Value)
	}
	if q.key != "" {
		m.Headers = append(m.Headers, message.Header{Name: r.o.KeyHeader, Value: q.key})
	}
	m.Body = bytes.ReplaceAll(q.body, []byte(NoncePlaceholder), []byte(q.nonce))
	if len(m.Body) > 0 && !m.Headers.Has("Content-Type") {
		ct := "application/octet-stream"
		if json.Valid(m.Body) {
			ct = "application/json"
		}
		m.Headers = append(m.Headers, message.Header{Name: "Content-Type", Value: ct})
	}
	return m
}

// send sends m once (opt: lose its answer) and records the attempt.
func (r *runner) send(ctx context.Context, check string, m *message.Request, opt replay.SendOptions) (store.Attempt, error) {
	a := replay.Send(ctx, r.target, m, opt)
	if err := r.record(ctx, check, m, &a); err != nil {
		return a, err
	}
	return a, nil
}

// sendWithin is send with the answer waited for at most d (when that is
// shorter than the run's timeout).
func (r *runner) sendWithin(ctx context.Context, check string, m *message.Request, d time.Duration) (store.Attempt, error) {
	t := r.target
	t.Timeout = min(t.Timeout, d)
	a := replay.Send(ctx, t, m, replay.SendOptions{})
	if err := r.record(ctx, check, m, &a); err != nil {
		return a, err
	}
	return a, nil
}

// record stores a (sent by check) and tells the Observer.
func (r *runner) record(ctx context.Context, check string, m *message.Request, a *store.Attempt) error {
	r.gen++
	r.copies[check]++
	a.RunID, a.Phase, a.Copy = r.runID, check, r.copies[check]
	a.EventID = m.Headers.Get(r.o.KeyHeader)
	if a.Detail == nil {
		a.Detail = map[string]any{}
	}
	a.Detail["request"] = m.Method + " " + m.Target
	if r.o.Store != nil {
		if err := r.o.Store.InsertAttempt(context.WithoutCancel(ctx), a); err != nil {
			return setupf("%v", err)
		}
	}
	r.obs.Attempt(*a)
	return nil
}

// burst sends n copies of m at once, last bytes released together
// (replay.Burst), and records them in order.
func (r *runner) burst(ctx context.Context, check string, m *message.Request, n int) ([]store.Attempt, error) {
	ms := make([]*message.Request, n)
	for i := range ms {
		ms[i] = m
	}
	as := replay.Burst(ctx, r.target, ms, replay.SendOptions{})
	for i := range as {
		if err := r.record(ctx, check, m, &as[i]); err != nil {
			return as, err
		}
	}
	return as, nil
}

// answered reports whether a got an answer.
func answered(a store.Attempt) bool { return a.Status != 0 }

func is2xx(a store.Attempt) bool { return a.Status >= 200 && a.Status < 300 }

// sameAnswer: the same status and byte-equal body (headers such as Date
// may differ).
func sameAnswer(a, b store.Attempt) bool {
	return a.Status == b.Status && bytes.Equal(a.ResponseBody, b.ResponseBody)
}

// sameJSON: both bodies are the same JSON value (bytes aside).
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// answerText is a's answer in a few words: "201", "lost", "error: refused".
func answerText(a store.Attempt) string {
	switch {
	case a.Status != 0:
		return strconv.Itoa(a.Status)
	case a.Err != "":
		return "no answer (" + a.Err + ")"
	case a.Lost:
		return "lost"
	}
	return "not sent"
}

// answersText lists answers: "201, 201 ×3, 409 ×2" in order of first appearance.
func answersText(as []store.Attempt) string {
	var order []string
	n := map[string]int{}
	for _, a := range as {
		t := answerText(a)
		if n[t] == 0 {
			order = append(order, t)
		}
		n[t]++
	}
	parts := make([]string, len(order))
	for i, t := range order {
		parts[i] = t
		if n[t] > 1 {
			parts[i] += fmt.Sprintf(" ×%d", n[t])
		}
	}
	return strings.Join(parts, ", ")
}

// idOf is the value at the JSON path (dotted, "data.id", array indexes as
// numbers) of body, as text; "" when there is none.
func idOf(body []byte, path string) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	for _, seg := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return ""
			}
			v = x[i]
		default:
			return ""
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// idText names the id of a's answer for a message: ` (id "msg_2")`, or "".
func (r *runner) idText(a store.Attempt) string {
	if id := idOf(a.ResponseBody, r.o.IDPath); id != "" {
		return fmt.Sprintf(" (%s %q)", r.o.IDPath, id)
	}
	return ""
}

// bodyExcerpt is the start of a body for a report line.
func bodyExcerpt(b []byte) string {
	s := string(b)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}
