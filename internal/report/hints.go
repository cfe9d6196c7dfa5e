package report

import "strings"

// hints are the fix hints shown under a violation, keyed by phase. They live
// here, as data, so every format gives the same advice.
var hints = map[string]string{
	"first": "the first copy must be accepted with a 2xx: check that --to points at the webhook route " +
		"and that --secret is the handler's signing secret",
	"dups": "claim the event id first: insert (source, event id) into a table with a unique constraint, " +
		"in the same transaction as the work, and do nothing when the insert conflicts",
	"burst": "claim the event id first: insert (source, event id) into a table with a unique constraint, " +
		"in the same transaction as the work; a SELECT-then-INSERT check races when copies arrive together",
	"lost": "claim the event id first: insert (source, event id) into a table with a unique constraint, " +
		"in the same transaction as the work, so the provider's retry of a delivery whose answer was lost does nothing",
	"order": "compare versions or event timestamps before applying: store the newest version (or " +
		"created timestamp) seen per object and ignore events older than it",
	"tamper": "verify the signature (and its timestamp, rejecting ones older than the provider's tolerance) " +
		"before acting, and answer 4xx when it does not match",
	"latency": "answer fast: record the event and answer 2xx, then do the work from a queue",
	"crash": "make the claim and the work one transaction, or recover stale \"processing\" claims " +
		"(re-run events claimed longer ago than the handler's timeout)",
	"retention": "keep each event id at least as long as the provider retries, or record handled ids durably " +
		"(a processed_events table with a unique key) and let a short-lived key be only a fast path",
}

// dupStatusHint is the hint for a copy of an already handled event that was
// answered with an error: providers retry those, so the error itself causes
// more deliveries.
const dupStatusHint = "answer duplicates with 2xx: a copy of an event already handled is a success, " +
	"and an error answer makes the provider retry it again"

// Hint returns the fix hint for a violation in phase, or "" when there is none.
func Hint(phase string) string {
	return hints[phase]
}

// HintFor returns the hint to show for v in phase: v.Hint when the check
// engine set one, else the hint for the kind of violation.
func HintFor(phase string, v Violation) string {
	if v.Hint != "" {
		return v.Hint
	}
	switch phase {
	case "dups", "burst", "lost", "crash":
		// A probe-less violation with an error status is about the answer,
		// not about the work being done twice.
		if v.Status != 0 && (v.Status < 200 || v.Status > 299) && v.Probe == "" {
			return dupStatusHint
		}
	}
	return Hint(strings.ToLower(phase))
}

// showHint reports whether violation i of vs shows its hint: it has one and
// the next violation does not repeat it (a hint is said once, after the last
// violation of a run of violations that share it).
func showHint(vs []Violation, i int) bool {
	return vs[i].Hint != "" && (i+1 == len(vs) || vs[i+1].Hint != vs[i].Hint)
}

// once shows each distinct warning and fix hint once per delivery: a text
// met again under a later phase (or the run's own warning, shown below the
// phases) is replaced by a pointer to where it is, so a long warning is read
// once, attached to the phases it concerns by name.
type once struct {
	// at holds each text shown so far and the phase it was shown under.
	at map[string]string
	// run holds the run-level warnings.
	run map[string]bool
}

func newOnce(c *Check) *once {
	o := &once{at: map[string]string{}, run: map[string]bool{}}
	for _, w := range c.Warnings {
		o.run[w] = true
	}
	return o
}

// delivery starts a new delivery: what its phases show is its own.
func (o *once) delivery() { o.at = map[string]string{} }

// text returns what to show for text under phase: text itself the first
// time, a pointer after, or for a run-level warning.
func (o *once) text(phase, text string) string {
	if o == nil {
		return text
	}
	if o.run[text] {
		return "(the run's warning below)"
	}
	if first, ok := o.at[text]; ok && first != phase {
		return "(as under " + first + ")"
	} else if ok {
		return "(as above)"
	}
	o.at[text] = phase
	return text
}

// warnHint is the hint shown under a phase's warnings: only latency warns
// about something the handler should change.
func warnHint(ph *PhaseResult) string {
	if ph.Status == Warn && len(ph.Warnings) > 0 && ph.Phase == "latency" {
		return Hint("latency")
	}
	return ""
}
