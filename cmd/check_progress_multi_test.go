package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Several deliveries at once, in a log: a line when each starts, its
// outcome when it is judged with the total after it, step lines held back;
// on a terminal the block of deliveries in flight is redrawn in place and
// replaced by the total at the end.
func TestCheckProgressManyDeliveries(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		m := newMultiProgress(&b, tty)
		p := checkProgress{w: &b, multi: m}
		p.Step(check.Step{Phase: check.PhaseFirst, DeliveryID: 9, Attempts: []store.Attempt{{Status: 200}}}) // before the schedule: a line
		p.Note(check.Note{Kind: check.NoteSchedule, Jobs: 2, Deliveries: 2})
		p.PhaseStarted(check.PhaseStart{Phase: check.PhaseFirst, DeliveryID: 1})
		p.PhaseStarted(check.PhaseStart{Phase: check.PhaseFirst, DeliveryID: 2})
		p.Step(check.Step{Phase: check.PhaseDups, DeliveryID: 2, N: 3, Attempts: []store.Attempt{{Status: 200}}})
		p.DeliveryDone(report.DeliveryResult{DeliveryID: 2, EventType: "invoice.paid", Phases: []report.PhaseResult{{Phase: "first", Status: report.Pass}, {Phase: "dups", Status: report.Fail}}})
		p.DeliveryDone(report.DeliveryResult{DeliveryID: 1, EventType: "invoice.paid", Phases: []report.PhaseResult{{Phase: "first", Status: report.Pass}}})
		m.stop()
		out := b.String()
		for _, want := range []string{"first    delivery 9: 200", "✗ delivery 2 (invoice.paid): fail — dups", "✓ delivery 1 (invoice.paid): pass", "2 of 2 judged (1 pass, 1 fail)"} {
			if !strings.Contains(out, want) {
				t.Errorf("tty %v: no %q in\n%s", tty, want, out)
			}
		}
		if tty != strings.Contains(out, "\x1b[") || tty != strings.Contains(out, "  … first    delivery 1") || strings.Contains(out, "dups     delivery 2 copy 3\n") && !tty {
			t.Errorf("tty %v: the block (in place, with each delivery's latest step) only on a terminal:\n%q", tty, out)
		}
		if !tty && (!strings.Contains(out, "… delivery 1: checking (1 in flight)") || strings.Count(out, "2 of 2 judged") != 1) {
			t.Errorf("log: a line per delivery started, the last total once:\n%s", out)
		}
	}
}
