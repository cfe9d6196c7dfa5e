// Package store is the single owner of hookreplay's database: captured
// deliveries, replay/check runs, their attempts, probe readings and verdicts.
// No SQL lives outside this package. A store is a SQLite file (the embedded
// default) or a schema in a Postgres database (the team store, opened from a
// postgres:// URL); nothing outside the package knows which.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)
)

// ErrNotFound is returned when a row asked for by id does not exist.
var ErrNotFound = errors.New("not found")

// Store is an open hookreplay database. It is safe for concurrent use.
type Store struct {
	db   pool
	path string    // the SQLite file, or the Postgres URL as given
	pg   *pgTarget // nil for SQLite
}

// Sync is SQLite's synchronous setting for the store's WAL journal: how
// much a commit waits for the disk.
type Sync string

// The Sync modes. In WAL mode SyncNormal keeps every committed row across a
// crash of the process (kill -9, a panic) but may lose the last commits to a
// power cut or OS crash; SyncFull also keeps those, at an fsync per commit.
const (
	SyncNormal Sync = "normal"
	SyncFull   Sync = "full"
)

// DefaultSync is what Open uses: a laptop's failure is a killed process far
// more often than a power cut (it has a battery), and an fsync per commit
// costs capture more than its forward does.
const DefaultSync = SyncNormal

// ParseSync reads a --sync value.
func ParseSync(v string) (Sync, error) {
	switch s := Sync(strings.ToLower(v)); s {
	case SyncNormal, SyncFull:
		return s, nil
	}
	return "", fmt.Errorf("sync %q: want normal or full", v)
}

// Option changes how Open opens a store.
type Option func(*options)

type options struct {
	schema      string
	dropForeign func([]string) // WithDropForeignTriggers (trust.go)
}

// WithSchema names the Postgres schema the store's tables live in (default
// the URL's search_path, else "hookreplay"). SQLite ignores it.
func WithSchema(name string) Option { return func(o *options) { o.schema = name } }

// IsURL reports whether path names a Postgres store (postgres:// or
// postgresql://) rather than a SQLite file.
func IsURL(path string) bool {
	p := strings.ToLower(strings.TrimSpace(path))
	return strings.HasPrefix(p, "postgres://") || strings.HasPrefix(p, "postgresql://")
}

// Display is path fit to print: a Postgres URL without its password and
// credential parameters; a file as it is.
func Display(path string) string {
	if IsURL(path) {
		return displayURL(path)
	}
	return path
}

// Open opens the store at path: a Postgres URL (see IsURL) or a SQLite file.
// A SQLite file is created when absent, switched to WAL with a busy timeout
// so another process may read while capture writes; commits use DefaultSync.
// Either way the schema is brought up to date.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if IsURL(path) {
		return openPostgres(ctx, path, o)
	}
	if path == "" {
		return nil, errors.New("open store: empty path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("open store %s: directory %s does not exist", path, dir)
		}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("open store %s: is a directory, not a database file", path)
	}
	db, err := sql.Open("sqlite", dsn(path, DefaultSync))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{db: pool{DB: db, d: sqliteDialect{}}, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.checkTrust(ctx, o.dropForeign); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// dsn is the driver's name for path: every pooled connection gets the same pragmas.
func dsn(path string, sync Sync) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous("+strings.ToUpper(string(sync))+")")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// SetSync switches how commits wait for the disk. Call it right after Open,
// before the store is shared: it replaces the connection pool. A Postgres
// store always commits with synchronous_commit on (the server's own
// durability settings decide the rest): SetSync leaves it as it is.
func (s *Store) SetSync(sync Sync) error {
	if _, err := ParseSync(string(sync)); err != nil {
		return err
	}
	if s.pg != nil {
		return nil
	}
	db, err := sql.Open("sqlite", dsn(s.path, sync))
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	old := s.db
	s.db = pool{DB: db, d: sqliteDialect{}}
	return old.Close()
}

// Synchronous reads the synchronous setting in force on a connection of
// the pool (0 off, 1 normal, 2 full, 3 extra). On Postgres it is 2 when
// synchronous_commit is on (or stronger), else 0.
func (s *Store) Synchronous(ctx context.Context) (int, error) {
	if s.pg != nil {
		return s.pgSynchronous(ctx)
	}
	var v int
	err := s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&v)
	return v, err
}

// Path is where the store is, fit to print: the SQLite file, or the
// Postgres URL without its password or credential parameters (and the
// schema, when not the default).
func (s *Store) Path() string {
	if s.pg != nil {
		return s.pg.display
	}
	return s.path
}

// Backend is "sqlite" or "postgres".
func (s *Store) Backend() string {
	if s.pg != nil {
		return "postgres"
	}
	return "sqlite"
}

// Close checkpoints and closes the database.
func (s *Store) Close() error {
	return s.db.Close()
}

func (s *Store) migrate(ctx context.Context) error {
	if s.pg != nil {
		return s.migratePostgres(ctx)
	}
	mark, err := s.claim(ctx)
	if err != nil {
		return err
	}
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", notSQLite(err))
	}
	if version > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this hookreplay (%d); upgrade hookreplay", version, len(migrations))
	}
	// WAL (recorded in the file) only once the file is known to be ours: it
	// changes the file's header.
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return writeErr(s.path, s.db.d, fmt.Errorf("switch to WAL: %w", err))
	}
	if mark {
		if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
			return writeErr(s.path, s.db.d, fmt.Errorf("mark as a hookreplay database: %w", err))
		}
	}
	for i := version; i < len(migrations); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}
