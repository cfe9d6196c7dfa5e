package check

// The group's phases of fresh events (grouptest.go): the control event,
// burst and lost, each member's copies after another's, a peek between two
// members; a member's result comes from the group only when it passed.

import (
	"context"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// exactMembers sends the control event of every member that has not had
// it (as the phase does alone) and returns the members whose fresh events
// are judged exactly; a member whose fresh events were refused because of
// state gets its result in out, as alone.
func (r *runner) exactMembers(ctx context.Context, p phase, members []int, frs []*firstResult, out map[int]*report.PhaseResult) ([]int, error) {
	if err := r.groupControl(ctx, members, frs); err != nil {
		return nil, err
	}
	var in []int
	for _, i := range members {
		d := &r.o.Deliveries[i]
		res, err := r.stateDependent(ctx, d, frs[i], p)
		if err != nil {
			return nil, err
		}
		if res != nil {
			out[i] = res
			continue
		}
		if ad := r.additive[d.ID]; ad != nil && ad.yes {
			in = append(in, i)
		}
	}
	return in, nil
}

// groupControl sends the control event (exactJudgement's second fresh
// event) of every member that has not had it, member after member, each
// read by a peek, and one wait for quiet after the last. A member whose
// control changed the probes exactly as its first copy did, answered 2xx,
// is judged exact as alone; the others are left to send theirs alone.
func (r *runner) groupControl(ctx context.Context, members []int, frs []*firstResult) error {
	var todo []int
	for _, i := range members {
		if ad := r.additive[r.o.Deliveries[i].ID]; ad == nil || !ad.known {
			todo = append(todo, i)
		}
	}
	if len(todo) < 2 {
		return nil
	}
	prev, ok, err := r.groupQuiet(ctx, "control", "group: before")
	if err != nil || !ok {
		return err
	}
	type control struct {
		i        int
		id       string
		a        store.Attempt
		from, to reading
	}
	var cs []control
	for _, i := range todo {
		d := &r.o.Deliveries[i]
		req, id, fresh, _ := r.freshIdentity(d)
		if !fresh {
			continue
		}
		a := r.send(ctx, req, replay.SendOptions{})
		if err := r.record(ctx, &a, d, "control", 1, id); err != nil {
			return err
		}
		cur, err := r.peek(ctx, nil, "control", fmt.Sprintf("group: after delivery %d's control event", d.ID))
		if err != nil {
			return err
		}
		if fell(prev.vals, cur.vals) {
			return nil
		}
		cs, prev = append(cs, control{i: i, id: id, a: a, from: prev, to: cur}), cur
	}
	if ok, err := r.groupSettled(ctx, "control", "group: after the last control event", prev); err != nil || !ok {
		return err
	}
	var sus suspicion
	for _, c := range cs {
		sus.window(c.i, sameEffect(frs[c.i].effect, deltas(r.c.Probes, c.from.vals, c.to.vals)))
	}
	for _, c := range cs {
		d, fr := &r.o.Deliveries[c.i], frs[c.i]
		ctl := deltas(r.c.Probes, c.from.vals, c.to.vals)
		if !answered2xx([]store.Attempt{c.a}) || !sameEffect(fr.effect, ctl) || sus.suspect[c.i] {
			continue // its control event is sent again alone
		}
		ad := r.additive[d.ID]
		if ad == nil {
			ad = &additivity{}
			r.additive[d.ID] = ad
		}
		ad.known = true
		r.judgeControl(ad, d, fr, c.id, c.a, ctl)
		r.step(Step{Phase: "control", DeliveryID: d.ID, N: 1, Attempts: []store.Attempt{c.a}, Effect: ctl, Changed: anyChanged(ctl)})
	}
	return nil
}

// groupBurst sends every round's bursts, one member's burst after
// another's, peeking after each: a member whose every peek shows exactly
// one event's effect and whose copies were all answered 2xx passes as
// burst passes alone, after every round.
func (r *runner) groupBurst(ctx context.Context, p phase, members []int, frs []*firstResult) (map[int]*report.PhaseResult, []int, error) {
	out := map[int]*report.PhaseResult{}
	in, err := r.exactMembers(ctx, p, members, frs, out)
	if err != nil || len(in) < 2 {
		return out, nil, err
	}
	start := time.Now()
	rounds := r.o.BurstRounds
	if rounds <= 0 {
		rounds = 3
	}
	type member struct {
		ph      *report.PhaseResult
		as      []store.Attempt
		j       judgement
		spreads time.Duration
	}
	ms := map[int]*member{}
	for _, i := range in {
		ms[i] = &member{ph: &report.PhaseResult{Phase: PhaseBurst, Statuses: map[string]int{}}}
	}
	gp := newGroupPass(in)
	// One wait for quiet before the first round and one after the last:
	// a round's late work lands in a later window (not what it expects:
	// the members read before it are suspects) or after the last.
	prev, ok, err := r.groupQuiet(ctx, PhaseBurst, "group: round 1 before")
	if err != nil || !ok {
		return out, nil, err
	}
	for round := 1; round <= rounds; round++ {
		var as []store.Attempt
		var stop bool
		prev, stop, err = r.eachFresh(ctx, PhaseBurst, in, frs, prev, gp, round == rounds, "group: after the last round",
			func(d *Delivery) string { return fmt.Sprintf("group: round %d after delivery %d's burst", round, d.ID) },
			func(g groupTrial) ([]store.Attempt, error) {
				m := ms[g.i]
				reqs := make([]*message.Request, r.o.Burst)
				for c := range reqs {
					reqs[c] = r.sameIdentity(g.d, g.t.req, g.t.id)
				}
				r.gen.Add(1)
				as = r.burstSend(ctx, reqs)
				r.sent()
				for c := range as {
					if err := r.record(ctx, &as[c], g.d, PhaseBurst, len(m.as)+c+1, g.t.id); err != nil {
						return nil, err
					}
				}
				return as, nil
			},
			func(g groupTrial, j judgement) {
				m := ms[g.i]
				m.as = append(m.as, as...)
				countStatuses(m.ph.Statuses, as...)
				m.spreads = max(m.spreads, replay.Spread(as))
				m.j = j
				r.step(Step{Phase: PhaseBurst, DeliveryID: g.d.ID, N: round, Attempts: as, Spread: replay.Spread(as), Status: j.status})
			})
		if err != nil || stop {
			return out, nil, err
		}
	}
	what := fmt.Sprintf("%d concurrent copies of a fresh event", r.o.Burst)
	if rounds > 1 {
		what = fmt.Sprintf("%d bursts of %d concurrent copies of a fresh event each", rounds, r.o.Burst)
	}
	for _, i := range in {
		m := ms[i]
		if !gp.still[i] {
			continue
		}
		ph := m.ph
		ph.Attempts, ph.BurstSpread = len(m.as), m.spreads
		ph.Status, ph.Message, ph.Warnings = m.j.status, what+": "+m.j.message, m.j.warnings
		answers := &answerTally{what: "concurrent copies", followUp: true}
		answers.add(m.as...)
		answers.conclude(ph, what)
		ph.Duration = time.Since(start)
		if ph.Status == report.Pass && len(ph.Warnings) == 0 {
			out[i] = ph
		}
	}
	return out, gp.sus.again(in, out, gp.bad), nil
}

// groupLost runs each lost trial for every member in turn: the copy whose
// answer is lost, a wait until its effect shows (as alone, at most
// changeWait), the provider's retry, a peek. A member whose every retry
// was answered 2xx and whose peeks show exactly one event's effect per
// trial passes as lost passes alone.
func (r *runner) groupLost(ctx context.Context, p phase, members []int, frs []*firstResult) (map[int]*report.PhaseResult, []int, error) {
	out := map[int]*report.PhaseResult{}
	in, err := r.exactMembers(ctx, p, members, frs, out)
	if err != nil || len(in) < 2 {
		return out, nil, err
	}
	start := time.Now()
	type member struct {
		ph      *report.PhaseResult
		retries []store.Attempt
	}
	ms := map[int]*member{}
	for _, i := range in {
		ms[i] = &member{ph: &report.PhaseResult{Phase: PhaseLost, Statuses: map[string]int{}}}
	}
	gp := newGroupPass(in)
	var passed []string
	// One wait for quiet before the first trial and one after the last,
	// as burst's rounds.
	prev, ok, err := r.groupQuiet(ctx, PhaseLost, "group: trial 1 before")
	if err != nil || !ok {
		return out, nil, err
	}
	for ti, lt := range lostTrials {
		var a1, a2 store.Attempt
		var stop bool
		prev, stop, err = r.eachFresh(ctx, PhaseLost, in, frs, prev, gp, ti == len(lostTrials)-1, "group: after the last trial",
			func(d *Delivery) string { return fmt.Sprintf("group: trial %d after delivery %d's retry", ti+1, d.ID) },
			func(g groupTrial) ([]store.Attempt, error) {
				a1 = r.send(ctx, g.t.req, lt.opt)
				a1.Edit = lt.what
				if err := r.record(ctx, &a1, g.d, PhaseLost, 2*ti+1, g.t.id); err != nil {
					return nil, err
				}
				if err := r.groupAwait(ctx, g.d, g.fr, g.t, fmt.Sprintf("group: trial %d after delivery %d's lost copy", ti+1, g.d.ID)); err != nil {
					return nil, err
				}
				a2 = r.send(ctx, asRetry(g.d, r.sameIdentity(g.d, g.t.req, g.t.id), 1), replay.SendOptions{})
				a2.Edit = "provider's retry"
				if err := r.record(ctx, &a2, g.d, PhaseLost, 2*ti+2, g.t.id); err != nil {
					return nil, err
				}
				return []store.Attempt{a2}, nil
			},
			func(g groupTrial, j judgement) {
				m := ms[g.i]
				m.ph.Attempts += 2
				countStatuses(m.ph.Statuses, a1, a2)
				m.retries = append(m.retries, a2)
				r.step(Step{Phase: PhaseLost, DeliveryID: g.d.ID, N: ti + 1, What: lt.what, Attempts: []store.Attempt{a1, a2}, Status: j.status})
			})
		if err != nil || stop {
			return out, nil, err
		}
		passed = append(passed, lt.what)
	}
	for _, i := range in {
		m := ms[i]
		if !gp.still[i] {
			continue
		}
		lostVerdict(m.ph, passed, nil)
		answers := &answerTally{what: "provider's retries", followUp: true}
		answers.add(m.retries...)
		answers.conclude(m.ph, "a fresh event whose answer never reached the sender, then the provider's retry")
		m.ph.Duration = time.Since(start)
		if m.ph.Status == report.Pass && len(m.ph.Warnings) == 0 {
			out[i] = m.ph
		}
	}
	return out, gp.sus.again(in, out, gp.bad), nil
}

// groupTrial is a member's fresh trial in one pass of a group phase.
type groupTrial struct {
	i  int
	d  *Delivery
	fr *firstResult
	t  *trial
}

// groupPass is what a group phase keeps across its passes (burst's
// rounds, lost's trials): the members still in the phase, those found bad,
// and the suspects of the windows read so far.
type groupPass struct {
	still, bad map[int]bool
	sus        suspicion
}

func newGroupPass(in []int) *groupPass {
	gp := &groupPass{still: map[int]bool{}, bad: map[int]bool{}}
	for _, i := range in {
		gp.still[i] = true
	}
	return gp
}

// eachFresh runs one pass of a group phase over the members of in still
// in it: each gets a fresh event as a trial after the last reading, sent
// by try, whose effect a peek (point) reads and the member's first copy
// judges exactly, told to judged. A member without a fresh identity leaves
// the phase; one not judged exactly one event's effect, or whose copies
// named by try were not all answered 2xx, leaves it as bad. The last pass
// waits for quiet after it (settled, the point). The members read before
// an unexpected window sit out the passes after (tried again in a group of
// their own). It returns the last reading, and stop when the group's
// readings cannot be judged by adding up: a probe fell, or the last pass
// did not settle where its last peek read.
func (r *runner) eachFresh(ctx context.Context, phase string, in []int, frs []*firstResult, prev reading, gp *groupPass, last bool, settled string,
	point func(d *Delivery) string, try func(g groupTrial) (answered []store.Attempt, err error), judged func(g groupTrial, j judgement)) (reading, bool, error) {
	for _, i := range in {
		if !gp.still[i] {
			continue
		}
		d := &r.o.Deliveries[i]
		req, id, fresh, _ := r.freshIdentity(d)
		if !fresh {
			gp.still[i] = false
			continue
		}
		g := groupTrial{i: i, d: d, fr: frs[i], t: &trial{exact: true, req: req, id: id, before: prev}}
		answered, err := try(g)
		if err != nil {
			return prev, false, err
		}
		cur, err := r.peek(ctx, nil, phase, point(d))
		if err != nil {
			return prev, false, err
		}
		j := r.judge(g.fr, g.t, cur)
		judged(g, j)
		exact := j.status == report.Pass && len(j.warnings) == 0
		gp.sus.window(i, exact)
		if !exact || !answered2xx(answered) {
			gp.still[i], gp.bad[i] = false, true
		}
		if fell(prev.vals, cur.vals) {
			return cur, true, nil
		}
		prev = cur
	}
	if last {
		if ok, err := r.groupSettled(ctx, phase, settled, prev); err != nil || !ok {
			return prev, true, err
		}
	}
	for i := range gp.sus.suspect {
		gp.still[i] = false
	}
	return prev, false, nil
}

// groupAwait waits, after a lost copy of trial t, until the probes show
// one event's effect since t.before, or changeWait passes (as alone, the
// retry follows the lost copy's work), and records what it read as the
// group's.
func (r *runner) groupAwait(ctx context.Context, d *Delivery, fr *firstResult, t *trial, point string) error {
	r.clk.settleBegin()
	start := time.Now()
	var vals []probe.Value
	for {
		var err error
		if vals, err = probe.ReadAll(ctx, r.o.Probes); err != nil {
			r.clk.settleEnd()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &SetupError{Err: err}
		}
		if r.judge(fr, t, reading{vals: vals}).status == report.Pass || time.Since(start) >= r.changeWait() {
			break
		}
		select {
		case <-ctx.Done():
			r.clk.settleEnd()
			return ctx.Err()
		case <-time.After(r.pollInterval()):
		}
	}
	r.clk.settleEnd()
	rd := reading{vals: vals, at: time.Now(), from: start}
	r.markSinks(&rd)
	return r.storeReading(ctx, nil, PhaseLost, point, rd)
}
