package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// The retention phase asks whether the handler remembers an event as long as
// the provider can retry it. A dedupe record that expires first (a 24 h
// Redis TTL against Stripe's 3 days of retries) lets a late retry do the
// work again. How long the handler remembers comes from the user
// (Options.DedupeTTL) or is read: a fresh event is sent and the time to live
// of the Redis keys it created is read through the Redis probes. The
// horizon is the provider's last scheduled retry (verify's retry
// timetables). With Options.ForgetCmd the phase also proves what
// forgetting does: it makes the handler forget the first delivery's event,
// resends it, and judges whether the work was done again.

// forgetTimeout bounds the forget command.
const forgetTimeout = time.Minute

// retentionFix is the fix for a dedupe record that expires before the
// provider's last retry.
func retentionFix(horizon time.Duration) string {
	return fmt.Sprintf("keep each event id at least as long as the provider retries, %s or more (e.g. SET evt:<id> 1 NX EX %d), "+
		"or record handled ids durably (a processed_events table with a unique key) and let the short-lived key be only a fast path",
		span(horizon), int64(horizon/time.Second))
}

// span is a long duration as people say it: "24h", "3d", "2d4h".
func span(d time.Duration) string { return strings.TrimPrefix(report.StandsFor(d), "+") }

// remembered is how long the handler keeps an event id, and how that is known.
type remembered struct {
	ttl time.Duration // 0: not known
	how string
	// keys are the keys the fresh event created (read, not declared).
	keys []string
	// probes are the indexes of the Redis probes that read those keys:
	// their change is the dedupe record's, not the work's.
	probes []int
}

// retentionJudged reports whether retention has what to judge on: a
// declared dedupe TTL, a Redis probe that counts keys, or a forget command.
func (r *runner) retentionJudged() bool {
	return r.o.DedupeTTL > 0 || len(r.ttlProbes()) > 0 || r.o.ForgetCmd != ""
}

func (r *runner) retention(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	redisProbes := r.ttlProbes()
	if !r.retentionJudged() {
		if len(r.o.Phases) == 0 {
			return nil, nil // nothing to judge it on, and not asked for: not shown
		}
		return &report.PhaseResult{Phase: PhaseRetention, Status: report.Skip, Statuses: map[string]int{},
			Message: fmt.Sprintf("not run: needs %s, or %s (KEYS-COUNT or DBSIZE) that counts the handler's dedupe keys", r.name(InputDedupeTTL), r.name(InputRedisProbe))}, nil
	}
	ph := &report.PhaseResult{Phase: PhaseRetention, Statuses: map[string]int{}}
	defer func() { ph.Duration = time.Since(start) }()
	horizon, source, known := verify.RetryHorizon(d.Scheme)
	mem := remembered{ttl: r.o.DedupeTTL, how: "as declared with " + r.name(InputDedupeTTL)}
	if mem.ttl <= 0 && len(redisProbes) > 0 {
		var why string
		var err error
		if mem, why, err = r.readRetention(ctx, d, ph, redisProbes); err != nil {
			return nil, err
		}
		if why != "" {
			ph.Status, ph.Message = report.NotJudged, "not judged: "+why
			return ph, nil
		}
	}
	if !known {
		ph.Status = report.NotJudged
		ph.Message = fmt.Sprintf("not judged: provider %s publishes no retry timetable hookreplay knows, so there is no horizon to hold %s against", orGeneric(d.Provider), rememberedText(mem))
		return ph, nil
	}
	if mem.ttl > 0 && mem.ttl >= horizon {
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("event ids are kept %s (%s), as long as %s retries (up to %s: %s)", span(mem.ttl), mem.how, d.Provider, span(horizon), source)
		return ph, nil
	}
	if r.o.ForgetCmd != "" {
		return r.forget(ctx, d, fr, ph, mem, horizon)
	}
	if mem.ttl <= 0 {
		ph.Status = report.Pass
		ph.Message = rememberedText(mem)
		return ph, nil
	}
	ph.Status = report.Fail
	v := report.Violation{EventID: fr.eventID, Hint: retentionFix(horizon),
		Message: fmt.Sprintf("event ids are forgotten after %s (%s), but %s retries for up to %s: a late retry does the work again (give %s to prove it)",
			span(mem.ttl), mem.how, d.Provider, span(horizon), r.name(InputForget))}
	ph.Violations = append(ph.Violations, v)
	ph.Message = v.Message
	return ph, nil
}

