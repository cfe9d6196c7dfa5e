package iostreams

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// pagerFromEnv is the pager long output goes through: $HOOKREPLAY_PAGER,
// else $PAGER, else less; "" or "cat" means none.
func pagerFromEnv() string {
	for _, name := range []string{"HOOKREPLAY_PAGER", "PAGER"} {
		if v, ok := os.LookupEnv(name); ok {
			return strings.TrimSpace(v)
		}
	}
	if _, err := exec.LookPath("less"); err == nil {
		return "less"
	}
	return ""
}

// SetPager sets the pager command ("" for none: --no-pager, tests).
func (s *IO) SetPager(cmd string) { s.pager = cmd }

// StartPager sends Out through the pager until StopPager, when stdout is a
// terminal and a pager is set; otherwise (a pipe, a file, a test) it does
// nothing, so scripts and tests see the output unchanged. less gets FRX
// (quit when it fits, keep colour, leave the screen) unless LESS is set.
func (s *IO) StartPager() error {
	if !s.outTTY || s.pager == "" || s.pager == "cat" || s.pagerProc != nil {
		return nil
	}
	cmd := exec.Command("sh", "-c", s.pager)
	cmd.Env = os.Environ()
	if _, ok := os.LookupEnv("LESS"); !ok {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	if _, ok := os.LookupEnv("LV"); !ok {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	cmd.Stdout, cmd.Stderr = s.Out, s.ErrOut
	w, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("pager %s: %w", s.pager, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pager %s: %w", s.pager, err)
	}
	s.pagerProc, s.pagerIn, s.pagedOut = cmd, w, s.Out
	s.Out = &pagerWriter{w}
	return nil
}

// StopPager closes the pager's input and waits for the user to leave it.
func (s *IO) StopPager() {
	if s.pagerProc == nil {
		return
	}
	_ = s.pagerIn.Close()
	_ = s.pagerProc.Wait()
	s.Out, s.pagerProc, s.pagerIn = s.pagedOut, nil, nil
}

// pagerWriter treats a pager that was quit early (q before the end) as the
// end of the output, not an error.
type pagerWriter struct{ w io.Writer }

func (p *pagerWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)) {
		return len(b), nil
	}
	return n, err
}
