package probe

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// pgSchema gives the test its own schema on the test Postgres server
// (testkit.PostgresSchema), runs the statements of file in it, and returns a
// DSN whose search_path points at it.
func pgSchema(t *testing.T, file string) string {
	t.Helper()
	sdsn := testkit.PostgresSchema(t, "probe_test")
	if file == "" {
		return sdsn
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
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
	return sdsn
}