// rememberedText says how long event ids are kept, as far as is known.
func rememberedText(m remembered) string {
	switch {
	case m.ttl > 0:
		return fmt.Sprintf("event ids kept %s (%s)", span(m.ttl), m.how)
	case len(m.keys) > 0:
		return fmt.Sprintf("the keys a fresh event created never expire (%s)", strings.Join(short3(m.keys), ", "))
	}
	return "how long event ids are kept is not known"
}

// ttlProbes are the indexes of the Redis probes that count keys (KEYS-COUNT,
// DBSIZE), whose new keys an event's dedupe records are. A GET reads one
// value — a counter, most often — and is left out.
func (r *runner) ttlProbes() []int {
	var out []int
	for k, p := range r.o.Probes {
		if rp := probe.AsRedis(p); rp != nil && slices.Contains([]string{"KEYS-COUNT", "DBSIZE"}, rp.Spec().Command) {
			out = append(out, k)
		}
	}
	return out
}

// readRetention sends a fresh event and reads the time to live of the keys
// it created through the Redis probes; why says why it could not.
func (r *runner) readRetention(ctx context.Context, d *Delivery, ph *report.PhaseResult, probes []int) (remembered, string, error) {
	req, id, ok, why := r.freshIdentity(d)
	if !ok {
		return remembered{}, why + ", which reading the keys an event creates needs; or give " + r.name(InputDedupeTTL), nil
	}
	snapshot := func() ([]map[string]time.Duration, error) {
		out := make([]map[string]time.Duration, len(probes))
		for i, k := range probes {
			m, err := probe.AsRedis(r.o.Probes[k]).KeyTTLs(ctx)
			if err != nil {
				return nil, &SetupError{Err: err}
			}
			out[i] = m
		}
		return out, nil
	}
	before, err := r.readQuiet(ctx, d, PhaseRetention, "before a fresh event")
	if err != nil {
		return remembered{}, "", err
	}
	keysBefore, err := snapshot()
	if err != nil {
		return remembered{}, "", err
	}
	a := r.send(ctx, req, replay.SendOptions{})
	if err := r.record(ctx, &a, d, PhaseRetention, 1, id); err != nil {
		return remembered{}, "", err
	}
	ph.Attempts++
	countStatuses(ph.Statuses, a)
	if _, err := r.readChanged(ctx, d, PhaseRetention, "after a fresh event", before); err != nil {
		return remembered{}, "", err
	}
	keysAfter, err := snapshot()
	if err != nil {
		return remembered{}, "", err
	}
	r.step(Step{Phase: PhaseRetention, DeliveryID: d.ID, N: 1, What: "fresh event, keys read", Attempts: []store.Attempt{a}})
	mem := remembered{}
	var shortest string
	for i, after := range keysAfter {
		for key, ttl := range after {
			if _, had := keysBefore[i][key]; had {
				continue
			}
			mem.keys = append(mem.keys, key)
			if !slices.Contains(mem.probes, probes[i]) {
				mem.probes = append(mem.probes, probes[i])
			}
			if ttl > 0 && (mem.ttl == 0 || ttl < mem.ttl) {
				mem.ttl, shortest = ttl, key
			}
		}
	}
	slices.Sort(mem.keys)
	if len(mem.keys) == 0 {
		return mem, fmt.Sprintf("the fresh event %s (answered %s) created no key the Redis probes read; give %s if the handler remembers event ids elsewhere", id, statusText(a), r.name(InputDedupeTTL)), nil
	}
	if mem.ttl > 0 {
		// A key read a moment after it was set has lost that moment of its
		// TTL: round up to the second, as EX was given.
		mem.ttl = mem.ttl.Round(time.Second)
		mem.how = fmt.Sprintf("the fresh event %s created %s with that TTL", id, shortest)
	}
	return mem, "", nil
}

