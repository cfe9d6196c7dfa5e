//go:build slow

package check

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// A handler that answers once the event is in a durable queue, whose jobs a
// restarted process takes up only after queueRecovery (BullMQ's stalled-job
// recovery, 30 s by default), lost nothing: the crash phase waits for the
// work up to --settle-max and passes it, noting the recovery. It was failed
// ('answered 200 but the work was lost when the process died') after a 2 s
// wait. Found with a BullMQ worker enqueuing with jobId = X-GitHub-Delivery.
// Slow: most trials wait out the recovery (about 40 s in all).
func TestRunCrashDurableQueue(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	state := filepath.Join(t.TempDir(), "claimed")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Cmd: "exec '" + exe + "'", Addr: addr,
		Env: []string{"CHECK_TEST_HANDLER=queue", "CHECK_TEST_ADDR=" + addr, "CHECK_TEST_STATE=" + state}}
	u, _ := url.Parse("http://" + addr + "/hook")
	o := Options{Target: u, Deliveries: []Delivery{delivery(t, 1, 4900)}, Probes: []probe.Probe{lines{state}},
		Secret: testSecret, Serve: srv, Phases: []string{PhaseCrash},
		Settle: 50 * time.Millisecond, SettleMax: 2 * queueRecovery}
	c := run(t, o)
	p := phaseOf(t, c, PhaseCrash)
	if p.Status != report.Pass {
		t.Fatalf("crash: %s %s, want pass\n%+v", p.Status, p.Message, p.Violations)
	}
	t.Logf("crash: %s %s (%s)", p.Status, p.Message, p.Duration)
	if !strings.Contains(strings.Join(c.Notes, "\n"), "handed the job out again") {
		t.Errorf("the queue's recovery is not noted: %q", c.Notes)
	}
}
