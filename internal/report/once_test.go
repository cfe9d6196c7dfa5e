package report

import (
	"bytes"
	"strings"
	"testing"
)

// Each distinct warning and fix hint is shown once per delivery: a later
// phase points at the first, a run-level warning is shown below.
func TestTextShowsEachWarningOncePerDelivery(t *testing.T) {
	const long = "a long warning that several phases share"
	const hint = "the one fix for both phases"
	c := &Check{Verdict: VerdictFail, Probes: []string{"count"}, Warnings: []string{"the run's own warning"},
		Deliveries: []DeliveryResult{{DeliveryID: 1, Phases: []PhaseResult{
			{Phase: "burst", Status: Fail, Message: "m", Warnings: []string{long, "the run's own warning"},
				Violations: []Violation{{Message: "v1", Hint: hint}}},
			{Phase: "lost", Status: Fail, Message: "m", Warnings: []string{long}, Violations: []Violation{{Message: "v2", Hint: hint}}},
		}}, {DeliveryID: 2, Phases: []PhaseResult{
			{Phase: "burst", Status: NotJudged, Message: "m", Warnings: []string{long}},
		}}}}
	var b bytes.Buffer
	if err := Text(&b, c, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for text, want := range map[string]int{long: 2, hint: 1, "the run's own warning": 1, "(as under burst)": 2, "(the run's warning below)": 1} {
		if n := strings.Count(out, text); n != want {
			t.Errorf("%q shown %d times, want %d:\n%s", text, n, want, out)
		}
	}
}
