package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A --db file may come from a colleague, a bug report or an attacker. What
// hookreplay promises — whatever capture answered 2xx to is in the store, as
// it arrived — holds only if nothing in the file acts on hookreplay's
// writes. SQLite stores such things in the file itself: a trigger (AFTER
// INSERT ON deliveries … DELETE, or UPDATE … SET raw_request = …) runs
// inside hookreplay's own statements. So on open a SQLite store is checked
// (checkTrust): no trigger or view hookreplay did not create (it creates
// none), and every table of hookreplay's schema with exactly its columns.
// And each capture batch counts, inside its own transaction and before
// COMMIT, the rows it changed (verifyBatch), so that a trigger created while
// capture runs makes the batch fail (capture answers 503) instead of
// acknowledging what is then gone or rewritten.
//
// A Postgres store is checked likewise (pgtrust.go): on open, and inside
// each capture commit.

// ForeignObjectsError is a store holding triggers, rules or views that
// hookreplay did not create. WithDropForeignTriggers drops them instead.
type ForeignObjectsError struct {
	Objects []string // "trigger deliveries_gone", "view v", "trigger gone on deliveries"
	// InCommit: found by a capture commit's own check (Postgres), which
	// then stored nothing.
	InCommit bool
}

func (e *ForeignObjectsError) Error() string {
	if e.InCommit {
		return fmt.Sprintf("the database now holds %s that hookreplay did not create: it could change or remove deliveries as they are stored, so nothing in this commit is acknowledged",
			strings.Join(e.Objects, ", "))
	}
	return fmt.Sprintf("the database holds %s that hookreplay did not create: it could change or remove deliveries as they are stored",
		strings.Join(e.Objects, ", "))
}

// WithDropForeignTriggers makes Open drop the triggers and views
// hookreplay did not create, instead of refusing the store; dropped is
// called with what was dropped (only when something was).
func WithDropForeignTriggers(dropped func(objects []string)) Option {
	return func(o *options) { o.dropForeign = dropped }
}

// checkTrust refuses (or, when drop is set, drops) triggers and views, then
// checks that every table of hookreplay's schema has exactly its columns.
func (s *Store) checkTrust(ctx context.Context, drop func([]string)) error {
	if s.pg != nil {
		return s.checkTrustPostgres(ctx, drop)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY type, name`)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	type object struct{ kind, name string }
	var foreign []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.kind, &o.name); err != nil {
			rows.Close()
			return fmt.Errorf("read schema: %w", err)
		}
		foreign = append(foreign, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	if len(foreign) > 0 {
		names := make([]string, len(foreign))
		for i, o := range foreign {
			names[i] = o.kind + " " + o.name
		}
		if drop == nil {
			return &ForeignObjectsError{Objects: names}
		}
		for _, o := range foreign {
			q := fmt.Sprintf(`DROP %s IF EXISTS "%s"`, strings.ToUpper(o.kind), strings.ReplaceAll(o.name, `"`, `""`))
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				return writeErr(s.path, s.db.d, fmt.Errorf("drop %s %s: %w", o.kind, o.name, err))
			}
		}
		drop(names)
	}
	want, err := hookreplaySchema()
	if err != nil {
		return err
	}
	got, err := columnsOf(ctx, s.db.DB, tableNames(want))
	if err != nil {
		return err
	}
	for _, t := range tableNames(want) {
		if !slices.Equal(got[t], want[t]) {
			if len(got[t]) == 0 {
				return fmt.Errorf("not hookreplay's schema: table %s is missing", t)
			}
			return fmt.Errorf("not hookreplay's schema: table %s has columns (%s), hookreplay's has (%s)",
				t, strings.Join(got[t], ", "), strings.Join(want[t], ", "))
		}
	}
	return nil
}

// hookreplaySchema is each table's columns as the migrations make them:
// read once from an in-memory database they are applied to.
var hookreplaySchema = sync.OnceValues(func() (map[string][]string, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	for i, m := range migrations {
		if _, err := db.Exec(m); err != nil {
			return nil, fmt.Errorf("schema: migration %d: %w", i+1, err)
		}
	}
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	return columnsOf(context.Background(), db, names)
})

func tableNames(schema map[string][]string) []string {
	names := make([]string, 0, len(schema))
	for n := range schema {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// columnsOf describes each table's columns as "name TYPE [NOT NULL]
// [DEFAULT x] [PK n]", in order.
func columnsOf(ctx context.Context, db *sql.DB, tables []string) (map[string][]string, error) {
	out := make(map[string][]string, len(tables))
	for _, t := range tables {
		rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, t)
		if err != nil {
			return nil, fmt.Errorf("read schema of %s: %w", t, err)
		}
		for rows.Next() {
			var name, typ string
			var notNull, pk int
			var dflt sql.NullString
			if err := rows.Scan(&name, &typ, &notNull, &dflt, &pk); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read schema of %s: %w", t, err)
			}
			c := name + " " + typ
			if notNull != 0 {
				c += " NOT NULL"
			}
			if dflt.Valid {
				c += " DEFAULT " + dflt.String
			}
			if pk != 0 {
				c += fmt.Sprintf(" PK %d", pk)
			}
			out[t] = append(out[t], c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// errChangedInCommit is a batch that changed more rows than its own
// statements did: something in the database (a trigger) acted on them.
var errChangedInCommit = errors.New("something in the database (a trigger?) changed or removed rows within the batch's own commit: nothing in it is acknowledged")

// changes is the number of rows the Writer's connection has inserted,
// updated or deleted so far, those changed by triggers included (SQLite's
// total_changes()). Postgres: -1, not counted.
func (w *Writer) changes(ctx context.Context) (int64, error) {
	if w.changed.Stmt == nil {
		return -1, nil
	}
	var n int64
	if err := w.changed.QueryRowContext(ctx).Scan(&n); err != nil {
		return 0, fmt.Errorf("count changes: %w", err)
	}
	return n, nil
}

// verifyBatch checks, inside the batch's transaction, that the rows changed
// since start are exactly the batch's own: want inserts and answers. A
// trigger that deletes or rewrites a delivery as it is inserted (or as its
// answer is recorded) changes more rows, and the batch fails before COMMIT
// (capture answers 503) instead of acknowledging what is no longer stored
// as it arrived. It costs one small query per batch (two with the start),
// not a read of every row.
func (w *Writer) verifyBatch(ctx context.Context, start, want int64) error {
	if start < 0 {
		return nil
	}
	end, err := w.changes(ctx)
	if err != nil {
		return err
	}
	if end-start != want {
		return fmt.Errorf("%w (%d rows changed, %d written)", errChangedInCommit, end-start, want)
	}
	return nil
}
