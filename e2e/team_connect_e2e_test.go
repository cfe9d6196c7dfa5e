package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// TestTeamConnectErrors: a team store behind a password, reached the ways
// docs/postgres.md lists and got wrong the ways a new team gets them wrong.
// Each failure is one line on stderr, exit 2, naming the server and the
// cause in hookreplay's words — where the refused password came from, or
// that none was given; TLS the server does not offer; a server that is not
// what target_session_attrs asks for; a server that is down — never pgx's
// "failed to connect to `user=… database=…`" and never a password.
func TestTeamConnectErrors(t *testing.T) {
	t.Parallel()
	const pw = "Srv-Pw-4711"
	srv := testkit.StartPostgresPassword(t, pw)
	base := srv.DSN() // postgres://hookreplay@127.0.0.1:PORT/hookreplay?sslmode=disable
	noPass := filepath.Join(t.TempDir(), "none")
	wrongFile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(wrongFile, []byte("*:*:*:hookreplay:Pgpass-Wrong-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, db, pgpassword, pgpassfile string
		want                             []string
	}{
		{"no password", base, "", noPass, []string{"password authentication failed", "no password was given: set PGPASSWORD"}},
		{"wrong PGPASSWORD", base, "Env-Wrong-22", noPass, []string{"password authentication failed", "the password came from PGPASSWORD"}},
		{"wrong PGPASSFILE", base, "", wrongFile, []string{"password authentication failed", "the password came from the password file PGPASSFILE names"}},
		{"wrong URL password", strings.Replace(base, "hookreplay@", "hookreplay:Url-Wrong-33@", 1), "", noPass, []string{"the password came from the URL"}},
		{"TLS the server does not offer", strings.Replace(base, "sslmode=disable", "sslmode=require", 1), pw, noPass, []string{"the server does not accept TLS connections, which the URL's sslmode requires"}},
		{"not a standby", base + "&target_session_attrs=standby", pw, noPass, []string{"the server is not what the URL's target_session_attrs asks for"}},
		{"not a URL pgx reads", base + "&target_session_attrs=bogus", pw, noPass, []string{"not a valid Postgres URL: unknown target_session_attrs value: bogus"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBinEnv(t, []string{"PGPASSWORD=" + c.pgpassword, "PGPASSFILE=" + c.pgpassfile}, c.db, nil, "list")
			connectFailure(t, r, append(c.want, "127.0.0.1"), pw, "Env-Wrong-22", "Pgpass-Wrong-1", "Url-Wrong-33")
		})
	}

	env := []string{"PGPASSFILE=" + noPass, "PGPASSWORD=" + pw}
	if r := runBinEnv(t, env, base, nil, "list"); r.Code != 0 || !strings.Contains(r.Stderr, "no deliveries") {
		t.Fatalf("list with the right password: %+v", r)
	}
	srv.Stop()
	connectFailure(t, runBinEnv(t, env, base, nil, "list"), []string{"cannot connect to 127.0.0.1:", "connection refused"}, pw)
}

// connectFailure checks r is a failed connection: exit 2, one line with
// every want, no pgx wrapping and none of the secrets.
func connectFailure(t *testing.T, r result, want []string, secrets ...string) {
	t.Helper()
	line := strings.TrimSpace(r.Stderr)
	if r.Code != 2 || r.Stdout != "" || strings.Contains(line, "\n") || !strings.HasPrefix(line, "hookreplay: open store postgres://") {
		t.Fatalf("want exit 2 and one line, got exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("%q does not say %q", line, w)
		}
	}
	for _, bad := range append([]string{"failed to connect to `", "cannot parse `", "(127.0.0.1):"}, secrets...) {
		if strings.Contains(line, bad) {
			t.Errorf("%q shows %q", line, bad)
		}
	}
}
