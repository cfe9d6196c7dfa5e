package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Values hookreplay.yaml takes from ${VAR} are redacted wherever they are
// printed or stored (issue 31 §5): a keycheck header written without its
// colon printed the expanded secret in its error; a probe command whose
// shell expands a token printed it in its error, into the report and the
// store; a config error quoted the value that did not parse.
func TestConfigValuesFromEnvAreRedacted(t *testing.T) {
	t.Parallel()
	const acct, token, badURL = "AK-7f3c9e21-acct-secret", "tok-51d0c6a8-probe-secret", "http://127.0.0.1:hunter2-port-secret/x"
	env := []string{"HR_E2E_ACCT=" + acct, "HR_E2E_TOKEN=" + token, "HR_E2E_URL=" + badURL, "HOOKREPLAY_E2E_SECRET=" + checkSecret}
	leaks := func(t *testing.T, what string, texts ...string) {
		t.Helper()
		for _, s := range []string{acct, token, "hunter2-port-secret"} {
			for _, x := range texts {
				if strings.Contains(x, s) {
					t.Fatalf("%s shows the value of an environment variable (%s):\n%s", what, s, x)
				}
			}
		}
	}

	t.Run("keycheck header without its colon", func(t *testing.T) {
		dir := t.TempDir()
		yaml := `keychecks:
  api:
    to: http://127.0.0.1:1/v1/messages
    body: {to: "+15550100"}
    header: ["Authorization AccessKey ${HR_E2E_ACCT}"]
    probes:
      messages: {cmd: "echo 1"}
`
		if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runBinInEnv(t, env, dir, "--db", filepath.Join(dir, "h.db"), "keycheck")
		if r.Code != 2 || !strings.Contains(r.Stderr, `header "Authorization …" is not of the form 'Name: value'`) {
			t.Fatalf("want exit 2 naming the header, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		leaks(t, "keycheck", r.Stdout, r.Stderr)
	})

	t.Run("config error quoting a value", func(t *testing.T) {
		dir := t.TempDir()
		yaml := `checks:
  web:
    deliveries: {last: true}
    to: ${HR_E2E_URL}
    probes:
      n: {cmd: "echo 1"}
`
		if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runBinInEnv(t, env, dir, "check")
		if r.Code != 2 || !strings.Contains(r.Stderr, "hookreplay.yaml:4") {
			t.Fatalf("want exit 2 at line 4, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		leaks(t, "a config error", r.Stdout, r.Stderr)
	})

	t.Run("probe command carrying a token", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "hookreplay.db")
		id := checkStripeDelivery(t, db)
		base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		yaml := fmt.Sprintf(`checks:
  web:
    deliveries: {ids: [%d]}
    to: %s/webhooks/stripe
    secret_env: HOOKREPLAY_E2E_SECRET
    probes:
      n: {cmd: "test -n \"$HR_E2E_TOKEN\" && echo 1"}
      failing: {cmd: "echo \"auth ${HR_E2E_TOKEN} refused\" >&2; exit 1"}
    phases: [first]
    settle: 50ms
    reports: {json: r.json, markdown: r.md}
`, id, base)
		if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runBinInEnv(t, env, dir, "check")
		if r.Code != 2 {
			t.Fatalf("want exit 2 (the failing probe), got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		var files []string
		for _, f := range []string{"r.json", "r.md", "hookreplay.db", "hookreplay.db-wal"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			files = append(files, string(b))
		}
		runs := runBinInEnv(t, env, dir, "runs", "show", "1", "--json")
		leaks(t, "check", append(files, r.Stdout, r.Stderr, runs.Stdout, runs.Stderr)...)
		if !strings.Contains(r.Stderr+r.Stdout, "[REDACTED]") {
			t.Fatalf("the probe's error should show [REDACTED] where the token was:\n%s\n%s", r.Stdout, r.Stderr)
		}
	})
}
