package check

import (
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// lateEffectNote says in the report when the first delivery's effects were
// still arriving well after the handler answered: its work is done behind
// a queue (a job, an outbox row a worker picks up, a goroutine). That is
// correct when each event is deduplicated before it is enqueued or by the
// worker; the readings waited for it, and the user should know that the
// settle time is what makes the verdict hold.
func (r *runner) lateEffectNote(d *Delivery, fr *firstResult, sentAt time.Time) {
	if !fr.answered || fr.after.lastChange.IsZero() || !anyChanged(fr.effect) {
		return
	}
	// The evidence is a read begun after the answer that did not yet show
	// the final values: when a change was first seen is not, since a read
	// on a loaded machine can finish well after a synchronous handler's
	// commit (a wallet handler was said to work "behind a queue" under load).
	if fr.answeredVals == nil || probe.SameValues(fr.answeredVals, fr.after.vals) {
		return
	}
	answered := sentAt.Add(fr.att.Latency)
	// A synchronous handler's change is seen within a poll of its
	// answer: only later than that is work behind the answer.
	slack := max(20*time.Millisecond, r.pollInterval())
	late := fr.after.lastChange.Sub(answered)
	if late <= slack {
		return
	}
	r.note("delivery %d: effects were still arriving %s after the handler answered (%s): its work is done behind a queue or in the background, which is correct when every event is deduplicated before it is enqueued or by the worker; the readings wait for it (effective settle %s): raise %s if the worker can be slower than that",
		d.ID, report.Duration(late), effectText(fr.effect), report.Duration(r.effSettle), r.name(InputSettle))
}
