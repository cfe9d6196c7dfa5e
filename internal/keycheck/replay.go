package keycheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// replayCopies is how many times replay sends the first request again.
const replayCopies = 3

// checkReplay sends the first request again, the same key and bytes, three
// times: each must get the stored answer (the same status and byte-equal
// body; headers such as Date may differ) and change nothing. A new id in a
// replay's body is a second operation.
func (r *runner) checkReplay(ctx context.Context) (*report.KeyCheckResult, error) {
	res := &report.KeyCheckResult{Sent: fmt.Sprintf("the first request again, same key and bytes, %d times", replayCopies),
		Expected: fmt.Sprintf("the stored answer (%s, the same body) each time; effect +0", answerText(r.first.a))}
	from, err := r.before(ctx, nameReplay)
	if err != nil {
		return res, err
	}
	var as []store.Attempt
	for range replayCopies {
		a, err := r.send(ctx, nameReplay, r.first.req, replay.SendOptions{})
		if err != nil {
			return res, err
		}
		as = append(as, a)
	}
	res.Attempts = len(as)
	r.replays = as
	to, err := r.after(ctx, nameReplay, "after", from, false)
	if err != nil {
		return res, err
	}
	e := r.effectOf(from, to)
	res.Effect = e.String()
	res.Observed = answersText(as) + "; effect " + e.String()
	res.Status, res.Why = r.judgeReplays(r.first.a, as, e, "replay")
	r.keyHonoured = e.exact && e.none()
	if res.Status == report.Fail && e.exact && e.is(len(as)) {
		hint, err := r.keyIgnored(ctx, nameReplay)
		if err != nil {
			return res, err
		}
		res.Why += hint
	}
	return res, nil
}

// judgeReplays judges answers that should all be the stored answer first,
// with effect +0: what replay and lost share.
func (r *runner) judgeReplays(first store.Attempt, as []store.Attempt, e effect, what string) (report.Status, string) {
	if !e.none() {
		return report.Fail, fmt.Sprintf("a %s with the same key changed the probes (%s): the key is not honoured, the operation ran again", what, e)
	}
	warn := ""
	for i, a := range as {
		n := fmt.Sprintf("%s %d", what, i+1)
		switch {
		case !answered(a):
			return report.Inconclusive, fmt.Sprintf("%s got %s", n, answerText(a))
		case sameAnswer(first, a):
			continue
		case a.Status == r.o.Profile.InFlightStatus && !is2xx(a):
			return report.Fail, fmt.Sprintf("%s of a completed operation answered %d (the in-flight status): the key was never marked complete, so a retry never gets the stored answer", n, a.Status)
		case !is2xx(a):
			return report.Fail, fmt.Sprintf("%s answered %s where the first answered %s: not the stored answer", n, answerText(a), answerText(first))
		case idOf(a.ResponseBody, r.o.IDPath) != idOf(first.ResponseBody, r.o.IDPath):
			return report.Fail, fmt.Sprintf("%s answered 2xx with another id%s than the first%s: a second operation under one key", n, r.idText(a), r.idText(first))
		case bytesEqual(a.ResponseBody, first.ResponseBody):
			warn = fmt.Sprintf("%s answered %d where the first answered %d (the same body): the stored status was not kept", n, a.Status, first.Status)
		case sameJSON(a.ResponseBody, first.ResponseBody):
			warn = fmt.Sprintf("%s answered the same JSON in other bytes: the contract keeps the stored body byte for byte", n)
			if a.Status != first.Status {
				warn += fmt.Sprintf(", and %d where the first answered %d", a.Status, first.Status)
			}
		default:
			return report.Fail, fmt.Sprintf("%s answered another body than the first (%s, not %s): not the stored answer", n, bodyExcerpt(a.ResponseBody), bodyExcerpt(first.ResponseBody))
		}
	}
	if warn != "" {
		return report.Warn, warn
	}
	return report.Pass, ""
}

