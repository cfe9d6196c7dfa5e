package e2e

// What unseen handlers showed about check (issue 30): a forged copy refused
// with a 5xx, an email lost between a commit and its send, a handler started
// by a wrapper that daemonizes.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/report"
)

// A handler whose signature check throws, so its framework answers 500 (an
// Express error handler, say), refuses the forged copies and does nothing:
// providers retry every non-2xx alike, so tamper passes, and the text, the
// JSON and the exit code all say so; the line names the 500s.
func TestCheckTamperRefusedWith5xxPasses(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	h := &qaHandler{Amount: 50, Dedupe: true, Verify: true, VerifyStatus: 500}
	url, dsn := startQAHandler(t, h)
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	args := []string{"--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "--settle-max", "1s", "--phases", "first,tamper", fmt.Sprint(id)}
	r, c := checkRunJSON(t, db, args...)
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	p := checkPhase(t, c, "tamper")
	if p.Status != report.Pass || !strings.Contains(p.Message, "answered 500") || len(p.Warnings) > 0 {
		t.Fatalf("tamper refused with 500 and no effect: %+v", p)
	}
	txt := runBin(t, db, nil, append([]string{"check", "--no-color"}, args...)...)
	if txt.Code != 0 || !strings.Contains(txt.Stdout, "✓ tamper") || strings.Contains(txt.Stdout, "! tamper") {
		t.Fatalf("text report of the same run (exit %d):\n%s\n%s", txt.Code, txt.Stdout, txt.Stderr)
	}
}

// A Stripe handler that stores the order, commits, then emails the
// confirmation over SMTP (testdata/crash/order_email.py): a kill between
// the two loses the email for good, the retry hits the duplicate order. The
// crash verdict names the lost email, and its fix is one that works for an
// email — an outbox row in the order's transaction and a worker — never
// "record the id in the same transaction as the work", which it cannot join.
func TestCheckCrashLostEmailHintsAnOutbox(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "crash", "order_email.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, appDB := filepath.Join(dir, "h.db"), filepath.Join(dir, "shop.db")
	id := checkStripeDelivery(t, db)
	addr, sink := freeAddr(t), freeAddr(t)
	r, c := checkRunJSON(t, db, "--to", "http://"+addr+"/webhooks/stripe", "--secret", checkSecret,
		"--probe-sql", "orders=SELECT count(*) FROM orders", "--dsn", "sqlite:"+appDB, "--smtp-sink", sink,
		"--settle", "100ms", "--settle-max", "3s", "--phases", "first,crash",
		"--serve", fmt.Sprintf("exec %s %s %s %s %s", py, script, addr, appDB, sink), fmt.Sprint(id))
	if r.Code != 1 || c == nil {
		t.Fatalf("want exit 1, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	cr := checkPhase(t, c, "crash")
	var lost *report.Violation
	for i, v := range cr.Violations {
		if v.Probe == "emails" && strings.Contains(v.Message, "work was lost") {
			lost = &cr.Violations[i]
		}
	}
	if cr.Status != report.Fail || lost == nil {
		t.Fatalf("crash should fail on the lost email: %s\n%s", cr.Status, checkDump(c))
	}
	if strings.Contains(lost.Hint, "same transaction as the work") || !strings.Contains(lost.Hint, "outbox row") || !strings.Contains(lost.Hint, "worker") {
		t.Fatalf("the fix for a lost email should be an outbox, not the transaction: %q", lost.Hint)
	}
}

// A --serve wrapper that starts the server in the background and exits 0
// (`nohup ./server & exit 0`, as npm scripts and init scripts do) is waited
// for: check runs, and stops the server it left in the group at the end.
func TestCheckServeWrapperThatExitsZero(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	addr := freeAddr(t)
	walletDB := filepath.Join(t.TempDir(), "wallet.db")
	serve := fmt.Sprintf("nohup %s demo serve %s --listen %s --db %s --secret %s --quiet >/dev/null 2>&1 & exit 0", binPath, wallet.Fixed, addr, walletDB, checkSecret)
	r, c := checkRunJSON(t, db, "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL, "--dsn", "sqlite:"+walletDB,
		"--secret", checkSecret, "--settle", "50ms", "-n", "3", "--phases", "first,dups", "--serve", serve, fmt.Sprint(id))
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	waitClosed(t, addr) // the server the wrapper left was stopped
}

// A handler started by a wrapper that daemonizes (setsid: outside any
// process group hookreplay could kill) is crashed with --kill-cmd and
// started again with --start-cmd; the crash phase still finds the bug (the
// event claimed before the work, killed between the two), and the handler
// --serve started is stopped at the end with --kill-cmd.
func TestCheckCrashWithKillAndStartCommands(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	addr := freeAddr(t)
	walletDB := filepath.Join(dir, "wallet.db")
	pidfile := filepath.Join(dir, "handler.pid")
	wrapper := filepath.Join(dir, "start-handler")
	// --delay 250ms: the claim and the credit 250 ms apart, a window the
	// kill command lands in. Its own time is the sh, the cat and the kill:
	// a few milliseconds alone, but 42-129 ms with go test ./... beside it
	// on 2 cores, when a 20 ms window saw all of 15 kills land after the
	// answer (not judged, seen).
	script := fmt.Sprintf("#!/bin/sh\nsetsid %s demo serve %s --listen %s --db %s --secret %s --delay 250ms --quiet </dev/null >/dev/null 2>&1 &\necho $! > %s\nexit 0\n",
		binPath, wallet.ClaimFirst, addr, walletDB, checkSecret, pidfile)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kill := "kill -KILL $(cat " + pidfile + ")"
	t.Cleanup(func() { exec.Command("sh", "-c", kill).Run() })
	r, c := checkRunJSON(t, db, "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL, "--dsn", "sqlite:"+walletDB,
		"--secret", checkSecret, "--settle", "100ms", "--settle-max", "3s", "--phases", "first,crash",
		"--serve", wrapper, "--kill-cmd", kill, "--start-cmd", wrapper, fmt.Sprint(id))
	if r.Code != 1 || c == nil {
		t.Fatalf("want exit 1, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	cr := checkPhase(t, c, "crash")
	if cr.Status != report.Fail || !strings.Contains(cr.Violations[0].Message, "lost") {
		t.Fatalf("crash should find the work lost: %s\n%s", cr.Status, checkDump(c))
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "each kill ran the kill command, which took ") {
		t.Fatalf("the report should say how long the kill command took: %q", c.Notes)
	}
	t.Logf("%s; %s", cr.Violations[0].Message, strings.Join(c.Notes, "; "))
	waitClosed(t, addr) // --kill-cmd stopped what the wrapper left running
}

// A --serve wrapper that daemonizes (setsid) leaves the handler outside
// the process group check stops: without --kill-cmd it keeps the port, and
// the report says so rather than leaving the next run to find the port
// taken.
func TestCheckServeLeftoverOutsideTheGroupIsNoted(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	addr := freeAddr(t)
	serve, walletDB := setsidServe(t, dir, addr)
	r, c := checkRunJSON(t, db, "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL, "--dsn", "sqlite:"+walletDB,
		"--secret", checkSecret, "--settle", "50ms", "-n", "2", "--phases", "first", "--serve", serve, fmt.Sprint(id))
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), addr+" still accepts connections after the handler's process group was stopped") ||
		!strings.Contains(strings.Join(c.Notes, "\n"), "give --kill-cmd") {
		t.Fatalf("the leftover should be noted: %q", c.Notes)
	}
}

// The crash phase of a --serve handler that left its process group (setsid):
// the kill of the group does not stop it, and the restart found the port
// served. It said "already accepts connections before the handler was
// started: stop whatever listens there, or drop --serve", blaming a stranger;
// it now says the server left the group and names --kill-cmd and --start-cmd.
func TestCheckCrashOfADaemonizedServeNamesKillCmd(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	addr := freeAddr(t)
	serve, walletDB := setsidServe(t, dir, addr)
	r := runBin(t, db, nil, "check", "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL, "--dsn", "sqlite:"+walletDB,
		"--secret", checkSecret, "--settle", "50ms", "-n", "2", "--phases", "first,crash", "--serve", serve, fmt.Sprint(id))
	if r.Code != 2 || !strings.Contains(r.Stderr, addr+" still accepts connections after the handler's process group was killed") ||
		!strings.Contains(r.Stderr, "give --kill-cmd and --start-cmd") || strings.Contains(r.Stderr, "drop --serve") {
		t.Fatalf("want exit 2 naming --kill-cmd and --start-cmd, got %d\n%s", r.Code, r.Stderr)
	}
}

// setsidServe returns a --serve command that starts the fixed demo wallet
// on addr under setsid, outside the process group check stops, and the
// wallet's database in dir; the wallet is killed when the test ends.
func setsidServe(t *testing.T, dir, addr string) (serve, walletDB string) {
	walletDB = filepath.Join(dir, "wallet.db")
	pidfile := filepath.Join(dir, "handler.pid")
	serve = fmt.Sprintf("setsid %s demo serve %s --listen %s --db %s --secret %s --quiet </dev/null >/dev/null 2>&1 & echo $! > %s",
		binPath, wallet.Fixed, addr, walletDB, checkSecret, pidfile)
	t.Cleanup(func() { exec.Command("sh", "-c", "kill -KILL $(cat "+pidfile+")").Run() })
	return serve, walletDB
}