// forget makes the handler forget the first delivery's event with the
// forget command, resends it as the provider's late retry, and judges
// whether the work was done again.
func (r *runner) forget(ctx context.Context, d *Delivery, fr *firstResult, ph *report.PhaseResult, mem remembered, horizon time.Duration) (*report.PhaseResult, error) {
	before, err := r.readQuiet(ctx, d, PhaseRetention, "before forgetting")
	if err != nil {
		return nil, err
	}
	if err := runShell(ctx, r.o.ForgetCmd, forgetTimeout, "HOOKREPLAY_EVENT_ID="+fr.eventID); err != nil {
		return nil, &SetupError{Err: fmt.Errorf("forget command: %w", err)}
	}
	r.gen.Add(1)
	a := r.send(ctx, asRetry(d, r.sameIdentity(d, fr.req, fr.eventID), 1), replay.SendOptions{})
	a.Edit = "late retry after forgetting"
	if err := r.record(ctx, &a, d, PhaseRetention, ph.Attempts+1, fr.eventID); err != nil {
		return nil, err
	}
	ph.Attempts++
	countStatuses(ph.Statuses, a)
	after, err := r.readChanged(ctx, d, PhaseRetention, "after the late retry", before)
	if err != nil {
		return nil, err
	}
	// The dedupe keys themselves come back with the retry: only the other
	// probes are the work.
	var work []report.ProbeDelta
	for k, pd := range deltas(r.c.Probes, before.vals, after.vals) {
		if pd.Changed && !slices.Contains(mem.probes, k) {
			work = append(work, pd)
		}
	}
	ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseRetention, before, after)...)
	r.step(Step{Phase: PhaseRetention, DeliveryID: d.ID, N: ph.Attempts, What: "late retry after forgetting", Attempts: []store.Attempt{a}, Effect: work, Changed: len(work) > 0})
	forgotten := "event ids are forgotten"
	if mem.ttl > 0 {
		forgotten = fmt.Sprintf("event ids are forgotten after %s (%s)", span(mem.ttl), mem.how)
	}
	switch {
	case len(work) > 0 && mem.ttl > 0:
		ph.Status = report.Fail
		v := report.Violation{EventID: fr.eventID, Hint: retentionFix(horizon),
			Message: fmt.Sprintf("%s, but %s retries for up to %s: once %s had made the handler forget event %s, its late retry did the work again (%s)",
				forgotten, d.Provider, span(horizon), r.name(InputForget), fr.eventID, effectText(work))}
		ph.Violations = append(ph.Violations, v)
		ph.Message = v.Message
	case len(work) > 0:
		ph.Status = report.NotJudged
		ph.Message = fmt.Sprintf("not judged: once %s had made the handler forget event %s, its late retry did the work again (%s); whether a real retry can come that late depends on how long ids are kept: give %s",
			r.name(InputForget), fr.eventID, effectText(work), r.name(InputDedupeTTL))
	case !is2xx(a.Status):
		ph.Status = report.NotJudged
		ph.Message = fmt.Sprintf("not judged: the late retry after forgetting was answered %s", statusText(a))
	default:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("%s before %s's last retry (up to %s), but once %s had made the handler forget event %s its late retry changed nothing: another guard holds",
			forgotten, d.Provider, span(horizon), r.name(InputForget), fr.eventID)
	}
	return ph, nil
}

// short3 is the first three of keys, and how many more.
func short3(keys []string) []string {
	if len(keys) <= 3 {
		return keys
	}
	return append(keys[:3:3], fmt.Sprintf("%d more", len(keys)-3))
}