// checkReplayHeader judges the replay header on replay's answers (sending
// a replay of its own when replay did not run): every replay carries the
// profile's header, the first answer does not.
func (r *runner) checkReplayHeader(ctx context.Context) (*report.KeyCheckResult, error) {
	h, v := r.o.Profile.ReplayHeader, r.o.Profile.ReplayValue
	res := &report.KeyCheckResult{Sent: "(the first request and its replays)",
		Expected: fmt.Sprintf("replays carry %s: %s; the first answer does not", h, v)}
	as := r.replays
	if len(as) == 0 {
		res.Sent = "the first request again, same key and bytes"
		a, err := r.send(ctx, nameReplayHeader, r.first.req, replay.SendOptions{})
		if err != nil {
			return res, err
		}
		res.Attempts = 1
		as = []store.Attempt{a}
	}
	if got := r.first.a.ResponseHeaders.Get(h); got != "" && strings.EqualFold(got, v) {
		res.Status = report.Fail
		res.Observed = fmt.Sprintf("the first answer carries %s: %s", h, got)
		res.Why = "the first answer is marked as a replay: a client cannot tell a new operation from a replayed one"
		return res, nil
	}
	var missing []int
	for i, a := range as {
		if got := a.ResponseHeaders.Get(h); !strings.EqualFold(strings.TrimSpace(got), v) {
			missing = append(missing, i+1)
		}
	}
	if len(missing) == 0 {
		res.Status = report.Pass
		res.Observed = fmt.Sprintf("%d replays carry %s: %s; the first answer does not", len(as), h, v)
		return res, nil
	}
	res.Status = report.Fail
	other := ""
	for _, p := range Profiles {
		if p.ReplayHeader == "" || strings.EqualFold(p.ReplayHeader, h) || as[0].ResponseHeaders.Get(p.ReplayHeader) == "" {
			continue
		}
		other = fmt.Sprintf(" (it sends %s: %s, %s style)", p.ReplayHeader, as[0].ResponseHeaders.Get(p.ReplayHeader), p.Name)
		// Every replay marked with another profile's header, and the
		// first answer not: a client can tell a replay, under another
		// name. Safe, not as the profile says: a warn, as another
		// profile's status code is.
		if r.markedAs(as, p.ReplayHeader, p.ReplayValue) {
			res.Status = report.Warn
			res.Observed = fmt.Sprintf("%d replays carry %s: %s; the first answer does not", len(as), p.ReplayHeader, p.ReplayValue)
			res.Why = fmt.Sprintf("replays are marked %s: %s, %s style; %s says %s: %s", p.ReplayHeader, p.ReplayValue, p.Name, r.o.Profile.title(), h, v)
			return res, nil
		}
	}
	res.Observed = fmt.Sprintf("replay %s without %s: %s%s", joinInts(missing), h, v, other)
	res.Why = fmt.Sprintf("no replay header: a replayed answer is not marked %s: %s, so a client cannot tell it from a new operation", h, v)
	if other == "" {
		res.Why += fmt.Sprintf(" (if your API's contract defines no replay header, %s none judges it by that)", r.name(InputReplayHeader))
	}
	return res, nil
}

// markedAs: every answer in as carries header name with value, and the
// first answer does not.
func (r *runner) markedAs(as []store.Attempt, name, value string) bool {
	if r.first.a.ResponseHeaders.Get(name) != "" {
		return false
	}
	for _, a := range as {
		if !strings.EqualFold(strings.TrimSpace(a.ResponseHeaders.Get(name)), value) {
			return false
		}
	}
	return true
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// replayMark names the replay marker a carries ("Idempotent-Replayed:
// true"): the profile's header, or another profile's, with its value. ""
// when a carries none.
func (r *runner) replayMark(a store.Attempt) string {
	hs := []Profile{r.o.Profile}
	hs = append(hs, Profiles...)
	for _, p := range hs {
		if p.ReplayHeader == "" {
			continue
		}
		if got := strings.TrimSpace(a.ResponseHeaders.Get(p.ReplayHeader)); got != "" && strings.EqualFold(got, p.ReplayValue) {
			return p.ReplayHeader + ": " + got
		}
	}
	return ""
}
