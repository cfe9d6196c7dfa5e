package cmd

import (
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

func TestSendFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		ok      func(*sendOptions) bool
		wantErr string
	}{
		{[]string{"--event", "push", "--to", "http://x/h", "--secret", "s"}, func(o *sendOptions) bool {
			return o.Provider == "github" && o.Event == "push" && o.BodyPath == "" && !o.KeepID
		}, ""},
		{[]string{"--provider", "Stripe", "--body", "-", "--keep-id", "--to", "http://x/h", "--secret", "s"}, func(o *sendOptions) bool {
			return o.Provider == "stripe" && o.Event == "" && o.BodyPath == "-" && o.KeepID
		}, ""},
		{[]string{"--provider", "github", "--body", "pr.json", "--event", "pull_request", "--to", "http://x/h", "--secret", "s"}, func(o *sendOptions) bool {
			return o.Event == "pull_request" && o.BodyPath == "pr.json"
		}, ""},
		{[]string{"--body", "e.json", "--to", "http://x/h", "--secret", "s"}, nil, "--body: pass --provider"},
		{[]string{"--provider", "generic", "--body", "e.json", "--to", "http://x/h", "--secret", "s"}, nil, `unknown provider "generic"`},
		{[]string{"--event", "invoice.paid", "--provider", "stripe", "--keep-id", "--to", "http://x/h", "--secret", "s"}, nil, "--keep-id keeps"},
		{[]string{"--provider", "slack", "--to", "http://x/h", "--secret", "s"}, nil, "--event is required (event_callback, message.channels), or --body FILE"},
		{[]string{"--event", "app/uninstalled", "--provider", "stripe", "--to", "http://x/h", "--secret", "s"}, nil, `no sample stripe event "app/uninstalled" (stripe events: `},
	} {
		var got *sendOptions
		io, _, _, _ := iostreams.Test()
		cmd := newSendCmd(newFactory(io), func(o *sendOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		code, msg := exitCode(cmd.Execute())
		if tc.wantErr != "" {
			if code != 2 || !strings.Contains(msg, tc.wantErr) || strings.Contains(msg, "\n") {
				t.Errorf("%v: want exit 2 with %q on one line, got %d %q", tc.args, tc.wantErr, code, msg)
			}
			continue
		}
		if code != 0 || got == nil || !tc.ok(got) {
			t.Errorf("%v: exit %d %q, options %+v", tc.args, code, msg, got)
		}
	}
}

// --event completes the events of --provider (all when none is given).
func TestSendEventCompletion(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	root := NewRootCmd(io)
	root.SetOut(io.Out)
	root.SetArgs([]string{"__complete", "send", "--provider", "github", "--event", ""})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"push\t", "pull_request.opened\t", "installation.created\t"} {
		if !strings.Contains(got, want) {
			t.Errorf("completion lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "invoice.paid") {
		t.Errorf("completion for github lists stripe events:\n%s", got)
	}
}
