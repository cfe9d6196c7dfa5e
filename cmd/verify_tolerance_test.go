package cmd

import (
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// TestVerifyToleranceZeroIsRefused: --tolerance 0s silently meant "the
// provider's default" (300 s), so a user asking for the strictest check got
// the loosest one and a 4-minute-old signature passed. It is a usage error
// now, with a hint.
func TestVerifyToleranceZeroIsRefused(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := newVerifyCmd(newFactory(ios), func(*verifyOptions) error { return nil })
	cmd.SetArgs([]string{"1", "--secret", "k", "--tolerance", "0s"})
	code, msg := ExitCode(cmd.Execute())
	if code != 2 || !strings.Contains(msg, "--tolerance") {
		t.Fatalf("exit %d %q, want 2 naming --tolerance", code, msg)
	}
}
