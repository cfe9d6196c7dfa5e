package check

import (
	"strings"

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
)

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
