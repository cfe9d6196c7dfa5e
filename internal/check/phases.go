package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// tamper sends a fresh event whose body was changed after signing, and a
// correctly signed fresh event whose timestamp is an hour old: each must be
// answered 4xx and change nothing.
func (r *runner) tamper(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseTamper, Statuses: map[string]int{}}
	if r.o.Secret == "" {
		ph.Status, ph.Message = report.Skip, "not run: needs --secret to sign the copies it tampers with"
		return ph, nil
	}
	if !fr.fresh {
		ph.Status, ph.Message = report.Skip, "not run: "+freshReason(d, r.o.Secret)
		return ph, nil
	}
	type trial struct {
		what string
		req  *message.Request
		id   string
	}
	var trials []trial
	// 1: one body byte changed after signing, JSON kept valid.
	req, id, ok, why := r.freshIdentity(d)
	if !ok {
		ph.Status, ph.Message = report.Skip, "not run: "+why
		return ph, nil
	}
	if body, desc, ok := tamperBody(req.Body, id); ok {
		t := req.Clone()
		t.Body = body
		trials = append(trials, trial{what: "a copy whose body was changed after signing (" + desc + ")", req: t, id: id})
	} else {
		ph.Warnings = append(ph.Warnings, "no body byte could be changed without touching the event id; the tampered-body copy was not sent")
	}
	// 2: correctly signed an hour ago, for schemes with a timestamp.
	if req2, id2, ok, _ := r.freshIdentity(d); ok {
		old, err := verify.Sign(req2, d.Provider, r.o.Secret, verify.Options{Now: time.Now().Add(-time.Hour), URL: r.urlFor(req2)})
		if _, has := verify.SignedAt(req2, d.Provider); err == nil && has {
			trials = append(trials, trial{what: "a correctly signed copy whose signature timestamp is 1h old", req: old, id: id2})
		} else {
			r.note("tamper: %s signatures carry no timestamp, so the 1h-old signature copy was not sent", d.Provider)
		}
	}
	if len(trials) == 0 {
		ph.Status, ph.Message = report.Skip, "not run: nothing to tamper with"
		return ph, nil
	}
	prev, err := r.read(ctx, d, PhaseTamper, "before")
	if err != nil {
		return nil, err
	}
	warned := 0
	for i, t := range trials {
		a := r.send(ctx, t.req, replay.SendOptions{})
		a.Edit = t.what
		if err := r.record(ctx, &a, d, PhaseTamper, i+1, t.id); err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, a)
		ph.Attempts++
		cur, err := r.read(ctx, d, PhaseTamper, fmt.Sprintf("after copy %d", i+1))
		if err != nil {
			return nil, err
		}
		for k, name := range r.c.Probes {
			if !cur.vals[k].Equal(prev.vals[k]) {
				why := "the handler does not verify signatures before acting"
				if is4xx(a.Status) {
					// Rejected, yet something moved: acting before the check, or
					// work from an earlier phase landing later than learned.
					why = fmt.Sprintf("it was answered %d, so the handler acts before it rejects (or this is late work of an earlier phase: raise --settle)", a.Status)
				}
				ph.Violations = append(ph.Violations, report.Violation{Copy: i + 1, EventID: t.id, Probe: name, Status: a.Status,
					Before: prev.vals[k].String(), After: cur.vals[k].String(), Want: prev.vals[k].String(),
					Message: fmt.Sprintf("%s was acted on: %s changed from %s to %s; %s", t.what, name, prev.vals[k], cur.vals[k], why)})
			}
		}
		switch {
		case a.Err != "":
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("%s got no answer: %s", t.what, a.Err))
			warned++
		case is2xx(a.Status):
			ph.Violations = append(ph.Violations, report.Violation{Copy: i + 1, EventID: t.id, Status: a.Status,
				Message: fmt.Sprintf("%s was accepted with %d; the handler does not verify signatures before acting (want 4xx)", t.what, a.Status)})
		case !is4xx(a.Status):
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("%s was answered %d (want 4xx: a 5xx makes the provider retry a forged request)", t.what, a.Status))
			warned++
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseTamper, prev, cur)...)
		prev = cur
		r.progress("tamper   delivery %d copy %d: %s", d.ID, i+1, statusText(a))
	}
	ph.Duration = time.Since(start)
	var whats []string
	for _, t := range trials {
		whats = append(whats, t.what)
	}
	switch {
	case len(ph.Violations) > 0:
		ph.Status = report.Fail
		ph.Message = ph.Violations[0].Message
	case warned > 0:
		ph.Status = report.Warn
		ph.Message = "rejected without effect, but not with a 4xx: " + strings.Join(ph.Warnings, "; ")
	default:
		ph.Status = report.Pass
		ph.Message = "rejected with 4xx and no effect: " + strings.Join(whats, "; ")
	}
	return ph, nil
}

