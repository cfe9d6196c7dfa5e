package e2e

// End-to-end test that no secret a user gives hookreplay — a --secret or the
// value of --secret-env, a DSN password, a password or token in a --probe-http
// URL, any of them written literally inside --probe-cmd, --reset-cmd or
// --serve — reaches what check prints, the reports it writes or the database.

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
)

func TestSecretsE2ENeverStoredOrPrinted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	url, dsn := checkWallet(t, wallet.Fixed)
	env := []string{"HOOKREPLAY_E2E_SECRET=" + checkSecret}

	// A probe server that needs a password and a token, both in the URL.
	const httpPass, httpToken = "httpPassw0rdSECRET", "tokenSECRET4242"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, p, _ := r.BasicAuth(); p != httpPass || r.URL.Query().Get("token") != httpToken {
			w.WriteHeader(401)
			return
		}
		fmt.Fprint(w, "7")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	probeURL := fmt.Sprintf("http://probe:%s@%s/count?token=%s", httpPass, ln.Addr(), httpToken)
	// Passwords a command sets for itself (PGPASSWORD=… psql …): hookreplay
	// is not told them, and a team store shows the run's options to everyone.
	const resetPass, cmdToken = "Reset-Pw-888SECRET", "cmd tok SECRET 99"
	secrets := []string{checkSecret, httpPass, httpToken, resetPass, cmdToken}

	reports := map[string]string{}
	args := []string{"check", fmt.Sprint(id), "--to", url, "--probe-sql", checkBalanceSQL, "--dsn", dsn,
		"--secret-env", "HOOKREPLAY_E2E_SECRET", "--settle", "100ms", "-n", "2", "--burst", "3", "--seed", "7",
		"--probe-cmd", "API_TOKEN='" + cmdToken + "' echo 5 # --secret " + checkSecret,
		"--probe-http", probeURL,
		"--reset-cmd", "PGPASSWORD=" + resetPass + " true " + checkSecret,
		"--phases", "first,dups,burst,tamper"}
	for _, f := range []string{"json", "markdown", "junit", "text"} {
		reports[f] = filepath.Join(dir, "report."+f)
		args = append(args, "--report", f+"="+reports[f])
	}
	r := runBinEnv(t, env, db, nil, args...)
	if r.Code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	seen := map[string]string{"check stdout": r.Stdout, "check stderr": r.Stderr}
	for f, p := range reports {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seen["report "+f] = string(b)
	}
	for _, a := range [][]string{{"runs"}, {"runs", "--json"}, {"runs", "show", "1", "--json"}, {"runs", "show", "1", "--report", "markdown"}} {
		r := runBinEnv(t, env, db, nil, a...)
		seen[strings.Join(a, " ")] = r.Stdout + r.Stderr
	}
	// A probe that fails prints its error: the secret it echoed is not in it.
	r = runBinEnv(t, env, db, nil, "check", fmt.Sprint(id), "--to", url, "--secret", checkSecret,
		"--probe-cmd", "echo no access with "+checkSecret+" >&2; exit 3", "--settle", "100ms")
	if r.Code != 2 {
		t.Fatalf("check with a failing probe: exit %d\n%s", r.Code, r.Stderr)
	}
	seen["failing probe"] = r.Stdout + r.Stderr
	for _, f := range []string{db, db + "-wal"} {
		if b, err := os.ReadFile(f); err == nil {
			seen[filepath.Base(f)] = string(b)
		}
	}
	for where, text := range seen {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				i := strings.Index(text, s)
				t.Errorf("%s holds the secret %q: ...%q...", where, s, text[max(0, i-80):min(len(text), i+len(s)+20)])
			}
		}
	}
	if !strings.Contains(seen["runs show 1 --json"], "[REDACTED]") {
		t.Errorf("the stored run options show no redaction marker:\n%s", seen["runs show 1 --json"])
	}
}
