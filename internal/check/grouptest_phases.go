package check

// The phases a group runs together (grouptest.go): each sends one member's
// copies after another's and peeks at the probes between two members; a
// member's result comes from the group only when it passed there.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// suspicion follows one pass of a group: a window that shows what the
// phase does not expect may hold the late work of any member read before
// it, so those members' windows prove nothing and they are tried again
// (groupPhase); the members after it are not concerned.
type suspicion struct {
	read    []int // members, in the order their windows were read
	suspect map[int]bool
}

// window notes member i's window, which showed what was expected or not.
func (s *suspicion) window(i int, expected bool) {
	if s.suspect == nil {
		s.suspect = map[int]bool{}
	}
	if !expected {
		for _, j := range s.read {
			s.suspect[j] = true
		}
	}
	s.read = append(s.read, i)
}

// again lists the suspects among members, in order, leaving out those in
// out (judged) and those bad (their own window or answers were not as
// expected: alone).
func (s *suspicion) again(members []int, out map[int]*report.PhaseResult, bad map[int]bool) []int {
	var again []int
	for _, i := range members {
		if s.suspect[i] && out[i] == nil && !bad[i] {
			again = append(again, i)
		}
	}
	return again
}

// groupQuiet reads the probes quiet before a group's step; ok is false when
// they are still changing (every member then runs the phase alone).
func (r *runner) groupQuiet(ctx context.Context, phase, point string) (reading, bool, error) {
	q, err := r.readQuiet(ctx, nil, phase, point)
	return q, err == nil && len(q.unsettled) == 0, err
}

// groupSettled waits for quiet after a group's step and reports whether
// nothing moved since last, the peek after its last delivery: a change
// then is late work no peek can attribute.
func (r *runner) groupSettled(ctx context.Context, phase, point string, last reading) (bool, error) {
	rd, err := r.read(ctx, nil, phase, point)
	if err != nil {
		return false, err
	}
	return len(rd.unsettled) == 0 && probe.SameValues(rd.vals, last.vals), nil
}

// fell reports whether a probe's number went down from a to b: the probes
// are then not sums that only grow, and a change could hide another.
func fell(a, b []probe.Value) bool {
	for k := range a {
		if d, ok := probe.Delta(a[k], b[k]); ok && d < 0 {
			return true
		}
	}
	return false
}

// answered2xx reports whether every copy was answered 2xx.
func answered2xx(as []store.Attempt) bool {
	for _, a := range as {
		if a.Err != "" || a.Lost || !is2xx(a.Status) {
			return false
		}
	}
	return true
}

// dupsMember is what one member's duplicates in a group did: the copies'
// answers, and the peeks before and after them.
type dupsMember struct {
	as       []store.Attempt
	from, to reading
}

// groupDups sends every member's duplicates, member after member, peeking
// after each member's: a member whose peeks show no change and whose
// copies were all answered 2xx passes as dups passes alone.
func (r *runner) groupDups(ctx context.Context, _ phase, members []int, frs []*firstResult) (map[int]*report.PhaseResult, []int, error) {
	if r.o.N < 2 {
		return nil, nil, nil
	}
	start := time.Now()
	prev, ok, err := r.groupQuiet(ctx, PhaseDups, "group: before")
	if err != nil || !ok {
		return nil, nil, err
	}
	ms, last, down, err := r.sendGroupDups(ctx, members, frs, prev)
	if err != nil {
		return nil, nil, err
	}
	settled := false
	if !down {
		if settled, err = r.groupSettled(ctx, PhaseDups, "group: after the last copy", last); err != nil {
			return nil, nil, err
		}
	}
	return r.judgeGroupDups(ctx, members, frs, ms, time.Since(start), settled, false)
}

