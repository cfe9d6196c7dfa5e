//go:build slow

package keycheck_test

import (
	"context"
	"testing"

	"github.com/hookreplay/hookreplay/internal/demo/idemapi"
	"github.com/hookreplay/hookreplay/internal/keycheck"
	"github.com/hookreplay/hookreplay/internal/report"
)

// The burst catches the check-then-insert race in every run, and never
// flags the correct API: judged over repeated runs, since both are about
// timing.
func TestBurstJudgesRaceAndCorrectEveryTime(t *testing.T) {
	for i := range 10 {
		for _, m := range []idemapi.Mistake{idemapi.Race, idemapi.Correct} {
			o := fullOptions(t, idemapi.New(m), keycheck.Bird)
			o.Checks = []string{"burst", "in-flight"}
			k, err := keycheck.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			got := statuses(k)
			want := report.Pass
			if m == idemapi.Race {
				want = report.Fail
			}
			if got["burst"].Status != want {
				t.Errorf("run %d, %q API: burst %s (want %s): %s", i+1, m, got["burst"].Status, want, got["burst"].Why)
			}
			if got["in-flight"].Status != report.Pass {
				t.Errorf("run %d, %q API: in-flight %s: %s", i+1, m, got["in-flight"].Status, got["in-flight"].Why)
			}
		}
	}
}
