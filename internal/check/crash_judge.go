package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// What a crash trial found, in words: when its kill came, and the messages
// and hints of its violations.

// ackLostHint is the fix for a handler that answered 2xx and then lost the
// work when its process died.
const ackLostHint = "do the work (or durably enqueue it, e.g. insert it into a jobs table a worker resumes after a restart) " +
	"before answering 2xx: a provider never retries a delivery it got a 2xx for"

// queueRecoveryHint follows the fix of work lost by a handler that works
// behind a queue: a durable queue gives a dead worker's job out again only
// after a while, which may be longer than the check waited.
func queueRecoveryHint(settleMax string) string {
	return "if the queue is durable and gives a dead worker's job out again later than the check waited " +
		"(BullMQ once the job's lock expires, lockDuration 30 s, at its next stalled-job check, stalledInterval 30 s), " +
		"give a longer " + settleMax + " (75s for BullMQ's defaults), or run the worker with a short lockDuration and stalledInterval for the check"
}

// crashTwiceHint is the fix for an event done again by the retry after a
// kill: the work outlived the process, the record that it was done did not.
const crashTwiceHint = "the work survived the kill but the record that the event was handled did not: the handled ids live in memory, " +
	"or the id is recorded in a separate step after the work (or the work is a call to another service, outside the transaction) — " +
	"record the id durably in the same transaction as the work; for a call to another service, record the id first and pass it as the call's idempotency key"

// markedRetryLostHint is the fix for an event lost although the provider's
// retry, marked with the headers marks, was answered 2xx.
func markedRetryLostHint(marks []string) string {
	return fmt.Sprintf("the event's work was lost although the provider's retry (marked %s) was answered 2xx: either the handler acknowledges marked retries "+
		"without processing them — a retry comes because the first attempt failed, so process it like any delivery and let the event id deduplicate it — "+
		"or it recorded the event as handled before the work, which died with the process: record the id in the same transaction as the work",
		strings.Join(marks, ", "))
}

// killWhen words when a kill whose signal was sent at killAt came, for the
// copy a whose send was called at called.
func killWhen(a store.Attempt, killAt, called time.Time) string {
	if a.CompletedAt.IsZero() || a.CompletedAt.After(killAt) {
		return fmt.Sprintf("%s after sending began", roundDur(killAt.Sub(called)))
	}
	return fmt.Sprintf("%s after the request's last byte", roundDur(killAt.Sub(a.CompletedAt)))
}

// judgeCrash adds trial i's violations and warnings to ph.
func judgeCrash(ph *report.PhaseResult, t *trial, i int, c *crashed, j judgement, settleMax string) {
	for _, v := range j.violations {
		v.EventID = t.id
		v.Copy = c.a2.Copy
		switch {
		case c.acked:
			v.Copy = c.a1.Copy
			if strings.Contains(v.Message, "work was lost") {
				v.Message = strings.Replace(v.Message, "the event's work was lost", fmt.Sprintf("answered %d but the work was lost when the process died", c.a1.Status), 1)
				v.Hint = ackLostHint
			}
		case strings.Contains(v.Message, "work was lost") && len(c.retryMarks) > 0 && is2xx(c.a2.Status):
			v.Hint = markedRetryLostHint(c.retryMarks)
		case strings.Contains(v.Message, "was processed"):
			v.Hint = crashTwiceHint
		}
		if c.waited > 0 && strings.Contains(v.Message, "work was lost") {
			v.Message += fmt.Sprintf(" (nothing came in the %s it waited after the restart for a queue that outlived the process to hand the job out again)", roundDur(c.waited))
			v.Hint += "; " + queueRecoveryHint(settleMax)
		}
		v.Message = c.what + ": " + v.Message
		ph.Violations = append(ph.Violations, v)
	}
	for _, w := range j.warnings {
		ph.Warnings = append(ph.Warnings, c.what+": "+w)
	}
	if !c.acked && (c.a2.Err != "" || !is2xx(c.a2.Status)) && !isServerError(c.a2) {
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("trial %d: the retry after the restart was answered %s (want 2xx)", i+1, statusText(c.a2)))
	}
}
