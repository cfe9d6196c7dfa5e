//go:build interop

// Package interop checks hookreplay's signature schemes against the
// providers' own SDKs from npm: what hookreplay signs (a delivery, a
// re-signed and a re-identified copy) the SDK accepts, what the SDK signs
// hookreplay accepts, and both reject the same tampered copies. It needs
// node and npm, so it stays out of `go test ./...`:
//
//	go test -tags interop ./interop/
//
// The SDKs are the exact versions of node/package-lock.json, installed once
// with `npm ci` into a cache directory named for the lock file's hash
// ($HOOKREPLAY_INTEROP_CACHE, else the user cache dir), or taken from
// $HOOKREPLAY_INTEROP_NODE_MODULES when it names an installed node_modules.
package interop

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	nodeOnce sync.Once
	nodeDir  string // a directory holding run.js, cases/ and node_modules
	nodeErr  error
)

// nodeSetup installs the SDKs (once per lock file) and lays out a private
// directory with the scripts and a node_modules link, so that a stale
// node_modules a developer left in node/ is never the one resolved.
func nodeSetup() (string, error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%s is not installed (the interop suite runs the providers' npm SDKs)", tool)
		}
	}
	src, err := filepath.Abs("node")
	if err != nil {
		return "", err
	}
	modules := os.Getenv("HOOKREPLAY_INTEROP_NODE_MODULES")
	if modules == "" {
		if modules, err = npmCI(src); err != nil {
			return "", err
		}
	}
	dir, err := os.MkdirTemp("", "hookreplay-interop-")
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		return "", fmt.Errorf("copy node scripts: %w", err)
	}
	os.RemoveAll(filepath.Join(dir, "node_modules"))
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		return "", err
	}
	return dir, nil
}

// npmCI runs `npm ci` for src's lock file into the cache, once per lock
// file content, and returns the node_modules directory.
func npmCI(src string) (string, error) {
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", err
	}
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(append([]byte(nil), pkg...), lock...))
	cache := os.Getenv("HOOKREPLAY_INTEROP_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(base, "hookreplay-interop")
	}
	dir := filepath.Join(cache, hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "installed")); err == nil {
		return modules, nil
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), lock, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "installed"), nil, 0o644); err != nil {
		return "", err
	}
	return modules, nil
}

// TestMain removes the private script directory after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if nodeDir != "" {
		os.RemoveAll(nodeDir)
	}
	os.Exit(code)
}

// sdkOp is one request to a case script: verify a delivery, or sign a body.
type sdkOp struct {
	Op      string            `json:"op"` // "verify" or "sign"
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers,omitempty"` // lower-case names
	Secret  string            `json:"secret"`
	URL     string            `json:"url,omitempty"`
	// Target is the request target, path and query (Mercado Pago signs
	// the query's data.id).
	Target string `json:"target,omitempty"`
	// Tolerance, in seconds, asks an SDK that takes one to apply it.
	Tolerance int64  `json:"tolerance,omitempty"`
	Method    string `json:"method,omitempty"`
	ID        string `json:"id,omitempty"`
	Timestamp int64  `json:"timestamp,omitempty"`
}

// sdkResult is a case script's answer to one sdkOp.
type sdkResult struct {
	Accepted bool              `json:"accepted"`
	Error    string            `json:"error"`
	ID       string            `json:"id"`   // the event id as the SDK reads it, when it does
	Type     string            `json:"type"` // the event type as the SDK reads it, when it does
	Headers  map[string]string `json:"headers"`
}

// runCase runs node/cases/NAME.js over ops in one node process and returns
// its results, one per op.
func runCase(t *testing.T, name string, ops []sdkOp) []sdkResult {
	t.Helper()
	nodeOnce.Do(func() { nodeDir, nodeErr = nodeSetup() })
	if nodeErr != nil {
		t.Fatal(nodeErr)
	}
	in, err := json.Marshal(map[string]any{"ops": ops})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "run.js", name)
	cmd.Dir = nodeDir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node run.js %s: %v\n%s", name, err, strings.TrimSpace(stderr.String()))
	}
	var out struct {
		Results []sdkResult `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node run.js %s: %v in %q", name, err, stdout.String())
	}
	if len(out.Results) != len(ops) {
		t.Fatalf("node run.js %s: %d results for %d ops", name, len(out.Results), len(ops))
	}
	return out.Results
}
