package check

import (
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
)

// Every phase that ran says where its time went: sending, settling (the
// quiet waits) and probe readings. Sending and settling never overlap
// (one runner does one at a time), so together they fit in the phase's
// duration; a phase that was not run has no timing.
func TestPhasesSayWhereTheTimeWent(t *testing.T) {
	c, err := customersCheck(t, 1, []Delivery{customerDelivery(t, 1, "cus_a")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Deliveries[0].Phases {
		tm := p.Timing
		if p.Status == report.Skip {
			if tm != nil {
				t.Errorf("%s was not run but has a timing %+v", p.Phase, tm)
			}
			continue
		}
		if tm == nil {
			t.Fatalf("%s: no timing", p.Phase)
		}
		if p.Phase == PhaseLatency {
			continue // sends nothing, reads nothing
		}
		if tm.Sending <= 0 || tm.Settling <= 0 || tm.Reads == 0 || tm.ProbeReads <= 0 {
			t.Errorf("%s: %+v, want time sending, settling and reading", p.Phase, tm)
		}
		if tm.Sending+tm.Settling > p.Duration+time.Millisecond {
			t.Errorf("%s: sending %s + settling %s > duration %s", p.Phase, tm.Sending, tm.Settling, p.Duration)
		}
	}
}
