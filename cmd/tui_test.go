package cmd

import (
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// tui takes check's engine flags; c in the TUI checks with them.
func TestTUIFlags(t *testing.T) {
	t.Setenv("HOOKREPLAY_TUI_SECRET", "whsec_env")
	for _, tc := range []struct {
		args    []string
		ok      func(*tuiOptions) bool
		wantErr string
	}{
		{nil, func(o *tuiOptions) bool { return o.target == nil && o.Check.Secret == "" }, ""},
		{[]string{"--secret-env", "HOOKREPLAY_TUI_SECRET"}, func(o *tuiOptions) bool { return o.target == nil && o.Check.Secret == "whsec_env" }, ""},
		{[]string{"--to", "http://127.0.0.1:3000/h", "--probe-cmd", "echo 1", "--phases", "first,dups", "-n", "4"}, func(o *tuiOptions) bool {
			return o.target != nil && o.target.Host == "127.0.0.1:3000" && strings.Join(o.Check.Phases, ",") == "first,dups" && o.Check.N == 4
		}, ""},
		{[]string{"--provider", "Stripe", "--type", "invoice.*", "--since", "2h"}, func(o *tuiOptions) bool {
			return tuiQuery(&o.Filter) == "provider:stripe type:invoice.* since:2h" && o.target == nil
		}, ""},
		{[]string{"--type", "[x"}, nil, "malformed glob"},
		{[]string{"--probe-cmd", "echo 1"}, nil, "--to URL is required"},
		// --to alone is where r replays: no check, no error.
		{[]string{"--to", "3000/h"}, func(o *tuiOptions) bool { return o.target == nil && o.Check.To == "http://127.0.0.1:3000/h" }, ""},
		{[]string{"--to", "ftp://x/h"}, nil, "--to"},
		{[]string{"--to", "http://x/h", "--probe-cmd", "echo 1", "--phases", "crash"}, nil, "--serve"},
		{[]string{"7"}, nil, "unknown command"},
	} {
		var got *tuiOptions
		io, _, _, _ := iostreams.Test()
		cmd := newTUICmd(newFactory(io), func(o *tuiOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		code, msg := exitCode(cmd.Execute())
		if tc.wantErr != "" {
			if code != 2 || !strings.Contains(msg, tc.wantErr) {
				t.Errorf("%v: want exit 2 with %q, got %d %q", tc.args, tc.wantErr, code, msg)
			}
			continue
		}
		if code != 0 || got == nil || !tc.ok(got) {
			t.Errorf("%v: exit %d %q, options %+v", tc.args, code, msg, got)
		}
	}
}
