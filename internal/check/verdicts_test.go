package check

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
)

// A verdict never hides a failure: copies answered 5xx fail the phase, with
// the count and the answer; retry-later answers (409, 425, 429, 503) are a
// warning, and the provider's next attempt must be answered 2xx without
// doing the work again. A correct handler that asks concurrent copies to
// come back later passes.
func TestAnswersAreJudgedInEveryPhase(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		verdict string
		phase   string
		status  report.Status
		msg     []string
	}{
		{"busy500", report.VerdictFail, PhaseBurst, report.Fail,
			[]string{"concurrent copies were answered 5xx (500×", `"cannot start a transaction within a transaction"`}},
		{"busy409", report.VerdictPass, PhaseBurst, report.Pass, nil},
		{"dup409", report.VerdictFail, PhaseDups, report.Fail,
			[]string{"the provider's retry after a retry-later answer was answered 409"}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			h, u := newHandler(t, tc.kind)
			o := options(h, u, delivery(t, 1, 4900))
			o.Phases = []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost}
			c := run(t, o)
			p := phaseOf(t, c, tc.phase)
			if c.Verdict != tc.verdict || p.Status != tc.status {
				t.Fatalf("verdict %s, %s %s (%s); want %s, %s", c.Verdict, tc.phase, p.Status, p.Message, tc.verdict, tc.status)
			}
			for _, m := range tc.msg {
				if !strings.Contains(p.Message, m) {
					t.Errorf("%s message %q lacks %q", tc.phase, p.Message, m)
				}
			}
			if tc.kind == "busy409" {
				if len(p.Warnings) == 0 || !strings.Contains(strings.Join(p.Warnings, "\n"), "answered 409, which asks the provider to retry later") {
					t.Errorf("burst: the 409s should be a warning: %+v", p.Warnings)
				}
				if p.Statuses["409"] == 0 || p.Attempts != p.Statuses["200"]+p.Statuses["409"] {
					t.Errorf("burst answers %v in %d copies", p.Statuses, p.Attempts)
				}
			}
		})
	}
}

// A fresh event refused because of state (a unique customer) leaves every
// phase that sends fresh events inconclusive for the same reason, naming
// the reset command, exit 3: before, burst was not judged while lost failed
// on the retry's 500.
func TestStateDependentPhasesAreJudgedAlike(t *testing.T) {
	t.Parallel()
	h, u := newHandler(t, "state")
	o := options(h, u, delivery(t, 1, 4900))
	o.Phases = []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost}
	o.Name = func(in Input) string {
		if in == InputReset {
			return "--reset-cmd"
		}
		return ""
	}
	c := run(t, o)
	if c.Verdict != report.VerdictInconclusive {
		t.Fatalf("verdict %s, want inconclusive\n%+v", c.Verdict, c.Deliveries[0].Phases)
	}
	if p := phaseOf(t, c, PhaseDups); p.Status != report.Pass {
		t.Errorf("dups %s (%s), want pass", p.Status, p.Message)
	}
	for _, name := range []string{PhaseBurst, PhaseLost} {
		p := phaseOf(t, c, name)
		if p.Status != report.Inconclusive || !strings.Contains(p.Message, "depends on state") || !strings.Contains(p.Message, "--reset-cmd") {
			t.Errorf("%s %s (%s), want inconclusive naming state and --reset-cmd", name, p.Status, p.Message)
		}
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "burst, lost not judged") || !strings.Contains(c.Warnings[0], "UNIQUE constraint failed") {
		t.Errorf("want one warning naming the phases and the answer: %q", c.Warnings)
	}
}

// Effects that land after the answer are charged to the copy that caused
// them (per-copy settling): a handler that does the work again 30 ms after
// answering every duplicate is counted for all of them, not "7 of 9".
//
// Where waiting after every copy would take too long (late work slower than
// maxPerCopySettle), the copies are counted from the amount instead.
func TestDupsCountsLateWorkPerCopy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		perCopy time.Duration
		want    string
	}{
		{"settled per copy", maxPerCopySettle, "9 of 9 duplicates did the work again (copies 2, 3, 4, 5, 6, 7, 8, 9, 10)"},
		{"counted from the amount", 0, "9 of 9 duplicates did the work again, after they were answered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old time.Duration) { maxPerCopySettle = old }(maxPerCopySettle)
			maxPerCopySettle = tc.perCopy
			h, u := newHandler(t, "late")
			o := options(h, u, delivery(t, 1, 4900))
			o.Phases = []string{PhaseFirst, PhaseDups}
			o.N = 10
			c := run(t, o)
			p := phaseOf(t, c, PhaseDups)
			if p.Status != report.Fail || !strings.Contains(p.Message, tc.want) {
				t.Fatalf("dups %s: %s", p.Status, p.Message)
			}
		})
	}
}
