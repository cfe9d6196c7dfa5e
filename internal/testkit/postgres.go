package testkit

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// PostgresDSN returns the Postgres server tests use (env HOOKREPLAY_TEST_PG).
// Without it the test is skipped loudly, except in CI (env CI set), where it
// fails: .ci/run starts a Postgres server and exports both.
func PostgresDSN(t testing.TB) string {
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

// PostgresSchema creates a fresh schema named prefix_<nanos> on the test
// server, drops it when the test ends, and returns a DSN whose search_path
// points at it, so tests sharing the server never see each other's tables.
func PostgresSchema(t testing.TB, prefix string) string {
	t.Helper()
	dsn := PostgresDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if db, err := sql.Open("pgx", dsn); err == nil {
			_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

// PostgresExec runs statements on the Postgres server dsn names, failing
// the test at the first error.
func PostgresExec(t testing.TB, dsn string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
