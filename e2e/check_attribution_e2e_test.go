package e2e

// An effect belongs to what caused it (issue 10 §2): the sink counts only
// the calls that are the effect.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/report"
)

// startNode runs the Node handler script with env and returns its URL base.
func startNode(t *testing.T, script string, env ...string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	cmd := exec.Command("node", script)
	cmd.Env = append(os.Environ(), env...)
	return startScript(t, "the node handler", cmd)
}

// startScript starts cmd, a handler that prints "listening PORT" once it
// listens, stops it when the test ends and returns its URL base.
func startScript(t *testing.T, what string, cmd *exec.Cmd) string {
	t.Helper()
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				port <- p
			}
		}
	}()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p
	case <-time.After(20 * time.Second):
		t.Fatal(what + " did not start")
	}
	return ""
}

// A GitHub App handler (Node, Octokit's shape) exchanges a token and reads
// the repository on every delivery, and comments once per delivery id.
// Counting every sink call fails dups on the token exchange; with
// --sink-match only the comment counts, the handler passes, and the other
// calls are listed apart.
func TestCheckSinkMatchCountsOnlyTheEffect(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	sink := freeAddr(t)
	base := startNode(t, "testdata/handlers/github-app.js", "SECRET=gh-secret", "API=http://"+sink)
	db := filepath.Join(t.TempDir(), "h.db")
	id := fmt.Sprint(checkInsertSample(t, db, "github", "issues.opened", "gh-secret"))
	args := []string{"--to", base + "/webhooks/github", "--sink", "comments=" + sink, "--secret", "gh-secret",
		"-n", "3", "--phases", "first,dups,tamper,burst", id}

	r, c := checkRunJSON(t, db, args...)
	if r.Code != 1 || c == nil || checkPhase(t, c, "dups").Status != report.Fail {
		t.Fatalf("without --sink-match every call counts, so dups fails on the token exchange: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}

	r, c = checkRunJSON(t, db, append(args, "--sink-match", "POST /repos/*/issues/*/comments")...)
	if r.Code != 0 || c == nil {
		t.Fatalf("with --sink-match: want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	first := checkPhase(t, c, "first")
	if len(first.Effects) != 1 || first.Effects[0].Method != "POST" || !strings.HasSuffix(first.Effects[0].Path, "/issues/1/comments") {
		t.Fatalf("first's effect should be the one comment: %+v", first.Effects)
	}
	notes := strings.Join(c.Notes, "\n")
	if !strings.Contains(notes, "match no --sink-match") || !strings.Contains(notes, "POST /app/installations/1/access_tokens ×") || !strings.Contains(notes, "GET /repos/Codertocat/Hello-World ×") {
		t.Fatalf("the unmatched calls should be listed apart: %q", c.Notes)
	}
	if c.Probes[0] != "comments" {
		t.Fatalf("the sink probe should be called comments: %q", c.Probes)
	}
}

// startPython runs a Python handler script with args (after its port) and
// returns its URL base.
func startPython(t *testing.T, script string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	return startScript(t, "the python handler", exec.Command("python3", append([]string{script, "0"}, args...)...))
}

// A handler whose effect depends on state (Python, an account per customer
// email under a UNIQUE constraint, 500 when it exists) is not reported as a
// bug in first: the captured event already created the account, so a fresh
// event with its data is refused. That is inconclusive (exit 3), saying
// --reset-cmd is needed and showing the handler's answer.
func TestCheckStateDependentEffectIsInconclusive(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	dir := t.TempDir()
	appDB := filepath.Join(dir, "app.db")
	base := startPython(t, "testdata/handlers/signup.py", appDB)
	db := filepath.Join(dir, "h.db")
	id := fmt.Sprint(checkStripeDelivery(t, db))
	// The captured delivery went through to the handler once: its account exists.
	r := runBin(t, db, nil, "replay", id, "--to", base+"/webhooks/stripe")
	if r.Code != 0 {
		t.Fatalf("replay: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r, c := checkRunJSON(t, db, "--to", base+"/webhooks/stripe", "--probe-sql", "accounts=SELECT count(*) FROM accounts",
		"--dsn", "sqlite:"+appDB, "--secret", checkSecret, "-n", "3", id)
	if r.Code != 3 || c == nil || c.Verdict != report.VerdictInconclusive {
		t.Fatalf("want exit 3 inconclusive, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	first := checkPhase(t, c, "first")
	if first.Status != report.Inconclusive || !strings.Contains(first.Message, "depends on state") ||
		!strings.Contains(first.Message, "--reset-cmd") || !strings.Contains(first.Message, "UNIQUE constraint failed: accounts.email") {
		t.Fatalf("first: %s %q", first.Status, first.Message)
	}
	for _, p := range c.Deliveries[0].Phases {
		if p.Status == report.Fail {
			t.Fatalf("nothing may be failed: %s %q", p.Phase, p.Message)
		}
	}
}

// Fix hints follow what was observed: the racy wallet recognises duplicates
// one at a time but not together (its burst hint says so), the naive one
// does the work for every copy.
func TestCheckHintsFollowWhatWasObserved(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		variant, phase, hint string
	}{
		{wallet.Racy, "burst", "copies arriving together were not"},
		{wallet.Naive, "dups", "did the work again for an event id it had already handled"},
		{wallet.Naive, "lost", "the provider's retry of an event whose answer was lost did the work again"},
	} {
		t.Run(tc.variant+"/"+tc.phase, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			url, dsn := checkWallet(t, tc.variant)
			r, c := checkRunJSON(t, db, checkArgs(url, dsn, fmt.Sprint(id), "--phases", "first,dups,burst,lost")...)
			if r.Code != 1 || c == nil {
				t.Fatalf("want exit 1, got %d\n%s", r.Code, r.Stderr)
			}
			p := checkPhase(t, c, tc.phase)
			if p.Status != report.Fail || len(p.Violations) == 0 || !strings.Contains(p.Violations[0].Hint, tc.hint) {
				t.Fatalf("%s: %s, violations %+v", tc.phase, p.Status, p.Violations)
			}
		})
	}
}
