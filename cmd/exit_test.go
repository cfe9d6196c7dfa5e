package cmd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// exitCode is the exit code and the stderr line main gives err.
func exitCode(err error) (int, string) {
	ee := asExitError(err)
	if ee == nil {
		return 0, ""
	}
	return ee.Code, ee.Error()
}

func TestExitErrorCodes(t *testing.T) {
	usage := usageErr("--to %q is not an http:// URL", "x")
	for _, tt := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"success", nil, 0, ""},
		{"usage", usage, 2, `--to "x" is not an http:// URL`},
		{"wrapped usage", fmt.Errorf("context: %w", usage), 2, `--to "x" is not an http:// URL`},
		{"verification failed", failErr("invalid: %s", "signature mismatch"), 1, "invalid: signature mismatch"},
		{"silent", silentExit(3), 3, ""},
		{"interrupted", fmt.Errorf("run: %w", context.Canceled), 130, "interrupted"},
		{"anything else", errors.New("open x.db: permission denied"), 2, "open x.db: permission denied"},
		{"setup cut short by a signal", setupErr("%v", fmt.Errorf("read delivery: %w", context.Canceled)), 130, "interrupted"},
		{"setup", setupErr("%v", errors.New("no such table")), 2, "no such table"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, msg := exitCode(tt.err); code != tt.code || msg != tt.msg {
				t.Fatalf("got %d %q, want %d %q", code, msg, tt.code, tt.msg)
			}
		})
	}
	// Unwrap: the cause stays visible to errors.Is / errors.As.
	cause := errors.New("cause")
	if !errors.Is(&ExitError{Code: 2, Err: cause}, cause) {
		t.Fatal("ExitError hides its Err from errors.Is")
	}
}

// cobra's own errors (unknown command or flag, wrong argument count) are
// usage errors, exit 2.
func TestCobraErrorsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"no-such-command"}, {"list", "--no-such-flag"}, {"list", "extra"}, {"show"}} {
		io, _, _, _ := iostreams.Test()
		root := NewRootCmd(io)
		root.SetArgs(args)
		if code, msg := exitCode(root.Execute()); code != 2 || msg == "" {
			t.Errorf("%v: exit %d %q, want 2 and a message", args, code, msg)
		}
	}
}
