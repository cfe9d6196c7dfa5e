//go:build slow

package e2e

import (
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
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
