package e2e

// End-to-end test of Ctrl-C: capture, replay and check each stop promptly on
// SIGINT while busy with a handler that never answers, and exit with their
// documented code (capture 0 after draining, replay and check 130); check
// writes its reports on SIGINT, SIGTERM and SIGHUP and never leaves its
// --serve handler behind, even when killed with kill -9.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
)

func TestInterruptE2EEveryCommandStopsOnCtrlC(t *testing.T) {
	t.Parallel() // waits on the graces after Ctrl-C and on processes, not on CPU: see TestMain
	// A handler that holds every request until the test ends.
	release := make(chan struct{})
	arrived := make(chan struct{}, 100)
	forwarded := make(chan struct{}, 1) // capture's delivery, evt_int, reached the handler
	h := startReplayHandler(t, func(w http.ResponseWriter, a replayArrival) {
		if bytes.Contains(a.Raw, []byte(`"evt_int"`)) {
			select {
			case forwarded <- struct{}{}:
			default:
			}
		}
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-time.After(60 * time.Second):
		}
		w.WriteHeader(200)
	})
	t.Cleanup(func() { close(release) })
	db := filepath.Join(t.TempDir(), "h.db")
	id := fmt.Sprint(checkStripeDelivery(t, db))

	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"replay", []string{"replay", id, "--to", h.URL, "-n", "50", "--concurrency", "8", "--timeout", "60s"}, 130},
		{"replay burst", []string{"replay", id, "--to", h.URL, "-n", "20", "--order", "burst", "--timeout", "60s"}, 130},
		{"check", []string{"check", id, "--to", h.URL, "--probe-cmd", "echo 1", "--settle", "100ms"}, 130},
	} {
		t.Run(c.name, func(t *testing.T) {
			for len(arrived) > 0 {
				<-arrived
			}
			p := startBin(t, db, c.args...)
			// Copies in flight, the handler holding them: not a fixed sleep,
			// which a busy machine can outlast before the first copy is sent.
			select {
			case <-arrived:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s sent nothing within 20s", c.name)
			}
			time.Sleep(200 * time.Millisecond)
			start := time.Now()
			p.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-p.done:
			case <-time.After(9 * time.Second):
				p.cmd.Process.Signal(syscall.SIGQUIT)
				<-p.done
				_, stderr := p.Output()
				t.Fatalf("%s did not stop within 9s of Ctrl-C (copies on the wire get 5s); its goroutines:\n%s", c.name, stderr)
			}
			took := time.Since(start)
			_, stderr := p.Output()
			if code := p.cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(stderr, "interrupted") {
				t.Fatalf("%s after Ctrl-C: exit %d after %v, want %d and 'interrupted'\n%s", c.name, code, took, c.code, stderr)
			}
			t.Logf("%s stopped %v after Ctrl-C", c.name, took.Round(time.Millisecond))
		})
	}

	// capture forwarding to the same handler, one delivery waiting on it:
	// Ctrl-C drains for 15s, then answers it 503 (the handler never
	// answered) and exits 0.
	p, addr := captureStart(t, filepath.Join(t.TempDir(), "c.db"), "--forward", h.URL)
	done := make(chan captureAnswer, 1)
	go func() {
		body := `{"id":"evt_int"}`
		a := captureExchangeNoFatal(addr, fmt.Sprintf("POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
		done <- a
	}()
	// The forward waiting on the handler, not a fixed sleep.
	select {
	case <-forwarded:
	case <-time.After(20 * time.Second):
		t.Fatal("capture forwarded nothing within 20s")
	}
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("capture did not stop within 20s of Ctrl-C")
	}
	a := <-done
	t.Logf("capture stopped %v after Ctrl-C; the waiting sender got %d", time.Since(start).Round(time.Millisecond), a.Status)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 || a.Status != 503 {
		_, stderr := p.Output()
		t.Fatalf("capture after Ctrl-C: exit %d, sender got %d; want 0 and 503\n%s", code, a.Status, stderr)
	}
}

