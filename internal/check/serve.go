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
//
// A command that exits 0 while what it started keeps running (`nohup
// ./server & exit 0`, an npm script that backgrounds, an init script) is a
// normal way to start a server: Start waits for Addr anyway while the group
// has members, and Stop stops them.
//
// A handler hookreplay cannot kill through a process group — under docker
// compose, systemd, a process manager, or a wrapper that daemonizes — is
// killed and started again by KillCmd and StartCmd; Cmd may then be empty
// (the handler already runs and is left running at the end).
type Server struct {
	// Cmd is run by sh -c ("" : the handler is already running).
	Cmd string
	// Addr is host:port the handler listens on (the --to URL's).
	Addr string
	// ReadyTimeout bounds Start's wait (DefaultReadyTimeout when 0).
	ReadyTimeout time.Duration
	// Env is added to the process environment.
	Env []string
	// KillCmd, when set, kills the handler for the crash phase (sh -c)
	// instead of SIGKILL to the group; StartCmd starts it again after a
	// kill (run as Cmd is: it may stay in the foreground or exit 0).
	KillCmd, StartCmd string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	out  *tailBuffer
	// pgid is the process group of the last command started (0: none).
	pgid int
	// keeper guards a group whose leader exited 0 (keepGroup).
	keeper *exec.Cmd
	// killed: Kill ran, so the next Start is a restart.
	killed bool
	// killTook is the longest a KillCmd took, killFastest the shortest.
	killTook, killFastest time.Duration
}

// Start runs the command and waits until Addr accepts connections. It
// fails with a *ServeError (which carries the process's output when it
// exited first or the wait timed out), or ctx's error.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	cmd, byStart := s.Cmd, s.killed && s.StartCmd != ""
	if byStart {
		cmd = s.StartCmd
	}
	s.mu.Unlock()
	timeout := s.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	if cmd == "" {
		// Not started by hookreplay: it must be listening already.
		if canDial(s.Addr) {
			return nil
		}
		return &ServeError{Problem: ServeNotRunning, Addr: s.Addr}
	}
	if canDial(s.Addr) {
		return &ServeError{Problem: ServeAddrInUse, Cmd: cmd, Addr: s.Addr, ByStartCmd: byStart}
	}
	s.mu.Lock()
	s.out = &tailBuffer{max: 16 << 10}
	c := serveCommand(cmd)
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
		return &ServeError{Problem: ServeNoStart, Cmd: cmd, Addr: s.Addr, Err: err, ByStartCmd: byStart}
	}
	s.cmd, s.done, s.pgid = c, done, c.Process.Pid
	s.mu.Unlock()
	deadline := time.Now().Add(timeout)
	exited := done
	state := ""
	for {
		if canDial(s.Addr) {
			return nil
		}
		select {
		case <-exited:
			if !c.ProcessState.Success() {
				return &ServeError{Problem: ServeExited, Cmd: cmd, Addr: s.Addr, State: c.ProcessState.String(), Output: indent(s.out.String()), ByStartCmd: byStart}
			}
			// The command exited 0, as a wrapper that starts the server in
			// the background does (nohup … &, npm scripts, docker compose
			// up -d, init scripts): wait for the port anyway, and guard
			// what it left in the group.
			state = c.ProcessState.String()
			if groupAlive(c.Process.Pid) {
				s.keepGroup(c.Process.Pid)
			}
			exited = nil
		case <-ctx.Done():
			s.Stop()
			return ctx.Err()
		case <-time.After(readyPoll(time.Until(deadline), timeout)):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return &ServeError{Problem: ServeNotReady, Cmd: cmd, Addr: s.Addr, Timeout: timeout, State: state, Output: indent(s.out.String()), ByStartCmd: byStart}
		}
	}
}

// readyPoll is the pause between two dials while Start waits for the
// handler: 2 ms for the first second (the crash phase restarts the handler
// a dozen times, and a fast one is up in tens of milliseconds, which a 20 ms
// poll rounded up by half a poll each time), then 20 ms. A dial to a port
// nobody listens on is refused at once, so polling often costs little.
func readyPoll(left, timeout time.Duration) time.Duration {
	if timeout-left < time.Second {
		return 2 * time.Millisecond
	}
	return 20 * time.Millisecond
}

