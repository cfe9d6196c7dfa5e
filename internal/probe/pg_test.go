package probe

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// pgDSN returns the Postgres server tests use (env HOOKREPLAY_TEST_PG). Without
// it the test is skipped loudly, except in CI (env CI set) where it fails:
// .ci/run starts a Postgres server and exports both.
func pgDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("HOOKREPLAY_TEST_PG")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but HOOKREPLAY_TEST_PG is not: .ci/run must start Postgres and export it")
		}
		t.Skip("!!!!! SKIPPING POSTGRES TEST: set HOOKREPLAY_TEST_PG=postgres://... (or run .ci/run, which starts one) !!!!!")
	}
	return dsn
}

// pgSchema creates a fresh schema for one test, runs the statements of file
// in it, and returns a DSN whose search_path points at it.
func pgSchema(t *testing.T, file string) string {
	t.Helper()
	dsn := pgDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := fmt.Sprintf("probe_test_%d", time.Now().UnixNano())
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err == nil {
			_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	sdsn := dsn + sep + "search_path=" + schema
	if file != "" {
		sdb, err := sql.Open("pgx", sdsn)
		if err != nil {
			t.Fatal(err)
		}
		defer sdb.Close()
		stmts, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sdb.ExecContext(ctx, string(stmts)); err != nil {
			t.Fatalf("load %s: %v", file, err)
		}
	}
	return sdsn
}
