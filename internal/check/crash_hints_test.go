package check

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// A crash violation's fix follows what the trial showed: the work done again
// after the restart (the record of the id did not outlive the process), or
// the work lost although the provider's marked retry was answered 2xx (a
// handler that acknowledges Slack's X-Slack-Retry-Num retries unprocessed).
func TestJudgeCrashHints(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      crashed
		msg    string
		want   string
		unwant string
	}{
		{"done twice", crashed{a1: store.Attempt{Err: "connection reset"}, a2: store.Attempt{Status: 200}},
			"the event was processed 2 times (1 copy extra)", "the handled ids live in memory", ""},
		{"lost, marked retry acknowledged", crashed{a1: store.Attempt{Err: "connection reset"}, a2: store.Attempt{Status: 200},
			retryMarks: []string{"X-Slack-Retry-Num", "X-Slack-Retry-Reason"}},
			"the event's work was lost", "acknowledges marked retries without processing them", ""},
		{"lost, unmarked retry", crashed{a1: store.Attempt{Err: "connection reset"}, a2: store.Attempt{Status: 200}},
			"the event's work was lost", "", "marked"},
		{"lost, marked retry refused", crashed{a1: store.Attempt{Err: "connection reset"}, a2: store.Attempt{Status: 500},
			retryMarks: []string{"X-Slack-Retry-Num"}}, "the event's work was lost", "", "marked"},
		{"acknowledged, then lost", crashed{a1: store.Attempt{Status: 200}, acked: true}, "the event's work was lost", "before answering 2xx", ""},
		// Behind a queue, waited for in vain: a durable queue may still
		// bring it later than that (BullMQ's stalled-job recovery).
		{"acknowledged, then lost behind a queue", crashed{a1: store.Attempt{Status: 200}, acked: true, waited: 10 * time.Second}, "the event's work was lost",
			"give a longer --settle-max (75s for BullMQ's defaults)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ph := &report.PhaseResult{Phase: PhaseCrash}
			c := tc.c
			c.what = "killed"
			judgeCrash(ph, &trial{id: "evt_1"}, 0, &c, judgement{status: report.Fail,
				violations: []report.Violation{{Probe: "balance", Message: "balance changed: " + tc.msg}}}, "--settle-max")
			if len(ph.Violations) != 1 {
				t.Fatalf("violations: %+v", ph.Violations)
			}
			h := ph.Violations[0].Hint
			if tc.want != "" && !strings.Contains(h, tc.want) {
				t.Errorf("hint %q, want it to contain %q", h, tc.want)
			}
			if tc.unwant != "" && strings.Contains(h, tc.unwant) {
				t.Errorf("hint %q should not contain %q", h, tc.unwant)
			}
		})
	}
}
