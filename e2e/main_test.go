// Package e2e holds the end-to-end tests: they drive the built hookreplay
// binary over real HTTP, real SQLite files and (with HOOKREPLAY_TEST_PG) a real
// Postgres. TestMain builds it once; the helpers below run it to completion or
// start it in the background.
package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

var binPath string

// raceEnabled: the binary (and these tests) run under the race detector.
const raceEnabled = testkit.RaceEnabled

// TestMain builds the binary once, then runs the tests from the repository
// root: fixtures are named by their repository paths (testdata/…,
// examples/wallet/testdata/…), as the README names them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hookreplay-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if binPath, err = testkit.BuildBinary(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// A panic reaching main keeps its stack here (main.go's execute), so
	// runBin's check for one still sees it: a bug is never hidden.
	os.Setenv("HOOKREPLAY_TRACEBACK", "1")
	// Every process the tests start skips the race runtime's 1 s sleep at
	// exit (GORACE atexit_sleep_ms, 1000 by default), whichever helper
	// starts it. Set here, once, rather than by t.Setenv in each test,
	// which would forbid those tests t.Parallel.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	root, err := testkit.RepoRoot()
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The tests marked parallel spend their time waiting on the processes
	// they start (handlers, settle windows, probes), not on CPU: run eight
	// of them at once rather than GOMAXPROCS (2 on the target machine),
	// unless -parallel was given. Measured on 2 cores: the parallel tests
	// hold 370-380 s of slots whether four or eight run at once (each takes
	// as long), so eight halve their part of the wall time (100 s -> 50 s)
	// while the whole package uses under 50 s of CPU. Under the race detector,
	// which multiplies the CPU each process needs, four as before. Since
	// then the package grew (issues 27-31: 113 parallel tests) and go test
	// ./... took 4m22-4m40 on an idle 2-core machine, the parallel stretch
	// 90-100 s; twelve at once use the waiting better (see CONTRIBUTING).
	// Timing-bound tests (speed, crash, latency, memory, TUI) stay
	// sequential and so run alone, before the parallel ones start; every
	// other test is parallel, including those that set environment
	// variables (runBinEnv, not t.Setenv). With 92 sequential tests the
	// sequential stretch took 124 s of the package's 223 s; with the 18
	// timing-bound ones left, 41-42 s of 162-171 s, the machine busy with
	// other work (CONTRIBUTING says how it was measured).
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		n := "12"
		if raceEnabled {
			n = "4"
		}
		flag.Set("test.parallel", n)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is a finished run of the binary.
type result struct {
	Stdout, Stderr string
	Code           int
}

// runBin runs hookreplay with args (plus --db db when db != "") and stdin.
func runBin(t *testing.T, db string, stdin []byte, args ...string) result {
	t.Helper()
	return runBinEnv(t, nil, db, stdin, args...)
}

// binEnv is the environment hookreplay runs with in the tests: the test
// process's (GORACE set by TestMain), NO_COLOR, then extra (KEY=value, the
// last of a key wins).
func binEnv(extra ...string) []string {
	return append(append(os.Environ(), "NO_COLOR=1"), extra...)
}

// runBinEnv is runBin with env (KEY=value, last one wins) added to the
// environment hookreplay gets. Tests give their variables this way, not by
// t.Setenv, which changes the whole test process's and so forbids
// t.Parallel.
func runBinEnv(t *testing.T, env []string, db string, stdin []byte, args ...string) result {
	t.Helper()
	if db != "" {
		args = append([]string{"--db", db}, args...)
	}
	c := exec.Command(binPath, args...)
	c.Env = binEnv(env...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run hookreplay %v: %v", args, err)
	}
	if strings.Contains(errb.String(), "goroutine ") && strings.Contains(errb.String(), "panic") {
		t.Fatalf("hookreplay %v panicked:\n%s", args, errb.String())
	}
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// proc is a background hookreplay process.
type proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	lines  chan string
	done   chan struct{}
}

// startBin starts hookreplay in the background and stops it (SIGTERM, then
// SIGKILL) when the test ends.
func startBin(t *testing.T, db string, args ...string) *proc {
	t.Helper()
	return startBinEnv(t, nil, db, args...)
}

// startBinEnv is startBin with env added to hookreplay's environment, as
// runBinEnv.
func startBinEnv(t *testing.T, env []string, db string, args ...string) *proc {
	t.Helper()
	if db != "" {
		args = append([]string{"--db", db}, args...)
	}
	p := &proc{cmd: exec.Command(binPath, args...), lines: make(chan string, 10000), done: make(chan struct{})}
	p.cmd.Env = binEnv(env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outPipe, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(outPipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stdout.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(5 * time.Second) })
	return p
}

// stop sends SIGTERM and waits up to grace, then kills.
func (p *proc) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// kill9 sends SIGKILL to the process and waits for it.
func (p *proc) kill9() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Output returns what the process printed so far.
func (p *proc) Output() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String(), p.stderr.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// freeAddr returns a 127.0.0.1 address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// waitListening waits until addr accepts TCP connections.
func waitListening(t *testing.T, addr string, p *proc) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if p != nil {
			select {
			case <-p.done:
				o, e := p.Output()
				t.Fatalf("process exited before listening on %s\nstdout:\n%s\nstderr:\n%s", addr, o, e)
			default:
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listening on %s", addr)
}
