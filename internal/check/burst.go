package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// burst sends Burst concurrent copies of a fresh event: their combined
// effect must be the first delivery's, once.
func (r *runner) burst(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseBurst, Statuses: map[string]int{}}
	// A race shows only when the copies overlap inside the handler; one
	// burst can miss it (a cold connection pool serialises the copies), so a
	// passing burst is repeated with another fresh event, up to BurstRounds.
	rounds := r.o.BurstRounds
	if rounds <= 0 {
		rounds = 3
	}
	bad, sent := 0, 0
	firstErr := "" // what the first copy without an answer met, for the warning
	answers := &answerTally{what: "concurrent copies", followUp: true}
	var j judgement
	var id string
	round := 0
	for round < rounds {
		round++
		t, why, err := r.startTrial(ctx, d, fr, PhaseBurst, fmt.Sprintf("round %d before", round))
		if err != nil {
			return nil, err
		}
		if t == nil {
			return skipped(ph, why), nil
		}
		id = t.id
		as, after, err := r.burstRound(ctx, d, t, round, sent)
		if err != nil {
			return nil, err
		}
		bad += otherNotOK(as)
		if firstErr == "" {
			firstErr = firstError(as)
		}
		answers.add(as...)
		sent += len(as)
		countStatuses(ph.Statuses, as...)
		if sp := replay.Spread(as); sp > ph.BurstSpread {
			ph.BurstSpread = sp
		}
		if asked(as) {
			// Copies asked to come back later: the provider does, once.
			sent++
			a, later, err := r.retryLater(ctx, d, PhaseBurst, t.req, t.id, sent, after)
			if err != nil {
				return nil, err
			}
			countStatuses(ph.Statuses, a)
			judgeRetryLater(ph, a, t.id)
			after = later
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseBurst, t.before, after)...)
		j = r.judge(fr, t, after)
		r.step(Step{Phase: PhaseBurst, DeliveryID: d.ID, N: round, Attempts: as, Spread: replay.Spread(as), Status: j.status})
		if j.status != report.Pass || answers.failed() || len(ph.Violations) > 0 {
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
	retryViolations := ph.Violations
	ph.Status, ph.Message, ph.Warnings, ph.Violations = j.status, what+": "+j.message, j.warnings, nil
	for _, v := range j.violations {
		v.EventID = id
		ph.Violations = append(ph.Violations, v)
	}
	if len(retryViolations) > 0 {
		ph.Violations = append(ph.Violations, retryViolations...)
		if ph.Status != report.Fail {
			ph.Status, ph.Message = report.Fail, what+": "+retryViolations[0].Message
		}
	}
	answers.conclude(ph, what)
	if bad > 0 {
		why := statuses(ph.Statuses)
		if firstErr != "" {
			// A count of errors alone leaves the reader guessing: a handler
			// whose listen backlog is too small for the burst resets
			// connections, one that cannot take concurrent requests times out.
			why += "; the first error: " + firstErr
			if strings.Contains(firstErr, "connection reset") {
				// Seen with Python's http.server under a burst of 20: its
				// socketserver queues 5 connections and resets the rest.
				why += fmt.Sprintf(" (connections reset under a burst: the handler's listen backlog is smaller than the burst's %d copies; "+
					"Python's http.server and socketserver queue 5 — raise request_queue_size)", r.o.Burst)
			}
		}
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("%d of %d concurrent copies were not answered 2xx (%s); the provider retries those", bad, ph.Attempts, why))
	}
	ph.Duration = time.Since(start)
	return ph, nil
}

// burstRound sends one burst of the trial's event, records its copies
// (numbered after the sent copies of earlier rounds) and reads the probes
// after it.
func (r *runner) burstRound(ctx context.Context, d *Delivery, t *trial, round, sent int) ([]store.Attempt, reading, error) {
	reqs := make([]*message.Request, r.o.Burst)
	for i := range reqs {
		// Each copy signed at its own time, as a provider's attempts are.
		reqs[i] = r.sameIdentity(d, t.req, t.id)
	}
	r.gen.Add(1)
	as := r.burstSend(ctx, reqs)
	r.sent()
	for i := range as {
		if err := r.record(ctx, &as[i], d, PhaseBurst, sent+i+1, t.id); err != nil {
			return nil, reading{}, err
		}
	}
	after, err := r.readChanged(ctx, d, PhaseBurst, fmt.Sprintf("round %d after", round), t.before)
	return as, after, err
}

// firstError is the error of the first attempt that got no answer, or "".
func firstError(as []store.Attempt) string {
	for _, a := range as {
		if a.Err != "" {
			return a.Err
		}
	}
	return ""
}

// asked reports whether any of as was asked to retry later.
func asked(as []store.Attempt) bool {
	for _, a := range as {
		if retryAsked(a) {
			return true
		}
	}
	return false
}

// burstSend sends reqs at once. When deliveries are checked side by side
// it first takes every in-flight slot: one burst at a time, so bursts of
// many events never pile up into a flood.
func (r *runner) burstSend(ctx context.Context, reqs []*message.Request) []store.Attempt {
	if r.flight != nil {
		if r.flight.Acquire(ctx, r.flightCap) == nil {
			defer r.flight.Release(r.flightCap)
		}
	}
	r.clk.sendBegin()
	defer r.clk.sendEnd()
	return replay.Burst(ctx, r.target, reqs, replay.SendOptions{})
}