// tamperBody changes one byte of body, keeping JSON valid and the event id
// intact: the last digit of the first number value, else a letter of the
// first string value that is not the id. desc says what changed.
func tamperBody(body []byte, id string) (out []byte, desc string, ok bool) {
	if len(body) == 0 {
		return nil, "", false
	}
	isJSON := json.Valid(body)
	try := func(pos int) ([]byte, bool) {
		c := body[pos]
		var n byte
		switch {
		case c >= '0' && c <= '8':
			n = c + 1
		case c == '9':
			n = '8'
		case c >= 'a' && c < 'z', c >= 'A' && c < 'Z':
			n = c + 1
		case c == 'z' || c == 'Z':
			n = c - 1
		default:
			return nil, false
		}
		b := append([]byte(nil), body...)
		b[pos] = n
		if isJSON && !json.Valid(b) {
			return nil, false
		}
		if id != "" && !bytes.Contains(b, []byte(id)) && bytes.Contains(body, []byte(id)) {
			return nil, false // touched the id
		}
		return b, true
	}
	if isJSON {
		for _, cand := range jsonCandidates(body, id) {
			if b, ok := try(cand.pos); ok {
				return b, fmt.Sprintf("%s %q → %q at byte %d", cand.kind, body[cand.pos], b[cand.pos], cand.pos), true
			}
		}
		return nil, "", false
	}
	for i := range body {
		if b, ok := try(i); ok {
			return b, fmt.Sprintf("byte %d %q → %q", i, body[i], b[i]), true
		}
	}
	return nil, "", false
}

type candidate struct {
	pos  int
	kind string
}

// jsonCandidates lists byte positions inside JSON values that can be changed:
// the last digit of each number value first, then letters of string values
// (not keys, not the id, not escapes).
func jsonCandidates(body []byte, id string) []candidate {
	var nums, strs []candidate
	var stack []byte // '{' or '['
	expectKey := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '{':
			stack = append(stack, c)
			expectKey = true
		case c == '[':
			stack = append(stack, c)
			expectKey = false
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case c == ':':
			expectKey = false
		case c == ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case c == '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(body) {
				return append(nums, strs...)
			}
			content := string(body[i+1 : j])
			if !expectKey && content != id && !strings.Contains(content, "\\") {
				for k := i + 1; k < j; k++ {
					ch := body[k]
					if (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') {
						strs = append(strs, candidate{pos: k, kind: "a letter in a string value"})
						break
					}
				}
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(body) && (body[j] >= '0' && body[j] <= '9' || body[j] == '-') {
				j++
			}
			if j-1 >= i && body[j-1] >= '0' && body[j-1] <= '9' && string(body[i:j]) != id {
				nums = append(nums, candidate{pos: j - 1, kind: "a digit in a number"})
			}
			for j < len(body) && strings.IndexByte("0123456789.eE+-", body[j]) >= 0 {
				j++
			}
			i = j - 1
		}
	}
	return append(nums, strs...)
}

// crashDelays are the instants, after sending, at which the handler is
// killed: swept across its measured handling time, and once after its answer
// (1.5 × the handling time), where a handler that answers first and works
// from memory loses the event.
func crashDelays(handling time.Duration) []time.Duration {
	if handling < 2*time.Millisecond {
		handling = 2 * time.Millisecond
	}
	return []time.Duration{handling / 4, handling / 2, handling * 3 / 4, handling * 3 / 2}
}

// ackLostHint is the fix for a handler that answered 2xx and then lost the
// work when its process died.
const ackLostHint = "do the work (or durably enqueue it, e.g. insert it into a jobs table a worker resumes after a restart) " +
	"before answering 2xx: a provider never retries a delivery it got a 2xx for"

