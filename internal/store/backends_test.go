package store

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// eachBackend runs f once per backend, as subtests "sqlite" and
// "postgres", with the location of a new, empty store: a file in a temporary
// directory, or a URL whose search_path is a fresh schema on the test
// Postgres server (HOOKREPLAY_TEST_PG; skipped loudly without it, a failure
// under CI). The location may be opened more than once (two processes).
func eachBackend(t *testing.T, f func(t *testing.T, loc string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		f(t, filepath.Join(t.TempDir(), "hookreplay.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, testkit.PostgresSchema(t, "store"))
	})
}

// otherBackend is the location of a new store of the backend loc is not:
// a SQLite file for a Postgres URL, and for a SQLite file a fresh Postgres
// schema when there is a test server (else another SQLite file).
func otherBackend(t *testing.T, loc string) string {
	if IsURL(loc) || os.Getenv("HOOKREPLAY_TEST_PG") == "" {
		return filepath.Join(t.TempDir(), "other.db")
	}
	return testkit.PostgresSchema(t, "other")
}

// The two backends hold the same tables with the same columns: a migration
// added to one and not the other fails here, not in a user's store.
func TestSchemasMatch(t *testing.T) {
	ctx := context.Background()
	lite := deliveriesOpen(t, filepath.Join(t.TempDir(), "s.db"))
	pg := deliveriesOpen(t, testkit.PostgresSchema(t, "match"))
	columns := func(s *Store, q string, args ...any) map[string][]string {
		t.Helper()
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string][]string{}
		for rows.Next() {
			var table, col string
			if err := rows.Scan(&table, &col); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], col)
		}
		return out
	}
	l := columns(lite, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.name`)
	p := columns(pg, `SELECT table_name::text, column_name::text FROM information_schema.columns
		WHERE table_schema = ? AND table_name <> 'hookreplay_schema' ORDER BY table_name, column_name`, pg.pg.schema)
	if !reflect.DeepEqual(l, p) {
		t.Fatalf("the backends' schemas differ (add the migration to both migrations and pgMigrations):\nsqlite:   %v\npostgres: %v", l, p)
	}
}