// sendGroupDups sends the duplicates of every member, from prev, the
// reading before, peeking after each member's copies; fell: a probe fell,
// and the members after it were not sent.
func (r *runner) sendGroupDups(ctx context.Context, members []int, frs []*firstResult, prev reading) (ms map[int]*dupsMember, last reading, down bool, err error) {
	ms = map[int]*dupsMember{}
	for _, i := range members {
		d, fr := &r.o.Deliveries[i], frs[i]
		m := &dupsMember{from: prev}
		for c := 2; c <= r.o.N; c++ {
			a := r.send(ctx, r.sameIdentity(d, fr.req, fr.eventID), replay.SendOptions{})
			if err := r.record(ctx, &a, d, PhaseDups, c, fr.eventID); err != nil {
				return nil, prev, false, err
			}
			m.as = append(m.as, a)
			r.step(Step{Phase: PhaseDups, DeliveryID: d.ID, N: c, Attempts: []store.Attempt{a}})
		}
		if m.to, err = r.peek(ctx, nil, PhaseDups, fmt.Sprintf("group: after delivery %d's copies", d.ID)); err != nil {
			return nil, prev, false, err
		}
		ms[i], prev = m, m.to
		if fell(m.from.vals, m.to.vals) {
			return ms, prev, true, nil
		}
	}
	return ms, prev, false, nil
}

// judgeGroupDups judges the members whose duplicates sendGroupDups sent
// (ms) from their peeks; settled: nothing moved after the last peek (else
// every member sent is judged alone, with a fresh event: nothing the group
// read can be attributed). tail: a window read after the last peek, of
// other copies, showed a change, which may be late work of any member, so
// each is tried again.
func (r *runner) judgeGroupDups(ctx context.Context, members []int, frs []*firstResult, ms map[int]*dupsMember, took time.Duration, settled, tail bool) (map[int]*report.PhaseResult, []int, error) {
	out := map[int]*report.PhaseResult{}
	var sus suspicion
	bad := map[int]bool{}
	for _, i := range members {
		m := ms[i]
		if m == nil {
			continue
		}
		same := probe.SameValues(m.from.vals, m.to.vals)
		sus.window(i, same)
		bad[i] = !settled || !same || !answered2xx(m.as)
	}
	if tail {
		sus.window(-1, false)
	}
	for _, i := range members {
		m, fr := ms[i], frs[i]
		if m == nil {
			continue
		}
		if bad[i] {
			// Alone, with an event the handler has not seen: duplicates of
			// this one would find it remembering the group's copies.
			res, err := r.dupsAgain(ctx, &r.o.Deliveries[i], fr)
			if err != nil {
				return nil, nil, err
			}
			if res != nil {
				out[i] = res
			}
			continue
		}
		if sus.suspect[i] {
			continue
		}
		ph := &report.PhaseResult{Phase: PhaseDups, Statuses: map[string]int{}, Attempts: len(m.as)}
		countStatuses(ph.Statuses, m.as...)
		t := &dupsTally{reported: map[string]bool{}, answers: answerTally{what: "duplicates", followUp: true}}
		t.answers.add(m.as...)
		frd := *fr
		frd.after = m.to
		r.dupsVerdict(ph, &frd, t, m.to)
		t.answers.conclude(ph, fmt.Sprintf("%d duplicates (same event id)", r.o.N-1))
		ph.Duration = took
		if ph.Status == report.Pass && len(ph.Warnings) == 0 {
			out[i] = ph
		}
	}
	if !settled {
		return out, nil, nil
	}
	return out, sus.again(members, out, bad), nil
}

// dupsAgain runs dups alone for d after its duplicates in the group did
// not pass, with a fresh event rather than the first copy's: the handler
// has seen that event's group copies, and a handler whose dedupe depends on
// how many copies of an event came (a cache that lets every third through)
// would judge differently. The fresh event's first copy (copy 1 of dups)
// is read as first reads it, and its duplicates are judged against it by
// the code a run of one uses. nil when d cannot be given a fresh id.
func (r *runner) dupsAgain(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	req, id, ok, _ := r.freshIdentity(d)
	if !ok {
		return nil, nil
	}
	before, err := r.readQuiet(ctx, d, PhaseDups, "before a fresh event's first copy")
	if err != nil {
		return nil, err
	}
	a := r.send(ctx, req, replay.SendOptions{})
	if err := r.record(ctx, &a, d, PhaseDups, 1, id); err != nil {
		return nil, err
	}
	after, err := r.readChanged(ctx, d, PhaseDups, "after a fresh event's first copy", before)
	if err != nil {
		return nil, err
	}
	again := *fr
	again.req, again.eventID, again.att, again.before, again.after = req, id, a, before, after
	again.effect = deltas(r.c.Probes, before.vals, after.vals)
	if !sameEffect(fr.effect, again.effect) {
		return nil, nil // not the first copy's effect: judged alone, on the first copy's event
	}
	res, err := r.dups(ctx, d, &again)
	if res != nil {
		r.ranAlone[d.ID] = true // not judged in the group: the note does not count it
	}
	return res, err
}

