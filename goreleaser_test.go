package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goreleaserModule is the GoReleaser the release config is written for.
const goreleaserModule = "github.com/goreleaser/goreleaser/v2@v2.15.1"

// fetchFailure matches the errors of `go run` when the module cannot be
// downloaded (offline, proxy down), the one case in which the check is skipped.
var fetchFailure = regexp.MustCompile(`(?i)(dial tcp|no such host|connection refused|i/o timeout|proxy\.golang\.org|GOPROXY|GOFLAGS=-mod|module lookup disabled|TLS handshake|network is unreachable)`)

// TestGoreleaserConfig runs `goreleaser check` on .goreleaser.yaml: valid v2
// schema and no deprecated properties.
func TestGoreleaserConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping goreleaser check")
	}
	out, err := exec.Command("go", "run", goreleaserModule, "--version").CombinedOutput()
	if err != nil {
		if fetchFailure.Match(out) {
			t.Skipf("cannot fetch %s: %s", goreleaserModule, lastLine(out))
		}
		t.Fatalf("go run %s --version: %v\n%s", goreleaserModule, err, out)
	}
	out, err = exec.Command("go", "run", goreleaserModule, "check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "validated") || strings.Contains(strings.ToLower(string(out)), "deprecat") {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}

// TestReleaseBuildsForWindows cross-compiles the binary the way the release
// does for the one target family whose syscall API differs from the Unix the
// tests run on (linux and darwin share it), so Unix-only code is caught
// before a release fails on it.
func TestReleaseBuildsForWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the windows cross-compile")
	}
	build := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "hookreplay.exe"), ".")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows GOARCH=amd64 go build: %v\n%s", err, out)
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
