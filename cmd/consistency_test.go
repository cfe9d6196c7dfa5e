package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// TestOneNamePerConcept: copies, timeouts, quiet and limits are spelled the
// same on every command (issue 13).
func TestOneNamePerConcept(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	for _, args := range [][]string{{"1", "--to", "3000", "-n", "4"}, {"1", "--to", "3000", "--copies", "4"}, {"1", "--to", "3000", "--n", "4"}} {
		var c *checkOptions
		if code, msg := captureRunFlags(newCheckCmd(f, func(o *checkOptions) error { c = o; return nil }), io, args); code != 0 || c.N != 4 {
			t.Errorf("check %v: %d %s %+v", args, code, msg, c)
		}
		var r *replayOptions
		if args[len(args)-2] == "--n" {
			continue // replay never had --n
		}
		if code, msg := captureRunFlags(newReplayCmd(f, func(o *replayOptions) error { r = o; return nil }), io, args); code != 0 || r.N != 4 {
			t.Errorf("replay %v: %d %s %+v", args, code, msg, r)
		}
	}
	if h := newCheckCmd(f, nil).Flags().Lookup("n"); !h.Hidden || h.Deprecated != "use -n or --copies" {
		t.Errorf("check's old --n: hidden %v, deprecated %q", h.Hidden, h.Deprecated)
	}

	var c *checkOptions
	if code, msg := captureRunFlags(newCheckCmd(f, func(o *checkOptions) error { c = o; return nil }), io, []string{"1", "--to", "3000", "--timeout", "2s", "--provider-timeout", "1s", "-q"}); code != 0 || c.Timeout != 2*time.Second || c.ProviderTimeout != time.Second || !c.Quiet {
		t.Errorf("check --timeout --provider-timeout -q: %d %s %+v", code, msg, c)
	}
	var r *replayOptions
	if code, msg := captureRunFlags(newReplayCmd(f, func(o *replayOptions) error { r = o; return nil }), io, []string{"1", "--to", "3000", "--timeout", "2s", "-q"}); code != 0 || r.Timeout != 2*time.Second || !r.Quiet {
		t.Errorf("replay --timeout -q: %d %s %+v", code, msg, r)
	}
	for name, fl := range map[string]string{
		"replay": newReplayCmd(f, nil).Flags().Lookup("timeout").Usage,
		"check":  newCheckCmd(f, nil).Flags().Lookup("timeout").Usage,
		"send":   newSendCmd(f, nil).Flags().Lookup("timeout").Usage,
	} {
		if !strings.HasPrefix(fl, "per request: connect, send and wait for the answer") {
			t.Errorf("%s --timeout is documented as %q", name, fl)
		}
	}
	if l, r := newListCmd(f, nil).Flags().Lookup("limit").DefValue, newRunsCmd(f, nil).Flags().Lookup("limit").DefValue; l != r {
		t.Errorf("list --limit %s, runs --limit %s", l, r)
	}
}
