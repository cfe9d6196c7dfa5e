//go:build slow

package wallet

// A detection-rate test (ten bursts per backend): behind the slow tag, run by
// .ci/run and by go test -tags slow ./examples/wallet.

import (
	"fmt"
	"testing"
)

// TestRacyDetectionRate measures how often a burst of 20 double-credits with
// the default race window; the demo relies on it being (nearly) always.
func TestRacyDetectionRate(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			w := startWallet(t, be, Options{Variant: Racy})
			const trials = 10
			doubled, credits := 0, int64(0)
			var last int64
			for i := 0; i < trials; i++ {
				w.burst(fixture(t, "invoice_paid.json", fmt.Sprintf("evt_rate_%d", i)), 20)
				b := w.balance(customer)
				if b-last > amount {
					doubled++
				}
				credits += (b - last) / amount
				last = b
			}
			t.Logf("racy (window %s, %s): %d/%d bursts of 20 credited more than once, %.1f credits per burst",
				DefaultRaceWindow, be.name, doubled, trials, float64(credits)/trials)
			if doubled < trials-2 {
				t.Errorf("only %d/%d bursts caught the race", doubled, trials)
			}
		})
	}
}
