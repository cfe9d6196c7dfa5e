package report

import (
	"bytes"
	"strings"
	"testing"
)

// An inconclusive check of several deliveries, some of them proven, says
// which were not instead of "nothing was proven" (a nightly --one-per-type
// check meets event types the handler ignores); a check that proved
// nothing still says so; a first copy not accepted is not called "no effect".
func TestExitLineInconclusiveNamesWhatWasNotProven(t *testing.T) {
	noEffect := PhaseResult{Phase: "first", Status: Inconclusive, Message: "the probes saw no effect of the first delivery; probe what the handler changes"}
	passed := []PhaseResult{{Phase: "first", Status: Pass}, {Phase: "dups", Status: Pass}}
	text := func(ds ...DeliveryResult) (string, string) {
		c := &Check{Deliveries: ds}
		c.Verdict = c.ComputeVerdict()
		var b, m bytes.Buffer
		if err := Text(&b, c, false); err != nil {
			t.Fatal(err)
		}
		if err := Markdown(&m, c); err != nil {
			t.Fatal(err)
		}
		return b.String(), m.String()
	}
	mixed, md := text(DeliveryResult{DeliveryID: 2, Phases: passed}, DeliveryResult{DeliveryID: 4, Phases: []PhaseResult{noEffect, {Phase: "dups", Status: Skip}}},
		DeliveryResult{DeliveryID: 3, Phases: passed})
	for _, s := range []string{mixed, md} {
		if !strings.Contains(s, "not everything was proven: 1 of 3 deliveries (#4) were not (the probes saw no effect") || !strings.Contains(s, "the other 2 were judged") ||
			strings.Contains(s, "nothing was proven") {
			t.Errorf("two of three proven:\n%s", s)
		}
	}
	none, _ := text(DeliveryResult{DeliveryID: 4, Phases: []PhaseResult{noEffect}})
	if !strings.Contains(none, "exit 3: nothing was proven: the probes saw no effect of the first delivery") {
		t.Errorf("nothing proven:\n%s", none)
	}
	stale, _ := text(DeliveryResult{DeliveryID: 5, Phases: []PhaseResult{{Phase: "first", Status: Inconclusive, Message: "the first copy was answered 400 with its captured signature"}}})
	if !strings.Contains(stale, "exit 3: nothing was proven: see the phases marked inconclusive") || strings.Contains(stale, "saw no effect of the first delivery;") {
		t.Errorf("a first copy refused is not 'no effect':\n%s", stale)
	}
}
