//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// silentPTY is a pseudo-terminal that never answers: what the program
// writes is kept, nothing is ever sent back unless the test types it. A
// program that queries it (OSC 11 background colour, CSI 6n cursor
// position) waits for a reply that does not come.
type silentPTY struct {
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	closed chan struct{} // the program's side is closed: all it wrote is read
}

// startOnSilentPTY runs hookreplay with stdin, stdout and stderr on a new
// 80×24 pseudo-terminal that is its controlling terminal, in the foreground
// (the conditions under which termenv queries), TERM=xterm-256color and no
// CI variable (CI=true, as .ci/run sets it, is itself what turns termenv's
// query off).
func startOnSilentPTY(t *testing.T, env []string, args ...string) (*silentPTY, *exec.Cmd) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ioctl := func(req uintptr, arg unsafe.Pointer) {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), req, uintptr(arg)); e != 0 {
			t.Fatalf("ioctl %#x on /dev/ptmx: %v", req, e)
		}
	}
	var unlock int32
	ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	var n uint32
	ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n))
	ws := [4]uint16{24, 80, 0, 0}
	ioctl(syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(binPath, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "TERM=") && !strings.HasPrefix(kv, "TMUX") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, "TERM=xterm-256color", "GORACE=atexit_sleep_ms=0")
	c.Env = append(c.Env, env...)
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	p := &silentPTY{master: master, closed: make(chan struct{})}
	go func() {
		defer close(p.closed)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil { // EIO once the program's side is closed
				return
			}
		}
	}()
	t.Cleanup(func() {
		if c.ProcessState == nil {
			c.Process.Kill()
			c.Wait()
		}
		master.Close()
	})
	return p, c
}

func (p *silentPTY) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits (generously) until the program has written sub.
func (p *silentPTY) waitFor(t *testing.T, sub string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.output(), sub) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never appeared on the terminal; it got:\n%q", sub, p.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// finish waits (generously) for the program to end and all it wrote.
func (p *silentPTY) finish(t *testing.T, c *exec.Cmd) string {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		c.Process.Kill()
		<-done
		t.Errorf("hookreplay %v did not end; the terminal got:\n%q", c.Args[1:], p.output())
	}
	select {
	case <-p.closed:
	case <-time.After(10 * time.Second):
	}
	return p.output()
}

// queries names the terminal queries in out.
func queries(out string) []string {
	var q []string
	for _, s := range []struct{ seq, name string }{
		{"\x1b]11;?", "OSC 11 (background colour)"},
		{"\x1b]10;?", "OSC 10 (foreground colour)"},
		{"\x1b[6n", "CSI 6n (cursor position)"},
		{"\x1b[c", "DA1"},
	} {
		if strings.Contains(out, s.seq) {
			q = append(q, s.name)
		}
	}
	return q
}

// TestNoTerminalQueryE2E: no command asks the terminal anything, so none
// waits for an answer on a terminal that gives none (Bubble Tea's init used
// to query the background colour through termenv in every command, --help
// included, and wait 5 s for the reply). The TUI asks nothing either, and
// the CI variable hookreplay sets for the libraries' inits (termquery)
// never reaches a program it starts (here the pager).
func TestNoTerminalQueryE2E(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "hookreplay.db")
	if r := runBin(t, db, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}

	t.Run("help", func(t *testing.T) {
		start := time.Now()
		p, c := startOnSilentPTY(t, nil, "--help")
		out := p.finish(t, c)
		t.Logf("--help on a silent terminal took %s", time.Since(start).Round(time.Millisecond))
		if q := queries(out); len(q) > 0 {
			t.Errorf("--help asked the terminal %v:\n%q", q, out)
		}
		if !strings.Contains(out, "Usage:") {
			t.Errorf("no usage on the terminal:\n%q", out)
		}
	})

	t.Run("show through the pager", func(t *testing.T) {
		envFile := filepath.Join(dir, "pager.env")
		p, c := startOnSilentPTY(t, []string{"HOOKREPLAY_PAGER=env > " + shQuote(envFile) + "; cat"}, "--db", db, "show", "1")
		out := p.finish(t, c)
		if q := queries(out); len(q) > 0 {
			t.Errorf("show asked the terminal %v:\n%q", q, out)
		}
		if c.ProcessState.ExitCode() != 0 {
			t.Fatalf("show exited %d:\n%q", c.ProcessState.ExitCode(), out)
		}
		env, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatalf("the pager did not run: %v\n%q", err, out)
		}
		for _, kv := range strings.Split(string(env), "\n") {
			if strings.HasPrefix(kv, "CI=") {
				t.Errorf("the pager got %s: hookreplay's start-up CI leaked to the programs it runs", kv)
			}
		}
	})

	t.Run("tui", func(t *testing.T) {
		start := time.Now()
		p, c := startOnSilentPTY(t, []string{"NO_COLOR=1"}, "--db", db, "tui")
		p.waitFor(t, "deliveries")
		t.Logf("the TUI's first screen on a silent terminal came after %s", time.Since(start).Round(time.Millisecond))
		if _, err := p.master.Write([]byte("q")); err != nil {
			t.Fatal(err)
		}
		out := p.finish(t, c)
		if q := queries(out); len(q) > 0 {
			t.Errorf("the TUI asked the terminal %v:\n%q", q, out)
		}
		if code := c.ProcessState.ExitCode(); code != 0 {
			t.Errorf("tui exited %d:\n%q", code, out)
		}
	})
}
