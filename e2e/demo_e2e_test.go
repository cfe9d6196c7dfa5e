package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The README's first command: offline, exit 0 when naive fails dups, racy
// passes dups and fails burst, and fixed passes everything. Its 15 s budget
// is TestDemoUnder15s's (behind the slow tag: timing-bound).
func TestDemoRunsOffline(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	start := time.Now()
	r := runBin(t, "", nil, "demo")
	took := time.Since(start)
	if r.Code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		`wallet variant "naive"`, `wallet variant "racy"`, `wallet variant "fixed"`,
		"from 5000 to 10000 (want 5000", // naive: the $50 invoice credited $100
		"reproduce it by hand", "hookreplay demo serve racy", "hookreplay check --last",
		"demo ok",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, r.Stdout)
		}
	}
	// The temp dir is removed: the commands to reproduce it must not name it.
	if by := r.Stdout[strings.Index(r.Stdout, "reproduce it by hand"):]; strings.Contains(by, "hookreplay-demo-") ||
		!strings.Contains(by, "mkdir hookreplay-demo && cd hookreplay-demo") || !strings.Contains(by, "--dsn sqlite:racy.db") {
		t.Errorf("the commands to reproduce the demo name its removed dir or no dir of their own:\n%s", by)
	}
	t.Logf("demo took %s", took.Round(time.Millisecond))
}

func TestDemoKeepPrintsDir(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	r := runBin(t, "", nil, "demo", "--keep")
	if r.Code != 0 || !strings.Contains(r.Stdout, "demo dir kept: ") {
		t.Fatalf("demo --keep: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	dir := strings.TrimSpace(r.Stdout[strings.LastIndex(r.Stdout, "demo dir kept: ")+len("demo dir kept: "):])
	dir = strings.SplitN(dir, "\n", 2)[0]
	if !strings.Contains(dir, "hookreplay-demo-") {
		t.Fatalf("kept dir %q", dir)
	}
	t.Cleanup(func() { _ = removeAllDemo(dir) })
	r = runBin(t, dir+"/hookreplay.db", nil, "list")
	if r.Code != 0 || !strings.Contains(r.Stdout, "invoice.payment_succeeded") {
		t.Fatalf("the kept store lacks the captured delivery: %+v", r)
	}
}

func removeAllDemo(dir string) error {
	if !strings.Contains(dir, "hookreplay-demo-") {
		return nil
	}
	return os.RemoveAll(dir)
}
