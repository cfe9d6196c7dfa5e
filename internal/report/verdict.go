package report

import (
	"fmt"
	"strings"
)

// PhaseOrder is the order phases run in and are shown in.
var PhaseOrder = []string{"first", "dups", "tamper", "burst", "lost", "order", "latency", "crash", "retention"}

// ComputeVerdict derives the run's verdict from its phase statuses: any fail
// makes it fail, else any inconclusive phase makes it inconclusive, else it
// passes (warnings, skips and phases that could not be judged do not fail a run).
func (c *Check) ComputeVerdict() string {
	inconclusive := false
	for _, p := range c.allPhases() {
		switch p.P.Status {
		case Fail:
			return VerdictFail
		case Inconclusive:
			inconclusive = true
		}
	}
	if inconclusive {
		return VerdictInconclusive
	}
	return VerdictPass
}

// ExitCode is the process exit code of a verdict: pass 0, fail 1,
// inconclusive 3 (and 2, a setup error, for anything else).
func ExitCode(verdict string) int {
	switch verdict {
	case VerdictPass:
		return 0
	case VerdictFail:
		return 1
	case VerdictInconclusive:
		return 3
	case VerdictInterrupted:
		return 130
	}
	return 2
}

// signalExit is the exit code of a run stopped by each signal: 128 + its
// number, as shells report it.
var signalExit = map[string]int{"SIGHUP": 129, "SIGINT": 130, "SIGTERM": 143}

// ExitCode is the process exit code c ends with: its verdict's, and for an
// interrupted run the code of the signal that stopped it.
func (c *Check) ExitCode() int {
	if code, ok := signalExit[c.Interrupted]; ok && c.Verdict == VerdictInterrupted {
		return code
	}
	return ExitCode(c.Verdict)
}

// exitMeaning says in a few words what the run's exit code means.
func (c *Check) exitMeaning() string {
	if c.Verdict == VerdictFail && c.failedOnlyFirst() {
		return "the handler did not take an event's first delivery the way a provider needs (a 2xx answer in time): the provider would send it again"
	}
	if c.Verdict == VerdictInconclusive {
		return c.inconclusiveMeaning()
	}
	return exitMeaning(c.Verdict)
}

// inconclusiveMeaning says what an inconclusive run did not prove: which
// deliveries, when others were proven (a check of several deliveries, one
// of an event type the handler ignores, is not "nothing proven"), and
// why, when every inconclusive phase is a first delivery without effect.
func (c *Check) inconclusiveMeaning() string {
	var open []string
	proven, noEffect, handshakes := 0, true, true
	for i := range c.Deliveries {
		d := &c.Deliveries[i]
		inc, first := false, false
		for _, p := range d.Phases {
			switch {
			case p.Status == Inconclusive:
				inc = true
				if p.Phase != "first" || !strings.HasPrefix(p.Message, "the probes saw no effect") {
					noEffect = false
				}
				// check's words for a provider's handshake (Meta's GET
				// hub.mode=subscribe): no probe is missing.
				if p.Phase != "first" || !strings.HasPrefix(p.Message, "the probes saw no effect of the first delivery, and none is due") {
					handshakes = false
				}
			case p.Phase == "first" && p.Status == Pass:
				first = true
			}
		}
		if inc {
			open = append(open, fmt.Sprintf("#%d", d.DeliveryID))
		} else if first {
			proven++
		}
	}
	why := "the probes saw no effect of the first delivery; probe what the handler changes"
	if !noEffect || len(open) == 0 {
		why = "see the phases marked inconclusive for why"
	} else if handshakes {
		// Named, since the first phase's line is far above.
		what := "delivery " + open[0] + " is a provider's handshake, not an event"
		if len(open) > 1 {
			what = "deliveries " + strings.Join(open, ", ") + " are providers' handshakes, not events"
		}
		what += ", so there is no work to do exactly once; check deliveries of events the handler acts on"
		if proven > 0 {
			return fmt.Sprintf("not everything was proven: %s; the other %d were judged", what, proven)
		}
		return "nothing was proven: " + what
	}
	if proven == 0 || len(open) == 0 {
		return "nothing was proven: " + why
	}
	list := strings.Join(open, ", ")
	if len(open) > 8 {
		list = strings.Join(open[:8], ", ") + fmt.Sprintf(" and %d more", len(open)-8)
	}
	if noEffect {
		why += ", or select the event types it acts on (--type): one it ignores has nothing to prove"
	}
	return fmt.Sprintf("not everything was proven: %d of %d deliveries (%s) were not (%s); the other %d were judged",
		len(open), len(open)+proven, list, why, proven)
}

