//go:build slow

package e2e

// The crash phase against handlers whose warm handling takes a few
// milliseconds, in Go (the example wallet, run by `demo serve`) and in Python
// (testdata/crash/wallet.py, stdlib sqlite3), whose first answer after a
// start is 100 ms slower (cold), each with one of the two bugs a crash
// exposes, or correct:
//
//	workfirst   (bug a) the credit commits, then the event id is recorded:
//	            killed in between, the retry credits again
//	claimfirst  (bug b) the event id commits as handled, then the credit:
//	            killed in between, the retry is taken as a duplicate
//	fixed/onetx claim and credit in one transaction: must always pass
//
// The probe is the balance only: the claim table is not visible to it.
//
// The default run checks each handler once. HOOKREPLAY_CRASH_RATE=N runs
// each N times and logs the detection rates (go test -tags slow -run TestCrashRate -v);
// HOOKREPLAY_CRASH_CHECK_BIN=PATH runs `check` from another build (the
// handlers still come from this one), to compare before and after.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// crashHandler is one handler the crash phase is run against.
type crashHandler struct {
	name string
	// bug is "a" (work done twice), "b" (work lost) or "" (correct).
	bug string
	// serve is the --serve command for a handler on addr with database db.
	serve func(addr, db string) string
	// claims: the claim table is probed too (its row count).
	claims bool
}

// crashDelay is the handlers' other work between (or, for the correct
// ones, inside) their commits: warm handling of 3–5 ms. crashCold is what
// their first answer after a start takes on top (a cold start);
// HOOKREPLAY_CRASH_COLD=MS gives another (0: none).
const crashDelay, crashCold = 3, 100

// crashColdMS is crashCold, or HOOKREPLAY_CRASH_COLD when set.
func crashColdMS() int {
	if n, err := strconv.Atoi(os.Getenv("HOOKREPLAY_CRASH_COLD")); err == nil && n >= 0 {
		return n
	}
	return crashCold
}

func crashHandlers(t *testing.T) []crashHandler {
	t.Helper()
	demo := func(variant string) func(addr, db string) string {
		return func(addr, db string) string {
			return fmt.Sprintf("exec %s demo serve %s --listen %s --db %s --secret %s --delay %dms --cold %dms --quiet", binPath, variant, addr, db, checkSecret, crashDelay, crashColdMS())
		}
	}
	hs := []crashHandler{
		{"go/workfirst", "a", demo("workfirst"), false},
		{"go/claimfirst", "b", demo("claimfirst"), false},
		{"go/fixed", "", demo("fixed"), false},
		// With the claim table probed, the first kill lands right after
		// the claim commits.
		{"go/claimfirst+claims", "b", demo("claimfirst"), true},
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found: the Python handlers are not run")
		return hs
	}
	script, err := filepath.Abs(filepath.Join("testdata", "crash", "wallet.py"))
	if err != nil {
		t.Fatal(err)
	}
	pyh := func(mode string) func(addr, db string) string {
		return func(addr, db string) string {
			return fmt.Sprintf("exec %s %s %s %s %s %d %d", py, script, mode, addr, db, crashDelay, crashColdMS())
		}
	}
	return append(hs,
		crashHandler{"python/workfirst", "a", pyh("workfirst"), false},
		crashHandler{"python/claimfirst", "b", pyh("claimfirst"), false},
		crashHandler{"python/onetx", "", pyh("onetx"), false},
	)
}

// crashRun runs check's crash phase once against h, with check from bin.
func crashRun(t *testing.T, bin string, h crashHandler) (result, *report.Check) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	addr := freeAddr(t)
	walletDB := filepath.Join(t.TempDir(), "wallet.db")
	args := []string{"--db", db, "check", "--json", "--no-color", "--to", "http://" + addr + "/webhooks/stripe",
		"--probe-sql", checkBalanceSQL, "--dsn", "sqlite:" + walletDB, "--secret", checkSecret,
		"--phases", "first,crash", "--serve", h.serve(addr, walletDB), fmt.Sprint(id)}
	switch settle := os.Getenv("HOOKREPLAY_CRASH_SETTLE"); settle {
	case "learned": // no --settle: the quiet period is learned, as by default
	case "":
		args = append(args, "--settle", "100ms")
	default:
		args = append(args, "--settle", settle)
	}
	if h.claims {
		args = append(args, "--probe-sql", "SELECT count(*) FROM processed_events")
	}
	c := exec.Command(bin, args...)
	c.Env = binEnv()
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := result{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	waitClosed(t, addr)
	if r.Code == 2 {
		return r, nil
	}
	var rep report.Check
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%s: no JSON report (exit %d): %v\n%s", h.name, r.Code, err, r.Stderr)
	}
	return r, &rep
}

