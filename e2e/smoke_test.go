package e2e

import (
	"os"
	"strings"
	"testing"
)

func TestVersionAndUsageErrors(t *testing.T) {
	t.Parallel()
	r := runBin(t, "", nil, "--version")
	if r.Code != 0 || !strings.Contains(r.Stdout, "hookreplay version") {
		t.Fatalf("--version: %+v", r)
	}
	r = runBin(t, "", nil, "no-such-command")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unknown command") {
		t.Fatalf("unknown command: %+v", r)
	}
	r = runBin(t, "", nil, "--no-such-flag")
	if r.Code != 2 {
		t.Fatalf("unknown flag: %+v", r)
	}
}

func TestReadOnlyCommandsDoNotCreateADatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := dir + "/typo.db"
	for _, args := range [][]string{{"list"}, {"runs"}, {"show", "1"}, {"export"}} {
		r := runBin(t, missing, nil, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "no database at") {
			t.Fatalf("%v on a missing db: %+v", args, r)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a read-only command created %s", missing)
	}
	r := runBin(t, dir, nil, "list")
	if r.Code != 2 || !strings.Contains(r.Stderr, "is a directory") {
		t.Fatalf("list with --db DIR: %+v", r)
	}
}
