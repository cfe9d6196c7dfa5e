package check

import (
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// Fix hints chosen from what a violation showed (the work done twice, the
// work lost, work done after answering), not from the phase alone: advice
// about a "claim" means nothing to a handler that has none.
const (
	hintDoubled = "the handler did the work again for an event id it had already handled: record handled event ids under a unique key and skip the work when the id is already there, in the same transaction as the work"
	hintRacing  = "one copy at a time was recognised as a duplicate, copies arriving together were not: the \"already handled?\" check and the record of the id are separate steps, so concurrent copies all pass the check — make them one atomic statement (INSERT … ON CONFLICT DO NOTHING on a unique key) inside the work's transaction"
	hintRetry   = "the provider's retry of an event whose answer was lost did the work again: the handler must recognise the event id on the retry, not rely on the sender having seen its answer"
	hintLost    = "the event's work was lost: the handler recorded the event as handled but the work did not happen (recorded before the work, or the work failed after it) — record the id in the same transaction as the work, or only after the work succeeded"
	hintLate    = "the duplicates were answered first and the work done afterwards, in the background: that background work must check the event id too, in the same transaction as the work"
	hintForged  = "the handler queued work for a forged copy and did it after answering: verify the signature before queueing anything"
	hintForgets = "copies arriving together were recognised as one event, copies arriving after its work was done were not: the record of the event id does not outlive the work — " +
		"a queue's job id deduplicates only while the job exists (BullMQ's jobId with removeOnComplete, a job deleted when done), an in-flight set or a lock is released when the work ends — " +
		"keep handled ids after the work, as long as the provider retries (a processed_events table with a unique key, or completed jobs kept that long)"
)

// forgetfulHints rewords the hints of dr's dups and lost violations when the
// burst passed: one event's concurrent copies were recognised, while copies
// sent one after another, after the first had done its work, each did it
// again. That handler does record the id, and "record handled event ids"
// sends its author after something they have; what it lacks is keeping the
// id once the work is done. Seen with BullMQ's jobId and removeOnComplete.
func forgetfulHints(dr *report.DeliveryResult) {
	var burstPassed, dupsDoubled bool
	for _, p := range dr.Phases {
		switch p.Phase {
		case PhaseBurst:
			burstPassed = p.Status == report.Pass
		case PhaseDups:
			for _, v := range p.Violations {
				dupsDoubled = dupsDoubled || v.Hint == hintDoubled || v.Hint == hintLate
			}
		}
	}
	if !burstPassed || !dupsDoubled {
		return
	}
	for i := range dr.Phases {
		p := &dr.Phases[i]
		if p.Phase != PhaseDups && p.Phase != PhaseLost {
			continue
		}
		for j := range p.Violations {
			if h := p.Violations[j].Hint; h == hintDoubled || h == hintLate || h == hintRetry {
				p.Violations[j].Hint = hintForgets
			}
		}
	}
}

// observedHints sets the hint of each violation in ph that shows the work
// done more than once or lost, from what was observed; dupsPassed says
// whether sequential duplicates of the delivery were recognised.
func observedHints(ph *report.PhaseResult, dupsPassed bool) {
	for i := range ph.Violations {
		v := &ph.Violations[i]
		if v.Probe == "" || v.Hint != "" {
			continue
		}
		switch {
		case strings.Contains(v.Message, "work was lost"), strings.Contains(v.Message, "did not change, but the first delivery changed it"):
			v.Hint = hintLost
		case ph.Phase == PhaseTamper && strings.Contains(v.Message, "after the forged copies were answered"):
			v.Hint = hintForged
		case ph.Phase == PhaseTamper:
		case ph.Phase == PhaseDups && strings.Contains(v.Message, "after the duplicates"):
			v.Hint = hintLate
		case ph.Phase == PhaseLost:
			v.Hint = hintRetry
		case ph.Phase == PhaseBurst && dupsPassed:
			v.Hint = hintRacing
		case ph.Phase == PhaseDups || ph.Phase == PhaseBurst:
			v.Hint = hintDoubled
		}
	}
}

// outsideHints rewords the hints of ph's violations whose probe counts an
// effect outside the handler's database: an email (the SMTP sink) or a call
// to another service (the HTTP sink). "Record the id in the same
// transaction as the work" cannot help there: an email cannot join a
// transaction, and a handler that commits and then sends loses the email
// to a crash between the two, for good (the retry finds the event handled).
func (r *runner) outsideHints(ph *report.PhaseResult) {
	for i := range ph.Violations {
		v := &ph.Violations[i]
		what := r.outsideEffect(v.Probe)
		if what == "" || v.Hint == "" {
			continue
		}
		switch {
		case strings.Contains(v.Message, "work was lost"), strings.Contains(v.Message, "did not change, but the first delivery changed it"):
			if v.Hint != ackLostHint {
				v.Hint = outsideLostHint(what)
			}
		case v.Hint == crashTwiceHint:
			v.Hint = outsideTwiceHint(what)
		}
	}
}

// outsideEffect names what the probe called name counts when it is outside
// the handler's database ("email", "call to the downstream API"), else "".
func (r *runner) outsideEffect(name string) string {
	if name == "" {
		return ""
	}
	for k, p := range r.o.Probes {
		if k >= len(r.c.Probes) || r.c.Probes[k] != name {
			continue
		}
		switch {
		case probe.IsSMTP(p):
			return "email"
		case probe.IsSink(p):
			return "call to the downstream API"
		}
	}
	return ""
}

// outsideLostHint is the fix for an email or an outside call lost after the
// event was recorded as handled.
func outsideLostHint(what string) string {
	h := fmt.Sprintf("the %[1]s was lost: the event was recorded as handled (committed) before the %[1]s went out, so a crash between the two loses it for good "+
		"and the retry finds the event handled and skips it. Recording the id with the work cannot help, since the %[1]s cannot join the database transaction: in that transaction, insert an outbox row "+
		"(the %[1]s to make, keyed by the event id) with the work, and let a worker make it and mark the row done, retrying until it succeeds", what)
	if what == "email" {
		return h + "; with an email API that takes an idempotency key, the worker passes the outbox row's id as that key, so a crash after sending repeats nothing"
	}
	return h + "; or make the call before recording the event, passing the event id as the downstream's own idempotency key (Idempotency-Key), so the retry's repeat of it does nothing"
}

// outsideTwiceHint is the fix for an email or an outside call made again by
// the retry after a crash.
func outsideTwiceHint(what string) string {
	h := fmt.Sprintf("the %[1]s was made again after the restart: the record that it was made did not survive the kill — "+
		"insert an outbox row (keyed by the event id, under a unique key) in the same transaction as the event's work, and let a worker make the %[1]s and mark the row done", what)
	if what == "email" {
		return h + "; a crash between sending and marking can still repeat one email, unless the email API takes an idempotency key: pass the row's id as that key"
	}
	return h + ", passing the row's id (or the event id) as the downstream's own idempotency key (Idempotency-Key), so a repeat does nothing"
}