// caught reports whether the crash phase found h's bug (or, for a correct
// handler, passed), and the crash phase's result.
func crashCaught(t *testing.T, h crashHandler, c *report.Check) (bool, report.PhaseResult) {
	t.Helper()
	if c == nil {
		return false, report.PhaseResult{Status: "error"}
	}
	p := checkPhase(t, c, "crash")
	switch h.bug {
	case "a":
		return p.Status == report.Fail && len(p.Violations) > 0 && !strings.Contains(p.Violations[0].Message, "work was lost"), p
	case "b":
		return p.Status == report.Fail && len(p.Violations) > 0 && strings.Contains(p.Violations[0].Message, "work was lost"), p
	}
	return p.Status == report.Pass, p
}

// claimTrigger is how the crash phase words a kill set off by the claim
// table's commit.
const claimTrigger = "killed at the first probe change (sql2 moved)" // the second --probe-sql, unnamed

func TestCheckCrashFastHandlers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills handler processes")
	}
	for _, h := range crashHandlers(t) {
		t.Run(h.name, func(t *testing.T) {
			// A bug may, rarely, escape one run; a second run must then catch it.
			// With a claim-table probe, a sweep kill may also report the bug
			// before the claim-triggered kill does (timing under -race): that
			// run is repeated too, and one of them must show the trigger.
			var p report.PhaseResult
			tries := 2
			if h.claims {
				tries = 3
			}
			for try := 0; try < tries; try++ {
				_, c := crashRun(t, binPath, h)
				var ok bool
				if ok, p = crashCaught(t, h, c); ok && (!h.claims || strings.Contains(p.Message, claimTrigger)) {
					break
				}
				if h.bug == "" {
					t.Fatalf("%s: a correct handler must pass the crash phase: %s %q %+v", h.name, p.Status, p.Message, p.Violations)
				}
			}
			switch h.bug {
			case "a", "b":
				if p.Status != report.Fail {
					t.Fatalf("%s: bug %s escaped two runs: %s %q", h.name, h.bug, p.Status, p.Message)
				}
				if h.claims && !strings.Contains(p.Message, claimTrigger) {
					// Under -race the claim's commit and the probe that sees it
					// are slowed unevenly: the bug was still caught (above), by a
					// timed kill (seen in .ci/run twice, at 0968491 and aec5597).
					// Which kill caught it is judged without the race detector.
					if testkit.RaceEnabled {
						t.Logf("%s: caught, but not by the claim-triggered kill under -race: %q", h.name, p.Message)
						break
					}
					t.Fatalf("%s: the claim's commit should trigger the kill: %q", h.name, p.Message)
				}
			default:
				if !strings.Contains(p.Message, "landed mid-handling") {
					t.Fatalf("%s: the pass must say how many kills landed mid-handling: %q", h.name, p.Message)
				}
			}
		})
	}
}

