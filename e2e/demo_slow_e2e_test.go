//go:build slow

package e2e

import (
	"runtime"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// TestDemoUnder15s: the README's first command stays within its 15 s
// budget (2–4 s on an idle 2-core machine). Timing-bound, so behind the slow
// tag; TestDemoRunsOffline checks what the demo says. A run over the
// budget is tried once more (a moment's stall of a shared machine), and
// the budget is for a machine that is not overloaded: with a load average
// over twice its CPUs both times (.ci/run beside other work: 16.9 s at a
// load of 10-20 on 2 cores, seen) the test says so and skips.
func TestDemoUnder15s(t *testing.T) {
	const budget = 15 * time.Second
	var took time.Duration
	for try := 1; try <= 2; try++ {
		start := time.Now()
		r := runBin(t, "", nil, "demo")
		took = time.Since(start)
		if r.Code != 0 {
			t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		t.Logf("demo took %s (load average %.1f on %d CPUs)", took.Round(time.Millisecond), testkit.LoadAverage(), runtime.NumCPU())
		if took <= budget {
			return
		}
	}
	if l := testkit.LoadAverage(); l > 2*float64(runtime.NumCPU()) {
		t.Skipf("demo took %s, over the %s budget, with the machine overloaded (load average %.1f on %d CPUs): not a measure of the demo", took, budget, l, runtime.NumCPU())
	}
	t.Fatalf("demo took %s twice, over the %s budget", took, budget)
}
