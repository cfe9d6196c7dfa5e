// Package iostreams carries a command's standard streams and whether colour
// and terminal features are on, so commands never touch os.Stdout directly and
// tests can run them against buffers.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"os/exec"

	"github.com/mattn/go-isatty"
)

// IO is a command's input, output and error streams.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY  bool
	errTTY  bool
	colorOn bool

	pager     string // see StartPager
	pagerProc *exec.Cmd
	pagerIn   io.WriteCloser
	pagedOut  io.Writer
}

// System returns the process's streams; colour is on only when stdout is a
// terminal and NO_COLOR is unset.
func System() *IO {
	tty := isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd())
	_, noColor := os.LookupEnv("NO_COLOR")
	errTTY := isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd())
	s := &IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, outTTY: tty, errTTY: errTTY, colorOn: tty && !noColor}
	if tty {
		// Only a terminal is paged (StartPager): a run whose output goes
		// to a pipe or a file does not look for less on the PATH.
		s.pager = pagerFromEnv()
	}
	return s
}

// Test returns streams backed by buffers: (io, stdin, stdout, stderr).
func Test() (*IO, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IO{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsTerminal reports whether stdout is a terminal.
func (s *IO) IsTerminal() bool { return s.outTTY }

// ErrTerminal reports whether stderr is a terminal: progress may then be
// redrawn in place.
func (s *IO) ErrTerminal() bool { return s.errTTY }

// SetErrTerminal overrides stderr's terminal detection (tests).
func (s *IO) SetErrTerminal(b bool) { s.errTTY = b }

// SetTerminal overrides terminal detection (tests).
func (s *IO) SetTerminal(b bool) { s.outTTY = b }

// ColorEnabled reports whether output may be coloured; the views paint with
// report.Colors(ColorEnabled()).
func (s *IO) ColorEnabled() bool { return s.colorOn }

// SetColor turns colour on or off (the --no-color flag).
func (s *IO) SetColor(on bool) { s.colorOn = on }