// captureExchangeNoFatal sends data on a new connection and reads one answer
// (status 0 when none came), for use off the test goroutine.
func captureExchangeNoFatal(addr, data string) captureAnswer {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return captureAnswer{}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, data); err != nil {
		return captureAnswer{}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return captureAnswer{}
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return captureAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// SIGINT, SIGTERM and SIGHUP during check --serve: every requested report
// is written for what was judged (the phase in progress marked
// interrupted), the run is stored as interrupted, the handler's process
// group is stopped (its port is free) and the exit code is 128 + the
// signal's number.
func TestInterruptE2ECheckServeWritesReportsOnEverySignal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{{syscall.SIGINT, "SIGINT", 130}, {syscall.SIGTERM, "SIGTERM", 143}, {syscall.SIGHUP, "SIGHUP", 129}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "h.db")
			id := checkStripeDelivery(t, db)
			addr := freeAddr(t)
			walletDB := filepath.Join(dir, "wallet.db")
			// Each copy takes 300 ms inside the handler: the signal comes
			// while dups is sending. The handler is a process tree (sh, then
			// the wallet in the background), as npm or a wrapper script
			// starts one.
			serve := fmt.Sprintf("%s demo serve fixed --listen %s --db %s --secret %s --delay 300ms --quiet & wait", binPath, addr, walletDB, checkSecret)
			jsonPath, junitPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
			p := startBin(t, db, "check", fmt.Sprint(id), "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL,
				"--dsn", "sqlite:"+walletDB, "--secret", checkSecret, "--settle", "100ms", "--phases", "first,dups", "--serve", serve,
				"--json", "--report", "json="+jsonPath, "--report", "junit="+junitPath)
			waitStderr(t, p, "dups", 20*time.Second)
			time.Sleep(200 * time.Millisecond) // a copy in flight
			p.cmd.Process.Signal(c.sig)
			select {
			case <-p.done:
			case <-time.After(15 * time.Second):
				t.Fatalf("check did not stop within 15s of %s", c.name)
			}
			stdout, stderr := p.Output()
			if code := p.cmd.ProcessState.ExitCode(); code != c.code {
				t.Fatalf("exit %d after %s, want %d\n%s", code, c.name, c.code, stderr)
			}
			waitClosed(t, addr)
			for what, raw := range map[string]string{"stdout": stdout, "--report json": readFile(t, jsonPath)} {
				var rc report.Check
				if err := json.Unmarshal([]byte(raw), &rc); err != nil {
					t.Fatalf("%s holds no JSON report after %s: %v\n%s\n%s", what, c.name, err, raw, stderr)
				}
				if rc.Verdict != report.VerdictInterrupted || rc.Interrupted != c.name || len(rc.Deliveries) != 1 {
					t.Fatalf("%s: verdict %q interrupted %q, want interrupted by %s\n%s", what, rc.Verdict, rc.Interrupted, c.name, raw)
				}
				ph := rc.Deliveries[0].Phases
				if len(ph) != 2 || ph[0].Phase != "first" || ph[0].Status != report.Pass || ph[1].Phase != "dups" || ph[1].Status != report.Interrupted {
					t.Fatalf("%s: want first passed and dups interrupted, got %+v", what, ph)
				}
			}
			if x := readFile(t, junitPath); !strings.Contains(x, "hookreplay.interrupted") {
				t.Fatalf("the JUnit report does not mark the phase interrupted:\n%s", x)
			}
			r := runBin(t, db, nil, "runs", "--json")
			if !strings.Contains(r.Stdout, `"interrupted"`) {
				t.Fatalf("the run is not stored as interrupted:\n%s", r.Stdout)
			}
			// Its report is stored with it: runs show renders it again.
			r = runBin(t, db, nil, "runs", "show", "1", "--no-color", "--report", "text=-")
			if r.Code != 0 || !strings.Contains(r.Stdout, "interrupted: the run was stopped during this phase") {
				t.Fatalf("runs show of the interrupted run: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

// kill -9 of check --serve (a CI job's timeout) takes the handler with it:
// the whole process group, a shell and the server it started in the
// background, so the handler's port is free afterwards.
func TestInterruptE2ECheckServeKill9FreesThePort(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" {
		t.Skip("the parent-death signal exists on Linux and FreeBSD only (docs/reliability.md)")
	}
	t.Parallel()
	// "& wait": the group's leader waits for the server; "& exit 0": a
	// wrapper that exits, leaving the server in the group (a keeper guards
	// it then).
	for name, tail := range map[string]string{"wait": "& wait", "exit0": ">/dev/null 2>&1 & exit 0"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "h.db")
			id := checkStripeDelivery(t, db)
			addr := freeAddr(t)
			walletDB := filepath.Join(dir, "wallet.db")
			serve := fmt.Sprintf("%s demo serve fixed --listen %s --db %s --secret %s --delay 300ms --quiet %s", binPath, addr, walletDB, checkSecret, tail)
			p := startBin(t, db, "check", fmt.Sprint(id), "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL,
				"--dsn", "sqlite:"+walletDB, "--secret", checkSecret, "--settle", "100ms", "--phases", "first,dups", "--serve", serve)
			t.Cleanup(func() { killServing(addr) }) // when the test fails, the orphan must not outlive it
			waitStderr(t, p, "dups", 20*time.Second)
			p.kill9()
			waitClosed(t, addr)
		})
	}
}

// killServing kills every process whose command line names addr (the
// handler of one test, on a port of its own): the leftovers of a failed
// test.
func killServing(addr string) {
	ds, _ := os.ReadDir("/proc")
	for _, d := range ds {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline"); err == nil && strings.Contains(string(b), addr) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// waitStderr waits until p has printed want on stderr.
func waitStderr(t *testing.T, p *proc, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if _, e := p.Output(); strings.Contains(e, want) {
			return
		}
		select {
		case <-p.done:
			_, e := p.Output()
			t.Fatalf("exited (%d) before printing %q:\n%s", p.cmd.ProcessState.ExitCode(), want, e)
		case <-time.After(20 * time.Millisecond):
		}
	}
	_, e := p.Output()
	t.Fatalf("no %q on stderr within %s:\n%s", want, limit, e)
}

// readFile returns the file's contents ("" when it cannot be read).
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("read %s: %v", path, err)
	}
	return string(b)
}
