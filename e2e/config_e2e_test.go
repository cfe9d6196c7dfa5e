package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
)

// runBinIn runs hookreplay with args in dir (where it looks for hookreplay.yaml).
func runBinIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runBinInEnv(t, nil, dir, args...)
}

// runBinInEnv is runBinIn with env added to hookreplay's environment (and so
// to the handlers its checks serve), as runBinEnv.
func runBinInEnv(t *testing.T, env []string, dir string, args ...string) result {
	t.Helper()
	c := exec.Command(binPath, args...)
	c.Dir = dir
	c.Env = binEnv(env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return result{Stdout: out.String(), Stderr: errb.String(), Code: ee.ExitCode()}
	}
	if err != nil {
		t.Fatalf("run hookreplay %v: %v", args, err)
	}
	return result{Stdout: out.String(), Stderr: errb.String()}
}

// TestCheckConfigTwoChecks: hookreplay.yaml with a correct handler (the
// fixed wallet, started by the check's serve: command) and a buggy one (the
// naive wallet, which credits every copy): `hookreplay check` runs both,
// reports both and exits 1, the worst of them; `hookreplay check NAME` runs
// one.
func TestCheckConfigTwoChecks(t *testing.T) {
	t.Parallel()
	env := []string{"HOOKREPLAY_E2E_SECRET=" + checkSecret}
	dir := t.TempDir()
	db := filepath.Join(dir, "hookreplay.db")
	id := checkStripeDelivery(t, db)
	jsonl := filepath.Join(dir, "deliveries.jsonl")
	if r := runBinEnv(t, env, db, nil, "export", fmt.Sprint(id), "--format", "jsonl", "-o", jsonl); r.Code != 0 {
		t.Fatalf("export: %+v", r)
	}
	buggyURL, buggyDSN := checkWallet(t, wallet.Naive)
	addr := freeAddr(t)
	goodDB := filepath.Join(dir, "good-wallet.db")
	serve := fmt.Sprintf("exec %s demo serve fixed --listen %s --db %s --secret-env HOOKREPLAY_E2E_SECRET --quiet", binPath, addr, goodDB)
	yaml := fmt.Sprintf(`# the CI job's checks
checks:
  good:
    deliveries: {from: deliveries.jsonl}
    to: http://%s/webhooks/stripe
    serve: %s
    probes:
      balance: {sql: "%s", dsn: "sqlite:%s"}
    phases: [first, dups]
    copies: 3
    settle: 100ms
    secret_env: HOOKREPLAY_E2E_SECRET
    reports: {junit: good.xml}
  buggy:
    deliveries: {ids: [%d]}
    to: %s
    probes:
      balance: {sql: "%s", dsn: "%s"}
    phases: [first, dups]
    copies: 3
    settle: 100ms
    secret_env: HOOKREPLAY_E2E_SECRET
    reports: {junit: buggy.xml, json: buggy.json}
`, addr, serve, checkBalanceSQL, goodDB, id, buggyURL, checkBalanceSQL, buggyDSN)
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}

	r := runBinInEnv(t, env, dir, "check")
	t.Logf("hookreplay check (exit %d):\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	if r.Code != 1 {
		t.Fatalf("check of both: want exit 1 (buggy violates), got %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"== check good (hookreplay.yaml:3)", "== check buggy (hookreplay.yaml:14)", "hookreplay.yaml: 2 checks"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	summary := r.Stdout[strings.Index(r.Stdout, "hookreplay.yaml: 2 checks"):]
	if !strings.Contains(summary, "good") || !strings.Contains(summary, "passed") || !strings.Contains(summary, "VIOLATION (exit 1)") {
		t.Errorf("summary:\n%s", summary)
	}
	for _, f := range []string{"good.xml", "buggy.xml", "buggy.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Errorf("report %s: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "buggy.xml")); !bytes.Contains(b, []byte("<failure")) {
		t.Errorf("buggy.xml has no failure:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "good.xml")); bytes.Contains(b, []byte("<failure")) {
		t.Errorf("good.xml has a failure:\n%s", b)
	}
	waitClosed(t, addr) // serve: stops the handler it started

	// One check by name: only the correct handler, exit 0.
	if r := runBinInEnv(t, env, dir, "check", "good", "-q"); r.Code != 0 || strings.Contains(r.Stdout, "buggy") {
		t.Fatalf("check good: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runBinInEnv(t, env, dir, "check", "nope"); r.Code != 2 || !strings.Contains(r.Stderr, `hookreplay.yaml has no check "nope" (its checks: good, buggy)`) {
		t.Fatalf("check nope: %+v", r)
	}
	// The secret never shows: not from the environment, not from serve.
	if strings.Contains(r.Stdout+r.Stderr, checkSecret) {
		t.Errorf("the secret appears in check's output")
	}
}

// TestCheckConfigRefused: a literal secret and an unknown key are exit 2
// with the file and line, before anything runs.
func TestCheckConfigRefused(t *testing.T) {
	t.Parallel()
	head := "checks:\n  a:\n    deliveries: {last: true}\n    to: http://127.0.0.1:9/hook\n    probes: {n: {cmd: echo 1}}\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"literal secret", head + "    serve: ./server --secret " + checkSecret + "\n", "ci.yaml:6: a literal secret (whsec_ch…) is refused"},
		{"secret key", head + "    secret: s3cret-value\n", "ci.yaml:6: check a: secret: a literal secret is refused"},
		{"unknown key", head + "    probe_sql: SELECT 1\n", `ci.yaml:6: check a: unknown key "probe_sql"`},
		{"type error", head + "    copies: many\n", `ci.yaml:6: check a: copies: want a whole number, got "many"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "ci.yaml"), []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			r := runBinIn(t, dir, "check", "--config", "ci.yaml")
			if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
				t.Fatalf("want exit 2 and one line with %q, got %d\n%s", tc.want, r.Code, r.Stderr)
			}
			if strings.Contains(r.Stderr, checkSecret) || strings.Contains(r.Stderr, "s3cret-value") {
				t.Errorf("the error repeats the secret: %s", r.Stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "hookreplay.db")); err == nil {
				t.Errorf("a refused config created a database")
			}
		})
	}
}