// TestCrashRate measures how often the crash phase catches each handler's
// bug (and passes the correct ones) over repeated runs. Opt-in:
//
//	HOOKREPLAY_CRASH_RATE=10 go test -tags slow -run TestCrashRate -v -timeout 60m ./e2e/
//
// HOOKREPLAY_CRASH_ONLY=python runs only the handlers whose name contains it.
// Every run gives --settle 100ms; HOOKREPLAY_CRASH_SETTLE=DURATION gives
// another, HOOKREPLAY_CRASH_SETTLE=learned none (the default check's learned
// quiet period).
func TestCrashRate(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HOOKREPLAY_CRASH_RATE"))
	if n <= 0 {
		t.Skip("set HOOKREPLAY_CRASH_RATE=N to measure the crash phase's detection rates over N runs")
	}
	bin := binPath
	if b := os.Getenv("HOOKREPLAY_CRASH_CHECK_BIN"); b != "" {
		bin = b
	}
	var lines []string
	only := os.Getenv("HOOKREPLAY_CRASH_ONLY") // a part of the handlers' names
	for _, h := range crashHandlers(t) {
		if only != "" && !strings.Contains(h.name, only) {
			continue
		}
		ok, statuses := 0, map[report.Status]int{}
		var total time.Duration
		var last, miss string
		for i := 0; i < n; i++ {
			start := time.Now()
			r, c := crashRun(t, bin, h)
			total += time.Since(start)
			good, p := crashCaught(t, h, c)
			statuses[p.Status]++
			last = p.Message
			if c == nil {
				last = fmt.Sprintf("exit %d: %s", r.Code, strings.TrimSpace(r.Stderr))
			}
			if good {
				ok++
			} else {
				miss = p.Message
			}
		}
		want := "caught"
		if h.bug == "" {
			want = "passed"
		}
		line := fmt.Sprintf("%-18s bug %-2s %s %2d/%d  %v  mean %s", h.name, orDash(h.bug), want, ok, n, statuses, (total / time.Duration(n)).Round(10*time.Millisecond))
		line += "\n    last run: " + last
		if miss != "" && miss != last {
			line += "\n    last miss: " + miss
		}
		t.Log(line)
		lines = append(lines, line)
	}
	fmt.Println("crash detection rates (check from " + bin + "):\n" + strings.Join(lines, "\n"))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// The crash phase, with --serve running a wallet variant as its own process
// (behind the slow tag with the other timing-bound crash tests: it ran 20 s
// alone in go test ./...'s sequential stretch; .ci/run runs it):
// claimfirst (claim committed before the credit) loses the event; fixed
// (claim and credit in one transaction) does not; async (answers 200, then
// works in a goroutine) loses an event it had acknowledged when the process
// is killed after the answer: a provider does not retry a 2xx.
func TestCheckCrashPhase(t *testing.T) {
	for _, tc := range []struct {
		variant string
		code    int
		status  report.Status
		msg     []string
	}{
		{wallet.ClaimFirst, 1, report.Fail, []string{"lost"}},
		{wallet.Fixed, 0, report.Pass, nil},
		{wallet.Async, 1, report.Fail, []string{"answered 200", "no retry", "lost when the process died"}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			addr := freeAddr(t)
			walletDB := filepath.Join(t.TempDir(), "wallet.db")
			serve := fmt.Sprintf("exec %s demo serve %s --listen %s --db %s --secret %s --quiet", binPath, tc.variant, addr, walletDB, checkSecret)
			if tc.variant == wallet.Fixed {
				// A pass needs kills landed inside the handling: give it the
				// few milliseconds of work a real handler has (it answers in
				// well under one otherwise, and may be rightly not judged).
				serve += " --delay 3ms"
			}
			r, c := checkRunJSON(t, db, "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL,
				// --settle-max bounds the wait for the async variant's lost work,
				// which a queue that outlived the process could still bring.
				"--dsn", "sqlite:"+walletDB, "--secret", checkSecret, "--settle", "100ms", "--settle-max", "3s", "--phases", "first,crash",
				"--serve", serve, fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("%s crash: want exit %d, got %d\n%s\n%s", tc.variant, tc.code, r.Code, r.Stdout, r.Stderr)
			}
			cr := checkPhase(t, c, "crash")
			if cr.Status != tc.status {
				t.Fatalf("%s crash: %s\n%s", tc.variant, cr.Status, checkDump(c))
			}
			for _, m := range tc.msg {
				if !strings.Contains(cr.Violations[0].Message, m) {
					t.Fatalf("%s: the violation should say %q: %+v", tc.variant, m, cr.Violations[0])
				}
			}
			// A kill made at the first probe change found the handler acting
			// on the request: never "before the request was fully sent".
			triggered := 0
			for _, line := range strings.Split(r.Stdout+r.Stderr, "\n") {
				if strings.Contains(line, "first probe change") {
					triggered++
				}
				if strings.Contains(line, "first probe change") && strings.Contains(line, "before the request was fully sent") {
					t.Errorf("%s: a kill at the first probe change classified as before the request was sent: %s", tc.variant, line)
				}
			}
			t.Logf("%s: %d lines name a kill at the first probe change", tc.variant, triggered)
			// --serve always stops the handler.
			waitClosed(t, addr)
			// The secret, although in the --serve command, is in no report and not in the store.
			if strings.Contains(r.Stdout, checkSecret) || strings.Contains(r.Stderr, checkSecret) {
				t.Fatalf("the secret leaked into the output")
			}
			for _, f := range []string{db, db + "-wal"} {
				raw, err := os.ReadFile(f)
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if strings.Contains(string(raw), checkSecret) {
					t.Fatalf("the secret reached the database (%s)", f)
				}
			}
		})
	}
	// A --serve command that never listens: exit 2 with its output shown.
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	addr := freeAddr(t)
	r := runBin(t, db, nil, "check", fmt.Sprint(id), "--to", "http://"+addr+"/", "--probe-cmd", "echo 1",
		"--serve", "echo handler-failed-to-start; exit 4", "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "handler-failed-to-start") {
		t.Fatalf("failing --serve: %+v", r)
	}
}
