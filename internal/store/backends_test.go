package store

import (
	"os"
	"path/filepath"
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
