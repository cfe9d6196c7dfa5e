//go:build slow

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// TestTeamTUIStoreDown: docs/team.md's "when the store is down" for the
// TUI. With the Postgres server stopped, a TUI open on it says so in its
// status bar (and keeps its rows); once the server is back the message goes
// and a delivery captured then appears live. A private server
// (testkit.StartPostgres): the shared one is not stopped under other tests.
func TestTeamTUIStoreDown(t *testing.T) {
	srv := testkit.StartPostgres(t)
	db := srv.DSN()
	_, addr := captureStart(t, db, "--source", "staging", "--quiet")
	gh := mustRead(t, "testdata/export/github.http")
	first := captureAckID(t, captureExchange(t, addr, gh, 1)[0])

	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db '%s' tui; sleep 600", binPath, db))
	tm.waitFor("1/1 deliveries", fmt.Sprintf("> %d ", first))

	srv.Stop()
	down := time.Now()
	s := tm.waitFor("connection lost")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "connection lost") {
			t.Logf("%s after the server stopped the TUI said: %s", time.Since(down).Round(10*time.Millisecond), strings.TrimSpace(l))
		}
	}
	if !strings.Contains(s, fmt.Sprintf("> %d ", first)) {
		t.Fatalf("the TUI dropped its rows while the store was down:\n%s", s)
	}

	srv.Start()
	// capture answers 503 until its writer reconnects; the sender retries.
	var id int64
	for deadline := time.Now().Add(20 * time.Second); id == 0 && time.Now().Before(deadline); {
		if a := captureExchange(t, addr, gh, 1)[0]; a.Status == 200 {
			id = captureAckID(t, a)
		} else {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if id == 0 {
		t.Fatal("capture did not store again after the server came back")
	}
	tm.waitFor("1/2 deliveries", fmt.Sprintf("> %d ", id))
	tm.waitGone("connection lost")
	tm.keys("q")
}

// TestPruneWhileCapturingPostgres is TestPruneWhileCapturingSQLite on
// Postgres (slow: seeding Postgres row by row through the store takes a few
// seconds; the store package's TestPruneWhileCapturing covers both backends
// in the default suite).
func TestPruneWhileCapturingPostgres(t *testing.T) {
	t.Parallel() // waits on processes and the store; asserts no timing
	pruneWhileCapturing(t, testkit.PostgresSchema(t, "team_prune"))
}

// TestTeamReplayStoreGoneMidRun: the team store's server goes away while a
// replay records its copies. The replay stops, exit 2, with one line saying
// what stopped it (the connection to the server lost), after how many
// copies — not that its end could not be recorded either ("finish run 1:
// failed to connect to `user=…`"), nor pgx's "record attempts: conn closed".
func TestTeamReplayStoreGoneMidRun(t *testing.T) {
	srv := testkit.StartPostgres(t)
	db := srv.DSN()
	if r := runBin(t, db, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		w.WriteHeader(204)
	}))
	defer handler.Close()
	p := startBin(t, db, "replay", "1", "-n", "100000", "--to", handler.URL)
	for seen := 0; seen < 20; {
		select {
		case <-p.lines:
			seen++
		case <-p.done:
			out, errs := p.Output()
			t.Fatalf("replay ended early:\n%s\n%s", out, errs)
		case <-time.After(60 * time.Second):
			t.Fatal("replay printed no copies within 60 s")
		}
	}
	srv.Stop()
	select {
	case <-p.done:
	case <-time.After(120 * time.Second):
		t.Fatal("replay went on for 120 s after the store went away")
	}
	_, stderr := p.Output()
	var last string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "hookreplay: ") {
			last = l
		}
	}
	named := strings.Contains(last, "lost the connection to 127.0.0.1:") || strings.Contains(last, "cannot connect to 127.0.0.1:")
	if code := p.cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(last, "run 1 stopped after ") || !named ||
		!strings.Contains(last, "(its end is not recorded)") || strings.Contains(stderr, "failed to connect to `") ||
		strings.Contains(stderr, "conn closed") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// TestTeamTUIOnReadReplica: a team browsing from a read replica (a hot
// standby). Postgres refuses LISTEN there — the TUI ended at start with
// "watch database: ERROR: cannot execute LISTEN during recovery" — and no
// NOTIFY reaches it: the TUI opens, and a delivery captured on the primary
// appears once the replica has replayed it (the watcher polls how far).
func TestTeamTUIOnReadReplica(t *testing.T) {
	primary := testkit.StartPostgres(t)
	if r := runBin(t, primary.DSN(), mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	replica := primary.StartStandby().DSN()
	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db '%s' tui; echo EXITED $?; sleep 600", binPath, replica))
	tm.waitFor("1/6 deliveries", "> 6 ")
	_, addr := captureStart(t, primary.DSN(), "--quiet")
	id := captureAckID(t, captureExchange(t, addr, mustRead(t, "testdata/export/github.http"), 1)[0])
	tm.waitFor("1/7 deliveries", fmt.Sprintf("> %d ", id))
	tm.keys("q")
}

// TestTeamTUIFollowsAPromotedReplica: the replica a team browses is
// promoted (the primary failed over to it) and takes captures itself. The
// watcher polled its replay position, which stops moving once it is a
// primary: the TUI never showed a delivery captured after the promotion.
// It now follows the promoted server by LISTEN.
func TestTeamTUIFollowsAPromotedReplica(t *testing.T) {
	primary := testkit.StartPostgres(t)
	if r := runBin(t, primary.DSN(), mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	sb := primary.StartStandby()
	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db '%s' tui; echo EXITED $?; sleep 600", binPath, sb.DSN()))
	tm.waitFor("1/6 deliveries", "> 6 ")
	primary.Stop()
	sb.Promote()
	_, addr := captureStart(t, sb.DSN(), "--quiet")
	id := captureAckID(t, captureExchange(t, addr, mustRead(t, "testdata/export/github.http"), 1)[0])
	tm.waitFor("1/7 deliveries", fmt.Sprintf("> %d ", id))
	tm.keys("q")
}
