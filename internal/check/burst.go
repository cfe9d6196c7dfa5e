package check

import (
	"context"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
)

func (r *runner) burst(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseBurst, Statuses: map[string]int{}}
	if !fr.fresh {
		ph.Status, ph.Message = report.Skip, "not run: "+freshReason(d, r.o.Secret)
		return ph, nil
	}
	// A race shows only when the copies overlap inside the handler; one
	// burst can miss it (a cold connection pool serialises the copies), so a
	// passing burst is repeated with another fresh event, up to BurstRounds.
	rounds := r.o.BurstRounds
	if rounds <= 0 {
		rounds = 3
	}
	bad, sent := 0, 0
	var j judgement
	var id string
	round := 0
	for round < rounds {
		round++
		exact, err := r.exactJudgement(ctx, d, fr)
		if err != nil {
			return nil, err
		}
		req, rid, ok, why := r.freshIdentity(d)
		if !ok {
			ph.Status, ph.Message = report.Skip, "not run: "+why
			return ph, nil
		}
		id = rid
		before, err := r.read(ctx, d, PhaseBurst, fmt.Sprintf("round %d before", round))
		if err != nil {
			return nil, err
		}
		reqs := make([]*message.Request, r.o.Burst)
		for i := range reqs {
			reqs[i] = req
		}
		as := replay.Burst(ctx, r.target, reqs, replay.SendOptions{})
		r.lastSent.Store(time.Now().UnixNano())
		for i := range as {
			if err := r.record(ctx, &as[i], d, PhaseBurst, sent+i+1, id); err != nil {
				return nil, err
			}
			if as[i].Err != "" || !is2xx(as[i].Status) {
				bad++
			}
		}
		sent += len(as)
		after, err := r.readChanged(ctx, d, PhaseBurst, fmt.Sprintf("round %d after", round), before)
		if err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, as...)
		if sp := replay.Spread(as); sp > ph.BurstSpread {
			ph.BurstSpread = sp
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseBurst, before, after)...)
		j = judgeOnce(r.c.Probes, fr.effect, before.vals, after.vals, exact, r.o.ResetCmd != "", fr.before.vals, fr.after.vals)
		r.progress("burst    delivery %d round %d: %d copies (spread %s), %s → %s", d.ID, round, len(as), replay.Spread(as), statuses(countStatuses(nil, as...)), j.status)
		if j.status != report.Pass {
			break // a violation is proven, or the effect cannot be judged: more rounds add nothing
		}
	}
	ph.Attempts = sent
	what := fmt.Sprintf("%d concurrent copies of a fresh event", r.o.Burst)
	if round > 1 {
		what = fmt.Sprintf("%d bursts of %d concurrent copies of a fresh event each", round, r.o.Burst)
	}
	if j.status == report.Fail {
		what = fmt.Sprintf("burst %d: %d concurrent copies of fresh event %s", round, r.o.Burst, id)
	}
	ph.Status, ph.Message, ph.Warnings = j.status, what+": "+j.message, j.warnings
	for _, v := range j.violations {
		v.EventID = id
		ph.Violations = append(ph.Violations, v)
	}
	if bad > 0 {
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("%d of %d concurrent copies were not answered 2xx (%s); the provider retries those", bad, sent, statuses(ph.Statuses)))
	}
	ph.Duration = time.Since(start)
	return ph, nil
}