// keepGroup starts a guard in process group pgid, whose leader exited 0,
// so that the group still dies with hookreplay (serveKeeper); without one
// the group is still stopped at the end.
func (s *Server) keepGroup(pgid int) {
	k := serveKeeper(pgid)
	if k == nil {
		return
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := k.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		k.Wait()
	}()
	if <-started == nil {
		s.mu.Lock()
		s.keeper = k
		s.mu.Unlock()
	}
}

// Kill kills the handler — KillCmd when given, else SIGKILL to the process
// group — and waits until Addr no longer accepts connections. It returns
// when the kill was done: the signal sent, or KillCmd finished (zero when
// there was no process). An error is KillCmd failing, or a handler still
// accepting connections after it.
func (s *Server) Kill(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	s.killed = true
	s.mu.Unlock()
	if s.KillCmd == "" {
		return s.signal(true, 0), nil
	}
	start := time.Now()
	if err := runShell(ctx, s.KillCmd, time.Minute); err != nil {
		return time.Time{}, &ServeError{Problem: ServeKillFailed, Cmd: s.KillCmd, Addr: s.Addr, Err: err}
	}
	at := time.Now()
	s.mu.Lock()
	s.killTook = max(s.killTook, at.Sub(start))
	if s.killFastest == 0 || at.Sub(start) < s.killFastest {
		s.killFastest = at.Sub(start)
	}
	s.mu.Unlock()
	// What hookreplay started itself (a StartCmd in the foreground) goes too.
	s.signal(true, 0)
	for deadline := at.Add(killCloseTimeout); canDial(s.Addr); {
		if time.Now().After(deadline) {
			return time.Time{}, &ServeError{Problem: ServeKillFailed, Cmd: s.KillCmd, Addr: s.Addr, Timeout: killCloseTimeout}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return at, nil
}

// killCloseTimeout bounds the wait for Addr to close after KillCmd.
const killCloseTimeout = 10 * time.Second

// Running reports whether the process Start ran (or what it left in its
// group) is still there: a handler that died on its own is not, and only
// Start brings it back.
func (s *Server) Running() bool {
	s.mu.Lock()
	done, pgid, keeper := s.done, s.pgid, s.keeper
	s.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		// A keeper is a member too: with one, the group cannot tell.
		return keeper != nil || groupAlive(pgid)
	default:
		return true
	}
}

// KillTook is the longest a KillCmd took (0 without one): a kill lands up
// to that much after the moment it was aimed at.
func (s *Server) KillTook() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killTook
}

// KillLead is the shortest a KillCmd took (0 without one, or before its
// first kill): a timed kill starts the command that much before the moment
// it is aimed at, so that a command slower than the handler's work (a
// shell, docker kill) still lands inside it.
func (s *Server) KillLead() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killFastest
}

// Stop sends SIGTERM to the process group, then SIGKILL after 3 s. When
// Cmd started the handler and it still accepts connections then (a wrapper
// left it outside the group: setsid, docker compose up -d), KillCmd stops
// it. A handler hookreplay did not start (no Cmd) is left running.
func (s *Server) Stop() {
	s.signal(false, 3*time.Second)
	if s.Cmd != "" && s.KillCmd != "" && canDial(s.Addr) {
		_ = runShell(context.Background(), s.KillCmd, time.Minute)
	}
}

func (s *Server) signal(kill bool, grace time.Duration) (sent time.Time) {
	s.mu.Lock()
	c, done, pgid, keeper := s.cmd, s.done, s.pgid, s.keeper
	s.keeper = nil
	s.mu.Unlock()
	if c == nil || c.Process == nil {
		return time.Time{}
	}
	sent = time.Now()
	select {
	case <-done:
		// sh is gone; children it left in the group (a backgrounded server)
		// are not: take them too, gently first when stopping.
		if !kill && groupAlive(pgid) {
			killGroup(pgid, false)
			for end := time.Now().Add(grace); groupAlive(pgid) && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
		}
		killGroup(pgid, true)
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
	if keeper != nil && keeper.Process != nil {
		keeper.Process.Kill()
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
