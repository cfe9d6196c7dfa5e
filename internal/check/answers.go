package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// A provider retries every delivery not answered 2xx. Two kinds of answer
// other than 2xx are judged the same way in every phase that sends copies
// (dups, burst, lost, order, crash), so that a verdict never hides one:
//
//   - a 5xx other than 503 is an error: the handler failed on a copy (under
//     concurrent copies, "cannot start a transaction within a transaction"),
//     and the provider sends it again. The phase fails, with the count and
//     the first answer's body.
//   - 409, 425, 429 and 503 ask the sender to come back later ("already in
//     progress", "too early", "slow down", "not now"): a correct handler may
//     answer a copy so while another copy of the event is being handled. It
//     is a warning, and the provider's next attempt is sent once the phase's
//     copies are answered (retryLater): that one must be answered 2xx, and
//     the event's combined effect must still be its effect once.

// asksRetry reports whether status asks the sender to retry later.
func asksRetry(status int) bool {
	switch status {
	case 409, 425, 429, 503:
		return true
	}
	return false
}

// isServerError reports whether a's answer is a 5xx that does not ask for a
// later retry: the handler failed on the copy.
func isServerError(a store.Attempt) bool {
	return a.Err == "" && !a.Lost && a.Status >= 500 && !asksRetry(a.Status)
}

// retryAsked reports whether a's answer asks the sender to retry later.
func retryAsked(a store.Attempt) bool {
	return a.Err == "" && !a.Lost && asksRetry(a.Status)
}

// answerTally counts a phase's copies answered 5xx and those asked to retry
// later, keeping the first of each to quote.
type answerTally struct {
	// what names the copies in messages ("concurrent copies").
	what string
	// followUp: the phase sends the provider's next attempt after copies
	// asked to retry later (retryLater).
	followUp               bool
	sent                   int
	errors, retries        int
	firstError, firstRetry store.Attempt
	// errorStatuses counts the 5xx answers by status.
	errorStatuses map[string]int
}

// add counts as.
func (t *answerTally) add(as ...store.Attempt) {
	for _, a := range as {
		t.sent++
		switch {
		case isServerError(a):
			if t.errors == 0 {
				t.firstError = a
				t.errorStatuses = map[string]int{}
			}
			t.errors++
			t.errorStatuses[fmt.Sprint(a.Status)]++
		case retryAsked(a):
			if t.retries == 0 {
				t.firstRetry = a
			}
			t.retries++
		}
	}
}

// judge adds to ph the violation for the copies answered 5xx (the phase
// fails) and the warning for those asked to retry later.
func (t *answerTally) judge(ph *report.PhaseResult) {
	if t.errors > 0 {
		a := t.firstError
		msg := fmt.Sprintf("%d of %d %s were answered 5xx (%s): the handler failed on them, and the provider sends each again", t.errors, t.sent, t.what, statuses(t.errorStatuses))
		if b := answerBody(a); b != "" {
			msg += fmt.Sprintf("; copy %d was answered %d %s", a.Copy, a.Status, b)
		}
		ph.Violations = append(ph.Violations, report.Violation{Copy: a.Copy, EventID: a.EventID, Status: a.Status, Message: msg, Hint: hintServerError})
	}
	if t.retries > 0 {
		a := t.firstRetry
		w := fmt.Sprintf("%d of %d %s were answered %d, which asks the provider to retry later", t.retries, t.sent, t.what, a.Status)
		if b := answerBody(a); b != "" {
			w += " (" + b + ")"
		}
		if t.followUp {
			w += "; the provider's next attempt was sent after them and judged"
		}
		ph.Warnings = append(ph.Warnings, w)
	}
}

// failed reports whether t found copies answered 5xx.
func (t *answerTally) failed() bool { return t.errors > 0 }

// conclude makes ph a failure when copies were answered 5xx, its message
// what, then the finding, unless a violation already failed it.
func (t *answerTally) conclude(ph *report.PhaseResult, what string) {
	t.judge(ph)
	if !t.failed() || ph.Status == report.Fail {
		return
	}
	ph.Status = report.Fail
	ph.Message = what + ": " + ph.Violations[len(ph.Violations)-1].Message
}

// otherNotOK counts the attempts that got no answer, or one other than 2xx
// that is neither a 5xx nor a retry-later answer (answerTally's).
func otherNotOK(as []store.Attempt) int {
	n := 0
	for _, a := range as {
		if (a.Err != "" || !is2xx(a.Status)) && !isServerError(a) && !retryAsked(a) {
			n++
		}
	}
	return n
}

// hintServerError is the fix for copies answered 5xx.
const hintServerError = "a copy of an event must be answered 2xx once its work is done or known to be done, whatever else is happening: " +
	"an error answer makes the provider send it again; under concurrent copies it usually means the duplicate check raced " +
	"(a unique-key conflict, a transaction already open on a shared connection) — catch the conflict and answer 2xx"

// retryLater sends the provider's next attempt of the event req carries,
// after copies of it were asked to retry later: it must be answered 2xx. It
// records it as copy n of phase and returns it with the settled reading
// after it, from which the caller judges the event's combined effect.
func (r *runner) retryLater(ctx context.Context, d *Delivery, phase string, req *message.Request, eventID string, n int, from reading) (store.Attempt, reading, error) {
	a := r.send(ctx, r.sameIdentity(d, req, eventID), replay.SendOptions{})
	a.Edit = "provider's retry after a retry-later answer"
	if err := r.record(ctx, &a, d, phase, n, eventID); err != nil {
		return a, reading{}, err
	}
	after, err := r.read(ctx, d, phase, fmt.Sprintf("after the retry of copy %d", n))
	if err != nil {
		return a, reading{}, err
	}
	r.step(Step{Phase: phase, DeliveryID: d.ID, N: n, What: "provider's retry after a retry-later answer", Attempts: []store.Attempt{a}, Changed: !probe.SameValues(from.vals, after.vals)})
	return a, after, nil
}

// judgeRetryLater adds a violation to ph when the provider's retry after a
// retry-later answer (a, copy of event id) was not answered 2xx.
func judgeRetryLater(ph *report.PhaseResult, a store.Attempt, id string) {
	if a.Err == "" && !a.Lost && is2xx(a.Status) {
		return
	}
	msg := fmt.Sprintf("the provider's retry after a retry-later answer was answered %s (want 2xx): the provider keeps retrying an event it is never answered 2xx for, until it gives up", statusText(a))
	if b := answerBody(a); b != "" {
		msg += "; the handler answered " + b
	}
	ph.Violations = append(ph.Violations, report.Violation{Copy: a.Copy, EventID: id, Status: a.Status, Message: msg,
		Hint: "answer a copy of an event that is already done 2xx (the provider needs nothing more); a retry-later answer is for a copy that arrives while the event is still being handled"})
}

// violationsText joins the messages of vs.
func violationsText(vs []report.Violation) string {
	ms := make([]string, len(vs))
	for i, v := range vs {
		ms[i] = v.Message
	}
	return strings.Join(ms, "; ")
}
