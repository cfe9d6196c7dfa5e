package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// DefaultReadTimeout bounds one reading of a command, HTTP or SQL probe.
const DefaultReadTimeout = 30 * time.Second

// CmdProbe runs a shell command; its trimmed stdout is the value.
type CmdProbe struct {
	cmd string
	// Timeout bounds one run (DefaultReadTimeout when zero).
	Timeout time.Duration
	// scoped: the command's placeholders are filled in (Scope).
	scoped bool
}

// NewCmd returns a probe that runs `sh -c cmd` and reads its trimmed stdout,
// numeric when it parses. A non-zero exit is an error carrying stderr's first line.
func NewCmd(cmd string) *CmdProbe { return &CmdProbe{cmd: cmd} }

// Name is "cmd: " and the command.
func (p *CmdProbe) Name() string { return "cmd: " + p.cmd }

// Read runs the command once.
func (p *CmdProbe) Read(ctx context.Context) (Value, error) {
	if !p.scoped && scoped(p.cmd) {
		return Value{}, probeErr(p.Name(), errUnscoped)
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(p.Timeout, DefaultReadTimeout))
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", p.cmd)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	// A background child keeping the pipes open must not hang the probe.
	c.WaitDelay = time.Second
	err := c.Run()
	if err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return Value{}, probeErr(p.Name(), fmt.Errorf("timed out after %s", orDefault(p.Timeout, DefaultReadTimeout)))
			}
			return Value{}, probeErr(p.Name(), ctx.Err())
		}
		msg := err.Error()
		if l := firstLine(errb.String()); l != "" {
			msg += ": " + l
		}
		return Value{}, probeErr(p.Name(), errors.New(msg))
	}
	return TextValue(out.String()), nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
