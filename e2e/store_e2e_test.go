package e2e

// End-to-end tests of which SQLite files hookreplay agrees to use: its own
// (marked with PRAGMA application_id), older hookreplay files (marked when
// opened), never another application's database, never a read-only one for
// a command that writes.

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// sqliteTables lists the tables of the SQLite file at path and its application_id.
func sqliteTables(t *testing.T, path string) ([]string, int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	var app int64
	if err := db.QueryRow("PRAGMA application_id").Scan(&app); err != nil {
		t.Fatal(err)
	}
	return names, app
}

func sqliteExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestStoreE2ERefusesAnotherApplicationsDatabase(t *testing.T) {
	t.Parallel()
	foreign := filepath.Join(t.TempDir(), "app.db")
	sqliteExec(t, foreign, "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)", "INSERT INTO users (email) VALUES ('a@example.com')")
	for _, args := range [][]string{
		{"list"},
		{"capture", "--listen", "127.0.0.1:0"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c := exec.CommandContext(ctx, binPath, append([]string{"--db", foreign}, args...)...)
		c.Stdin = strings.NewReader("")
		c.Env = binEnv()
		out, err := c.CombinedOutput()
		cancel()
		code := exitCodeOf(t, err)
		msg := strings.TrimSpace(string(out))
		if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, "not a hookreplay database") {
			t.Errorf("hookreplay %v on another application's db: exit %d, want 2 and one line saying it is not a hookreplay database:\n%s", args, code, out)
		}
	}
	if names, app := sqliteTables(t, foreign); !slices.Equal(names, []string{"users"}) || app != 0 {
		t.Fatalf("the foreign database was changed: tables %v, application_id %d", names, app)
	}
	if out, err := exec.Command("sqlite3", foreign, "PRAGMA journal_mode").Output(); err == nil && strings.TrimSpace(string(out)) != "delete" {
		t.Fatalf("the foreign database's journal mode was changed to %s", out)
	}
}

func TestStoreE2EMarksItsDatabasesAndOlderOnes(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	checkStripeDelivery(t, db)
	_, app := sqliteTables(t, db)
	if app != store.ApplicationID {
		t.Fatalf("a new database has application_id %d, want %d", app, store.ApplicationID)
	}
	// A database written by a hookreplay from before the mark.
	old := filepath.Join(t.TempDir(), "old.db")
	checkStripeDelivery(t, old)
	sqliteExec(t, old, "PRAGMA application_id = 0")
	r := runBin(t, old, nil, "list", "--json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"provider": "stripe"`) {
		t.Fatalf("list on an older hookreplay db: %+v", r)
	}
	if _, app := sqliteTables(t, old); app != store.ApplicationID {
		t.Fatalf("an older hookreplay db was not marked: application_id %d", app)
	}
	// An empty SQLite file (0 bytes, or a database without tables) is new.
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, empty, nil, "list"); r.Code != 0 {
		t.Fatalf("list on an empty file: %+v", r)
	}
}

func TestStoreE2EReadOnlyDatabaseRefusedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	checkStripeDelivery(t, db)
	if os.Geteuid() == 0 {
		// Root writes through file modes; the immutable attribute stops it.
		if out, err := exec.Command("chattr", "+i", db).CombinedOutput(); err != nil {
			t.Skipf("chattr +i: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", db).Run() })
	} else if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, binPath, "--db", db, "capture", "--listen", "127.0.0.1:0")
	c.Env = binEnv()
	out, err := c.CombinedOutput()
	code := exitCodeOf(t, err)
	msg := strings.TrimSpace(string(out))
	if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, "read-only") {
		t.Fatalf("capture on a read-only db: exit %d after %v, want 2 and one line saying it is read-only:\n%s", code, time.Since(start), out)
	}
	// Reading it still works.
	if r := runBin(t, db, nil, "list", "--json"); r.Code != 0 {
		t.Fatalf("list on a read-only db: %+v", r)
	}
}

// exitCodeOf is the exit code of a finished exec.Cmd's error (-1 when killed).
func exitCodeOf(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return 0
}
