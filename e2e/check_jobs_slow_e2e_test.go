//go:build slow

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/report"
)

// Every wallet variant, full default check (no --phases, no --settle):
// --jobs 1 and --jobs 4 give every delivery the same status in every phase
// (issue 28 §2: verdicts never depend on the schedule). slow is left out:
// its 1 s answers only test latency, which the default suite covers.
func TestCheckJobsSameVerdictsEveryWallet(t *testing.T) {
	db := t.TempDir() + "/h.db"
	ids := jobsDeliveries(t, db)
	variants := append(append([]string{}, wallet.Variants...), wallet.TestVariants...)
	for _, variant := range variants {
		if variant == wallet.Slow {
			continue
		}
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			c := checkBothModes(t, db, variant, ids)
			t.Logf("%s: verdict %s, %d deliveries, the same in both modes", variant, c.Verdict, len(c.Deliveries))
		})
	}
}

// The same with a probe that is not scoped (every customer's balance):
// --jobs 4 checks the deliveries after the first as a group, and every
// delivery's every phase has the status --jobs 1 gives it, on every wallet
// variant, state-dependent ones (workfirst, claimfirst, conflict, lastwrite)
// and the racy one included.
func TestCheckGroupSameVerdictsEveryWallet(t *testing.T) {
	db := t.TempDir() + "/h.db"
	ids := jobsDeliveries(t, db)
	variants := append(append([]string{}, wallet.Variants...), wallet.TestVariants...)
	for _, variant := range variants {
		if variant == wallet.Slow {
			continue
		}
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			c := checkBothModesProbe(t, db, variant, totalBalanceSQL, ids)
			t.Logf("%s: verdict %s, %d deliveries, the same in both modes; notes: %q", variant, c.Verdict, len(c.Deliveries), c.Notes)
		})
	}
}

// The end-to-end QA handlers (check_e2e_test.go), whose probe is not
// scoped (SELECT v FROM balance), with three deliveries: --jobs 1 and the
// default (the deliveries after the first as a group) give every delivery
// the same status in every phase, correct and buggy handlers alike.
func TestCheckGroupSameVerdictsQAHandlers(t *testing.T) {
	db := t.TempDir() + "/h.db"
	var ids []string
	for range 3 {
		ids = append(ids, fmt.Sprint(checkStripeDelivery(t, db)))
	}
	for _, tc := range []struct {
		name string
		h    func() *qaHandler
	}{
		{"correct", func() *qaHandler { return &qaHandler{Amount: 50, Dedupe: true, Verify: true} }},
		{"naive", func() *qaHandler { return &qaHandler{Amount: 50, Verify: true} }},
		{"nosig", func() *qaHandler { return &qaHandler{Amount: 50, Dedupe: true} }},
		{"decimal", func() *qaHandler { return &qaHandler{Amount: 19.99, Dedupe: true, Verify: true} }},
		{"flaky dedupe", func() *qaHandler { return &qaHandler{Amount: 50, Verify: true, WorkOn: map[int]bool{1: true, 3: true}} }},
		{"async", func() *qaHandler {
			return &qaHandler{Amount: 50, Dedupe: true, Verify: true, Async: true, WorkDelay: 150 * time.Millisecond}
		}},
		{"signature key", func() *qaHandler {
			return &qaHandler{Amount: 50, Dedupe: true, Verify: true, DedupeOn: "Stripe-Signature"}
		}},
		{"verify throws", func() *qaHandler { return &qaHandler{Amount: 50, Dedupe: true, Verify: true, VerifyStatus: 500} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got [2]*report.Check
			var codes [2]int
			for i, jobs := range []string{"1", "4"} {
				url, dsn := startQAHandler(t, tc.h())
				args := append([]string{"--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret, "--settle", "100ms", "--jobs", jobs}, ids...)
				r, c := checkRunJSON(t, db, args...)
				if c == nil {
					t.Fatalf("--jobs %s: exit %d\n%s", jobs, r.Code, r.Stderr)
				}
				got[i], codes[i] = c, r.Code
			}
			a, b := verdicts(got[0]), verdicts(got[1])
			if codes[0] != codes[1] || strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Fatalf("--jobs 1 (exit %d) and the default (exit %d) disagree:\n%s\n---\n%s\ngrouped run:\n%s", codes[0], codes[1],
					strings.Join(a, "\n"), strings.Join(b, "\n"), checkDump(got[1]))
			}
			t.Logf("%s: exit %d in both modes; notes: %q", tc.name, codes[0], got[1].Notes)
		})
	}
}
