package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ApplicationID marks a SQLite file as a hookreplay database (PRAGMA
// application_id, "hkrp"), so that hookreplay never adds its tables to
// another application's database given by mistake with --db.
const ApplicationID = 0x686b7270

// claim decides whether the database may be used: it is hookreplay's (marked),
// new (no tables: it is marked by migrate), or written by a hookreplay from
// before the mark (its schema version and tables say so: marked too). Anything
// else belongs to another application and is refused untouched. mark reports
// whether migrate must set the mark.
func (s *Store) claim(ctx context.Context) (mark bool, err error) {
	var app int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return false, notSQLite(err)
	}
	if app == ApplicationID {
		return false, nil
	}
	if app != 0 {
		return false, fmt.Errorf("not a hookreplay database (it belongs to another application: application_id %#x)", app)
	}
	tables, err := s.tables(ctx)
	if err != nil {
		return false, err
	}
	if len(tables) == 0 {
		return true, nil
	}
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	if version >= 1 && slices.Contains(tables, "deliveries") && slices.Contains(tables, "runs") && slices.Contains(tables, "attempts") {
		return true, nil
	}
	shown := tables
	if len(shown) > 3 {
		shown = append(shown[:3:3], "...")
	}
	return false, fmt.Errorf("not a hookreplay database (it holds other tables: %s); give --db a new file or one hookreplay created", strings.Join(shown, ", "))
}

// tables lists the database's own tables.
func (s *Store) tables(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return nil, notSQLite(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// notSQLite words the driver's error for a file that is not SQLite at all.
func notSQLite(err error) error {
	if strings.Contains(err.Error(), "not a database") || strings.Contains(err.Error(), "file is encrypted") {
		return errors.New("not a hookreplay database (file is not SQLite)")
	}
	if strings.Contains(err.Error(), "malformed") { // SQLITE_CORRUPT: cut short, or overwritten
		return errors.New("the database file is damaged (SQLite finds it malformed): restore it from a copy, or give --db a new file")
	}
	return fmt.Errorf("read database header: %w", err)
}

// ErrReadOnly is returned by CheckWritable for a database hookreplay cannot write.
var ErrReadOnly = errors.New("database is read-only")

// CheckWritable makes sure the database accepts writes, so that a command
// which stores what it does (capture, check, import) is refused at start
// rather than failing on every delivery. It writes nothing.
func (s *Store) CheckWritable(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return writeErr(s.Path(), s.db.d, err)
	}
	defer tx.Rollback()
	// A write statement that changes no row still needs a writable file.
	if _, err := tx.ExecContext(ctx, "DELETE FROM deliveries WHERE 1 = 0"); err != nil {
		return writeErr(s.Path(), s.db.d, err)
	}
	return nil
}

// writeFailed words a failed write of what: a store the role or the file
// may only read says so (ErrReadOnly), anything else keeps its error.
func (s *Store) writeFailed(what string, err error) error {
	if ro := writeErr(s.Path(), s.db.d, err); errors.Is(ro, ErrReadOnly) {
		return fmt.Errorf("%s: %w", what, ro)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func writeErr(path string, d dialect, err error) error {
	if _, pg := d.(postgresDialect); pg && strings.Contains(err.Error(), "permission denied") {
		return fmt.Errorf("%w: %s (the Postgres role may read but not write hookreplay's tables: commands that store deliveries or runs need INSERT, UPDATE and DELETE on them)", ErrReadOnly, path)
	}
	if strings.Contains(err.Error(), "readonly") || strings.Contains(err.Error(), "read-only") {
		return fmt.Errorf("%w: %s (hookreplay needs to write to it and to its directory: check permissions)", ErrReadOnly, path)
	}
	if msg := d.redact(err.Error()); msg != err.Error() {
		return fmt.Errorf("database %s: %s", path, msg)
	}
	return fmt.Errorf("database %s: %w", path, err)
}
