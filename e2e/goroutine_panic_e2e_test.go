package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
)

// runPanicking runs hookreplay with HOOKREPLAY_TEST_PANIC=at (a panic
// provoked at that point of a goroutine, CONTRIBUTING.md) and without
// HOOKREPLAY_TRACEBACK, as a user runs it.
func runPanicking(t *testing.T, at, traceback string, args ...string) result {
	t.Helper()
	c := exec.Command(binPath, args...)
	c.Env = binEnv("HOOKREPLAY_TRACEBACK="+traceback, "HOOKREPLAY_TEST_PANIC="+at)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run hookreplay %v: %v", args, err)
	}
	return result{Stdout: out.String(), Stderr: errb.String(), Code: c.ProcessState.ExitCode()}
}

// A panic in one of the burst's senders (a goroutine of its own, reading
// the handler's answer) ended check with a goroutine dump and no report:
// the check's own recover runs on another goroutine. It is now carried to
// the check's goroutine: one line naming it, exit 2, the report written.
func TestCheckPanicInABurstSender(t *testing.T) {
	t.Parallel() // waits on processes, not on CPU: see TestMain
	var credits atomic.Int64
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			credits.Add(1)
		}
		fmt.Fprint(w, credits.Load())
	}))
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	out := filepath.Join(dir, "report.json")
	args := []string{"--db", db, "check", "--to", base + "/webhooks/stripe", "--secret", checkSecret, "-n", "3", "--settle", "50ms",
		"--phases", "first,burst", "--probe-http", "credits=" + base + "/credits", "--report", "json=" + out, "--no-color", fmt.Sprint(id)}
	r := runPanicking(t, "burst", "", args...)
	assertPanicLine(t, r, "test panic at burst")
	var c report.Check
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Verdict != report.VerdictError || len(c.Deliveries) != 1 {
		t.Fatalf("want the report of what ran, verdict error: %v\n%s", err, b)
	}
	if ph := c.Deliveries[0].Phases; len(ph) != 2 || ph[0].Status != report.Pass || ph[1].Phase != "burst" || ph[1].Status != report.Error {
		t.Fatalf("want first passed and burst marked error, got %+v", ph)
	}
	// HOOKREPLAY_TRACEBACK=1 lets the panic through with the stack of the
	// goroutine it happened in.
	r = runPanicking(t, "burst", "1", args...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "goroutine ") || !strings.Contains(r.Stderr, "panic: test panic at burst") {
		t.Fatalf("HOOKREPLAY_TRACEBACK=1: want the panic with its stack, got %d\n%s", r.Code, r.Stderr)
	}
}

// assertPanicLine: exit 2, and the panic is the last line of stderr, one
// line naming it as an internal error (after what it stopped: "probe
// emails: panic: …"), with no goroutine dump.
func assertPanicLine(t *testing.T, r result, what string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	last := lines[len(lines)-1]
	if r.Code != 2 || strings.Contains(r.Stderr, "goroutine") || strings.Count(r.Stderr, "internal error") != 1 ||
		!strings.HasPrefix(last, "hookreplay: internal error, ") || !strings.Contains(last, "panic: "+what) || !strings.HasSuffix(last, "please report it (HOOKREPLAY_TRACEBACK=1 shows the stack)") {
		t.Fatalf("want exit 2 and one line naming the panic, got %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A panic while a sink reads what the handler sent (a connection's
// goroutine, which go-smtp and net/http recover themselves: go-smtp
// answered 421 and logged it to a log hookreplay discards, net/http printed
// its stack and went on) left the sink counting fewer effects than came.
// The sink's probe now raises it at its next read: one line, exit 2.
func TestCheckPanicInASinkConnection(t *testing.T) {
	t.Parallel() // waits on processes, not on CPU: see TestMain
	for _, at := range []string{"smtp", "sink"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			sink := freeAddr(t)
			var h http.Handler = &goMailHandler{smtpAddr: sink, dedupe: true, seen: map[string]bool{}}
			flag := "--smtp-sink"
			if at == "sink" {
				flag = "--sink"
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					resp, err := http.Post("http://"+sink+"/v1/notify", "application/json", strings.NewReader(`{}`))
					if err != nil {
						http.Error(w, err.Error(), 500)
						return
					}
					resp.Body.Close()
				})
			}
			base := serveHandler(t, h)
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			r := runPanicking(t, at, "", "--db", db, "check", "--to", base+"/webhooks/stripe", flag, sink, "--secret", checkSecret,
				"-n", "3", "--phases", "first,dups", "--settle", "100ms", "--no-color", fmt.Sprint(id))
			assertPanicLine(t, r, "test panic at "+at)
		})
	}
}

// A panic while capture commits (the database driver, on the committer's
// goroutine) ended capture with a goroutine dump, every sender waiting on it
// cut off. The batch now fails as a commit error does: its senders are
// answered 503 (not acknowledged, so they send again), capture's log says
// why in one line, and capture goes on serving.
func TestCapturePanicInTheCommitter(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	addr := freeAddr(t)
	p := startBinEnv(t, []string{"HOOKREPLAY_TRACEBACK=", "HOOKREPLAY_TEST_PANIC=commit"}, db, "capture", "--listen", addr)
	waitListening(t, addr, p)
	for range 2 {
		resp, err := http.Post("http://"+addr+"/webhooks/x", "application/json", strings.NewReader(`{"id":"evt_1"}`))
		if err != nil {
			t.Fatalf("capture did not answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("capture answered %d, want 503", resp.StatusCode)
		}
	}
	select {
	case <-p.done:
		t.Fatal("capture ended after the panic")
	default:
	}
	p.stop(5 * time.Second)
	_, stderr := p.Output()
	t.Logf("capture's log:\n%s", stderr)
	if strings.Contains(stderr, "goroutine") || strings.Count(stderr, "internal error, panic: test panic at commit") != 2 ||
		!strings.Contains(stderr, "please report it") {
		t.Fatalf("want one line per refused delivery naming the panic, no goroutine dump:\n%s", stderr)
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "test panic") && !strings.Contains(l, "503 POST /webhooks/x") {
			t.Fatalf("the line should say which request was refused: %q", l)
		}
	}
}
