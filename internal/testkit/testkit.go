// Package testkit holds the helpers that tests in several packages share:
// building the hookreplay binary once per test process, finding the
// repository's fixtures, and giving a test its own Postgres schema. It is
// imported only by tests.
package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// RepoRoot returns the repository's root directory: the nearest directory
// at or above the working directory holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// BuildBinary builds hookreplay into dir and returns its path. It is built
// with -race when the calling test binary is, so end-to-end tests run under
// the race detector exactly when the package tests do.
func BuildBinary(dir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hookreplay")
	args := []string{"build", "-o", bin}
	if RaceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build hookreplay: %w", err)
	}
	return bin, nil
}