// tamperMember is what one member's forged copies in a group did.
type tamperMember struct {
	i        int
	ph       *report.PhaseResult
	copies   []tamperedCopy
	as       []store.Attempt
	from, to reading
}

// groupTamper sends every member's forged copies, member after member,
// peeking after each member's: a member whose peeks show no change and
// whose copies were all refused passes as tamper passes alone.
func (r *runner) groupTamper(ctx context.Context, _ phase, members []int, _ []*firstResult) (map[int]*report.PhaseResult, []int, error) {
	start := time.Now()
	prev, ok, err := r.groupQuiet(ctx, PhaseTamper, "group: before")
	if err != nil || !ok {
		return nil, nil, err
	}
	ms, out, last, down, err := r.sendGroupTamper(ctx, members, prev)
	if err != nil || down {
		return out, nil, err
	}
	if ok, err := r.groupSettled(ctx, PhaseTamper, "group: after the last copy", last); err != nil || !ok {
		return out, nil, err
	}
	return r.judgeGroupTamper(members, ms, out, time.Since(start))
}

// sendGroupTamper sends the forged copies of every member, from prev, the
// reading before, peeking after each member's copies; out holds the
// members tamper is skipped for. down: a probe fell, and the members after
// it were not sent.
func (r *runner) sendGroupTamper(ctx context.Context, members []int, prev reading) (ms []*tamperMember, out map[int]*report.PhaseResult, last reading, down bool, err error) {
	out = map[int]*report.PhaseResult{}
	for _, i := range members {
		d := &r.o.Deliveries[i]
		m := &tamperMember{i: i, ph: &report.PhaseResult{Phase: PhaseTamper, Statuses: map[string]int{}}, from: prev}
		copies, why := r.tamperedCopies(d, m.ph)
		if len(copies) == 0 {
			out[i] = skipped(m.ph, why)
			continue
		}
		m.copies = copies
		for n, t := range copies {
			a := r.send(ctx, t.req, replay.SendOptions{})
			a.Edit = t.what
			if err := r.record(ctx, &a, d, PhaseTamper, n+1, t.id); err != nil {
				return nil, nil, prev, false, err
			}
			countStatuses(m.ph.Statuses, a)
			m.ph.Attempts++
			m.as = append(m.as, a)
			r.step(Step{Phase: PhaseTamper, DeliveryID: d.ID, N: n + 1, What: t.what, Attempts: []store.Attempt{a}})
		}
		if m.to, err = r.peek(ctx, nil, PhaseTamper, fmt.Sprintf("group: after delivery %d's copies", d.ID)); err != nil {
			return nil, nil, prev, false, err
		}
		if fell(m.from.vals, m.to.vals) {
			return ms, out, m.to, true, nil
		}
		prev = m.to
		ms = append(ms, m)
	}
	return ms, out, prev, false, nil
}

// judgeGroupTamper judges the members whose forged copies sendGroupTamper
// sent (ms, and out, those skipped), when nothing moved after the last
// peek.
func (r *runner) judgeGroupTamper(members []int, ms []*tamperMember, out map[int]*report.PhaseResult, took time.Duration) (map[int]*report.PhaseResult, []int, error) {
	var sus suspicion
	bad := map[int]bool{}
	for _, m := range ms {
		bad[m.i] = !probe.SameValues(m.from.vals, m.to.vals)
		sus.window(m.i, !bad[m.i])
	}
	for _, m := range ms {
		if bad[m.i] || sus.suspect[m.i] {
			continue
		}
		var answers []string
		for n, t := range m.copies {
			answers = append(answers, r.judgeTampered(m.ph, n+1, t, m.as[n], m.to, m.to))
		}
		if len(m.ph.Violations) > 0 {
			bad[m.i] = true
			continue // accepted a forged copy: judged alone
		}
		m.ph.Status = report.Pass
		m.ph.Message = "refused with no effect: " + strings.Join(answers, "; ")
		m.ph.Duration = took
		out[m.i] = m.ph
	}
	return out, sus.again(members, out, bad), nil
}
