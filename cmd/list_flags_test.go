package cmd

import (
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// TestListProviderAndGlobChecked: `list --provider GitHub` means github (the
// stored names are lower case; it listed nothing), and a malformed --type
// glob is a usage error instead of "no deliveries match".
func TestListProviderAndGlobChecked(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	var l *listOptions
	if code, msg := captureRunFlags(newListCmd(f, func(o *listOptions) error { l = o; return nil }), io, []string{"--provider", "GitHub"}); code != 0 || l.Provider != "github" {
		t.Fatalf("--provider GitHub: %d %s %+v", code, msg, l)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--type", "invoice.[paid"}, "--type"},
	} {
		if code, msg := captureRunFlags(newListCmd(f, nil), io, bad.args); code != 2 || !strings.Contains(msg, bad.want) {
			t.Errorf("list %v: exit %d %q, want 2 and %q", bad.args, code, msg, bad.want)
		}
	}
}
