package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// DefaultReadyTimeout bounds how long Start waits for the handler to accept connections.
const DefaultReadyTimeout = 15 * time.Second

// Server is the handler process started with --serve: `sh -c CMD` in its own
// process group, so that killing it (crash phase) and stopping it take every
// child with it. Where the system allows it (Linux, FreeBSD) the group dies
// with hookreplay too, even when hookreplay is killed with kill -9
// (serveCommand).
type Server struct {
	// Cmd is run by sh -c.
	Cmd string
	// Addr is host:port the handler listens on (the --to URL's).
	Addr string
	// ReadyTimeout bounds Start's wait (DefaultReadyTimeout when 0).
	ReadyTimeout time.Duration
	// Env is added to the process environment.
	Env []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	out  *tailBuffer
}

// Start runs the command and waits until Addr accepts connections. It
// fails with a *ServeError (which carries the process's output when it
// exited first or the wait timed out), or ctx's error.
func (s *Server) Start(ctx context.Context) error {
	if canDial(s.Addr) {
		return &ServeError{Problem: ServeAddrInUse, Cmd: s.Cmd, Addr: s.Addr}
	}
	s.mu.Lock()
	s.out = &tailBuffer{max: 16 << 10}
	c := serveCommand(s.Cmd)
	c.Stdout, c.Stderr = s.out, s.out
	c.Env = append(os.Environ(), s.Env...)
	done := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// The parent-death signal follows the thread that started the
		// process: this one stays alive (locked) until the process is gone,
		// so the Go runtime never retires it under a live handler.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		s.mu.Unlock()
		return &ServeError{Problem: ServeNoStart, Cmd: s.Cmd, Addr: s.Addr, Err: err}
	}
	s.cmd, s.done = c, done
	s.mu.Unlock()
	timeout := s.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		if canDial(s.Addr) {
			return nil
		}
		select {
		case <-done:
			return &ServeError{Problem: ServeExited, Cmd: s.Cmd, Addr: s.Addr, State: c.ProcessState.String(), Output: indent(s.out.String())}
		case <-ctx.Done():
			s.Stop()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return &ServeError{Problem: ServeNotReady, Cmd: s.Cmd, Addr: s.Addr, Timeout: timeout, Output: indent(s.out.String())}
		}
	}
}

// Kill sends SIGKILL to the process group and waits until it is gone and
// Addr no longer accepts connections. It returns when the signal was sent
// (zero when there was no process).
func (s *Server) Kill() time.Time {
	return s.signal(true, 0)
}

// Stop sends SIGTERM to the process group, then SIGKILL after 3 s.
func (s *Server) Stop() {
	s.signal(false, 3*time.Second)
}

func (s *Server) signal(kill bool, grace time.Duration) (sent time.Time) {
	s.mu.Lock()
	c, done := s.cmd, s.done
	s.mu.Unlock()
	if c == nil || c.Process == nil {
		return time.Time{}
	}
	sent = time.Now()
	select {
	case <-done:
		// sh is gone; children it left in the group (a backgrounded server)
		// are not: take them too.
		signalGroup(c, true)
	default:
		signalGroup(c, kill)
		if !kill {
			select {
			case <-done:
			case <-time.After(grace):
			}
		}
		signalGroup(c, true)
		<-done
	}
	// sh is gone; children of the group were killed with it. Wait briefly
	// for the listening socket to close so a restart binds afresh.
	for i := 0; i < 100 && canDial(s.Addr); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return sent
}

// Output is the tail of what the process printed.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		return ""
	}
	return s.out.String()
}

func canDial(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "  (no output)"
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if over := t.b.Len() - t.max; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// reset runs the reset command, when one is given.
func (r *runner) reset(ctx context.Context) error {
	if r.o.ResetCmd == "" {
		return nil
	}
	if err := runShell(ctx, r.o.ResetCmd, time.Minute); err != nil {
		return &SetupError{Err: &ResetError{Err: err}}
	}
	return nil
}

// runShell runs cmd with sh -c (with env added to the environment) and
// returns an error with its output's first lines when it fails or takes
// longer than timeout.
func runShell(ctx context.Context, cmd string, timeout time.Duration, env ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	if len(env) > 0 {
		c.Env = append(os.Environ(), env...)
	}
	ownGroup(c)
	c.Cancel = func() error { signalGroup(c, true); return nil }
	c.WaitDelay = time.Second
	out, err := c.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%q did not finish within %s", cmd, timeout)
		}
		if msg != "" {
			return fmt.Errorf("%q failed (%v): %s", cmd, err, msg)
		}
		return fmt.Errorf("%q failed: %v", cmd, err)
	}
	return nil
}