// crash kills the handler (SIGKILL to its process group) while it handles a
// fresh event and restarts it. A real provider retries only a delivery that
// got no 2xx: when the killed copy had not been answered, the retry is sent;
// when it had been answered 2xx, nothing is sent again. Either way the final
// effect must be exactly the first delivery's (0 after a 2xx: the handler
// acknowledged the event and lost its work).
func (r *runner) crash(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseCrash, Statuses: map[string]int{}}
	if r.o.Serve == nil {
		ph.Status, ph.Message = report.Skip, "not run: needs --serve CMD so hookreplay can kill and restart the handler"
		return ph, nil
	}
	if !fr.fresh {
		ph.Status, ph.Message = report.Skip, "not run: "+freshReason(d, r.o.Secret)
		return ph, nil
	}
	handling := fr.att.Latency
	delays := crashDelays(handling)
	judgedPass, notJudged := 0, 0
	for i, delay := range delays {
		exact, err := r.exactJudgement(ctx, d, fr)
		if err != nil {
			return nil, err
		}
		req, id, ok, why := r.freshIdentity(d)
		if !ok {
			ph.Status, ph.Message = report.Skip, "not run: "+why
			return ph, nil
		}
		before, err := r.read(ctx, d, PhaseCrash, fmt.Sprintf("trial %d before", i+1))
		if err != nil {
			return nil, err
		}
		sent := make(chan store.Attempt, 1)
		go func() { sent <- r.send(ctx, req, replay.SendOptions{}) }()
		time.Sleep(delay)
		r.o.Serve.Kill()
		a1 := <-sent
		a1.Edit = fmt.Sprintf("handler killed %s after sending", delay.Round(time.Microsecond))
		if err := r.record(ctx, &a1, d, PhaseCrash, 2*i+1, id); err != nil {
			return nil, err
		}
		if err := r.o.Serve.Start(ctx); err != nil {
			return nil, &SetupError{Err: fmt.Errorf("crash phase: restart: %w", err)}
		}
		acked := a1.Err == "" && !a1.Lost && is2xx(a1.Status)
		var a2 store.Attempt
		var trial string
		if acked {
			ph.Attempts++
			countStatuses(ph.Statuses, a1)
			trial = fmt.Sprintf("killed %s after sending, after it had answered %d (a provider does not retry an answered delivery, so no retry was sent), restarted",
				delay.Round(time.Microsecond), a1.Status)
		} else {
			a2 = r.send(ctx, asRetry(d, r.sameIdentity(d, req), 1), replay.SendOptions{})
			a2.Edit = "provider's retry after the restart"
			if err := r.record(ctx, &a2, d, PhaseCrash, 2*i+2, id); err != nil {
				return nil, err
			}
			countStatuses(ph.Statuses, a1, a2)
			ph.Attempts += 2
			trial = fmt.Sprintf("killed %s after sending (first copy: %s), restarted, retry answered %s",
				delay.Round(time.Microsecond), statusText(a1), statusText(a2))
		}
		after, err := r.readChanged(ctx, d, PhaseCrash, fmt.Sprintf("trial %d after restart", i+1), before)
		if err != nil {
			return nil, err
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseCrash, before, after)...)
		j := judgeOnce(r.c.Probes, fr.effect, before.vals, after.vals, exact, r.o.ResetCmd != "", fr.before.vals, fr.after.vals)
		for _, v := range j.violations {
			v.EventID = id
			v.Copy = 2*i + 2
			if acked {
				v.Copy = 2*i + 1
				if strings.Contains(v.Message, "work was lost") {
					v.Message = strings.Replace(v.Message, "the event's work was lost", fmt.Sprintf("answered %d but the work was lost when the process died", a1.Status), 1)
					v.Hint = ackLostHint
				}
			}
			v.Message = trial + ": " + v.Message
			ph.Violations = append(ph.Violations, v)
		}
		for _, w := range j.warnings {
			ph.Warnings = append(ph.Warnings, trial+": "+w)
		}
		switch j.status {
		case report.Pass:
			judgedPass++
		case report.NotJudged:
			notJudged++
		}
		if !acked && (a2.Err != "" || !is2xx(a2.Status)) {
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("trial %d: the retry after the restart was answered %s (want 2xx)", i+1, statusText(a2)))
		}
		r.progress("crash    delivery %d trial %d: %s → %s", d.ID, i+1, trial, j.status)
		if len(j.violations) > 0 {
			break // proven; later trials would only repeat it
		}
	}
	ph.Duration = time.Since(start)
	switch {
	case len(ph.Violations) > 0:
		ph.Status = report.Fail
		ph.Message = ph.Violations[0].Message
	case judgedPass > 0:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("killed the handler at %d points across and after its %s handling time; after the restart (and the provider's retry where the killed copy got no 2xx) each event's effect was exactly once", len(delays), roundDur(handling))
	default:
		ph.Status = report.NotJudged
		ph.Message = fmt.Sprintf("not judged in %d of %d trials: %s", notJudged, len(delays), firstOr(ph.Warnings, "no probe moved"))
	}
	return ph, nil
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// order sends the deliveries in their captured order, reversed, and in up to
// 5 seeded shuffles, resetting the state before each; the final probe values
// must be the same every time.
func (r *runner) order(ctx context.Context) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseOrder, Statuses: map[string]int{}}
	n := len(r.o.Deliveries)
	explicit := len(r.o.Phases) > 0
	switch {
	case n < 2 && !explicit:
		return nil, nil
	case n < 2:
		ph.Status, ph.Message = report.Skip, "not run: needs two or more deliveries"
		return ph, nil
	case r.o.ResetCmd == "":
		ph.Status, ph.Message = report.Skip, "not run: needs --reset-cmd to restore the handler's state before each ordering"
		return ph, nil
	}
	captured := make([]int, n)
	for i := range captured {
		captured[i] = i
	}
	orderings := [][]int{captured, reversed(captured)}
	seen := map[string]bool{key(captured): true, key(orderings[1]): true}
	for tries := 0; len(orderings) < 7 && tries < 100; tries++ {
		p := r.rng.Perm(n)
		if !seen[key(p)] {
			seen[key(p)] = true
			orderings = append(orderings, p)
		}
	}
	r.note("order: %d orderings (captured, reversed, %d seeded shuffles); seed %d, repeat with --seed %d", len(orderings), len(orderings)-2, r.o.Seed, r.o.Seed)
	var finals, starts [][]string
	var names []string
	for oi, ord := range orderings {
		if err := r.reset(ctx); err != nil {
			return nil, err
		}
		var ids []string
		for _, idx := range ord {
			ids = append(ids, fmt.Sprint(r.o.Deliveries[idx].ID))
		}
		name := strings.Join(ids, ",")
		names = append(names, name)
		st, err := r.read(ctx, nil, PhaseOrder, "after reset, before "+name)
		if err != nil {
			return nil, err
		}
		starts = append(starts, valueTexts(st.vals))
		for k, idx := range ord {
			d := &r.o.Deliveries[idx]
			a := r.send(ctx, r.sameIdentity(d, d.Req), replay.SendOptions{})
			if err := r.record(ctx, &a, d, PhaseOrder, oi*n+k+1, d.EventID); err != nil {
				return nil, err
			}
			countStatuses(ph.Statuses, a)
			ph.Attempts++
			if a.Err != "" || !is2xx(a.Status) {
				ph.Warnings = append(ph.Warnings, fmt.Sprintf("in order %s delivery %d was answered %s (want 2xx: the provider would retry it)", name, d.ID, statusText(a)))
			}
			if _, err := r.read(ctx, d, PhaseOrder, fmt.Sprintf("order %s after %d", name, d.ID)); err != nil {
				return nil, err
			}
		}
		fin, err := r.read(ctx, nil, PhaseOrder, "final "+name)
		if err != nil {
			return nil, err
		}
		vs := valueTexts(fin.vals)
		finals = append(finals, vs)
		r.progress("order    %s → %s", name, strings.Join(vs, "; "))
	}
	unjudged := 0
	for oi := 1; oi < len(finals); oi++ {
		// Judge an ordering only from the same starting state, and only when
		// its deliveries did something: a reset that leaves the handler's
		// record of processed events behind turns every later ordering into
		// duplicates, which says nothing about order.
		if !slices.Equal(starts[oi], starts[0]) {
			unjudged++
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("order %s not judged: --reset-cmd did not restore the same state (before it: %s; before the captured order: %s)",
				names[oi], strings.Join(starts[oi], "; "), strings.Join(starts[0], "; ")))
			continue
		}
		if slices.Equal(finals[oi], starts[oi]) && !slices.Equal(finals[0], starts[0]) {
			unjudged++
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("order %s not judged: its deliveries changed nothing (were they taken for duplicates? --reset-cmd should also clear the handler's record of processed events)", names[oi]))
			continue
		}
		for k, name := range r.c.Probes {
			if finals[oi][k] != finals[0][k] {
				ph.Violations = append(ph.Violations, report.Violation{Probe: name, Before: finals[0][k], After: finals[oi][k], Want: finals[0][k],
					Message: fmt.Sprintf("in order %s %s ended at %s; in the captured order %s it ended at %s", names[oi], name, finals[oi][k], names[0], finals[0][k])})
			}
		}
	}
	ph.Duration = time.Since(start)
	if len(ph.Violations) > 0 {
		ph.Status = report.Fail
		ph.Message = fmt.Sprintf("the final state depends on delivery order: %s", ph.Violations[0].Message)
		return ph, nil
	}
	if unjudged == len(orderings)-1 {
		ph.Status = report.NotJudged
		ph.Message = "not judged: " + firstOr(ph.Warnings, "")
		return ph, nil
	}
	ph.Status = report.Pass
	ph.Message = fmt.Sprintf("%d orderings of deliveries %s left the same final state (seed %d)", len(orderings)-unjudged, names[0], r.o.Seed)
	return ph, nil
}

func valueTexts(vs []probe.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

func reversed(a []int) []int {
	out := make([]int, len(a))
	for i, x := range a {
		out[len(a)-1-i] = x
	}
	return out
}

func key(a []int) string { return fmt.Sprint(a) }