// failedOnlyFirst reports whether every failed phase is a first phase:
// the handler did not accept an event, rather than doing its work twice.
func (c *Check) failedOnlyFirst() bool {
	failed := 0
	for _, r := range c.allPhases() {
		if r.P.Status == Fail {
			if r.P.Phase != "first" {
				return false
			}
			failed++
		}
	}
	return failed > 0
}

// exitMeaning says in a few words what a verdict's exit code means.
func exitMeaning(verdict string) string {
	switch verdict {
	case VerdictPass:
		return "the handler did each event's work exactly once in every judged phase"
	case VerdictFail:
		return "the handler did something more than once (or wrongly) for one event"
	case VerdictInconclusive:
		return "nothing was proven: the probes saw no effect of the first delivery; probe what the handler changes"
	case VerdictInterrupted:
		return "the check was stopped before it finished; the phases above were judged, the one it was in is marked interrupted"
	}
	return "the check did not finish"
}

// phaseRef points at one phase result and the delivery it belongs to (nil
// for the order phase, which spans deliveries).
type phaseRef struct {
	D *DeliveryResult
	P *PhaseResult
}

// allPhases lists every phase result in report order: each delivery's
// phases, then the order phase.
func (c *Check) allPhases() []phaseRef {
	var out []phaseRef
	for i := range c.Deliveries {
		d := &c.Deliveries[i]
		for j := range d.Phases {
			out = append(out, phaseRef{D: d, P: &d.Phases[j]})
		}
	}
	if c.Order != nil {
		out = append(out, phaseRef{P: c.Order})
	}
	return out
}

// tally counts phases by status and violations over a whole run.
type tally struct {
	byStatus   map[Status]int
	phases     int
	violations int
	failed     []string // "dups (delivery 3)" for each failed phase
}

func (c *Check) tally() tally {
	t := tally{byStatus: map[Status]int{}}
	for _, r := range c.allPhases() {
		t.phases++
		t.byStatus[r.P.Status]++
		if r.P.Status == Fail {
			n := len(r.P.Violations)
			if n == 0 {
				n = 1
			}
			t.violations += n
			name := r.P.Phase
			if r.D != nil && len(c.Deliveries) > 1 {
				name += fmt.Sprintf(" (delivery %d)", r.D.DeliveryID)
			}
			t.failed = append(t.failed, name)
		}
	}
	return t
}

// summary is the one-line account of a run shown next to its verdict.
func (c *Check) summary(verdict string) string {
	t := c.tally()
	judged := t.byStatus[Pass] + t.byStatus[Warn] + t.byStatus[Fail]
	var extra []string
	if n := t.byStatus[Warn]; n > 0 {
		extra = append(extra, plural(n, "warning", "warnings"))
	}
	if n := t.byStatus[Skip]; n > 0 {
		extra = append(extra, fmt.Sprintf("%d skipped", n))
	}
	if n := t.byStatus[NotJudged]; n > 0 {
		extra = append(extra, fmt.Sprintf("%d not judged", n))
	}
	if n := t.byStatus[Inconclusive]; n > 0 {
		extra = append(extra, fmt.Sprintf("%d inconclusive", n))
	}
	if n := t.byStatus[Error]; n > 0 {
		extra = append(extra, fmt.Sprintf("stopped in %d", n))
	}
	if n := t.byStatus[Interrupted]; n > 0 {
		extra = append(extra, fmt.Sprintf("interrupted in %d", n))
	}
	var s string
	switch verdict {
	case VerdictFail:
		s = fmt.Sprintf("%s in %s: %s", plural(t.violations, "violation", "violations"),
			plural(len(t.failed), "phase", "phases"), strings.Join(t.failed, ", "))
	case VerdictPass:
		if judged == 0 {
			s = "no phase was judged"
		} else {
			s = fmt.Sprintf("all %d judged %s passed", judged, pluralWord(judged, "phase", "phases"))
		}
	default:
		s = fmt.Sprintf("%d judged %s", judged, pluralWord(judged, "phase", "phases"))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}
