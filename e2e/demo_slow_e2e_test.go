//go:build slow

package e2e

import (
	"testing"
	"time"
)

// TestDemoUnder15s: the README's first command stays within its 15 s
// budget (2–4 s on an idle 2-core machine). Timing-bound, so behind the slow
// tag and run alone; TestDemoRunsOffline checks what the demo says.
func TestDemoUnder15s(t *testing.T) {
	start := time.Now()
	r := runBin(t, "", nil, "demo")
	took := time.Since(start)
	if r.Code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if took > 15*time.Second {
		t.Fatalf("demo took %s, over the 15 s budget", took)
	}
	t.Logf("demo took %s", took.Round(time.Millisecond))
}
