package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// plant opens the SQLite file behind hookreplay's back and runs stmts, as
// whoever handed the file over could have.
func plant(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
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

func trustStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.db")
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return path
}

// TestOpenRefusesForeignTriggersAndViews: a trigger or view in the file
// that hookreplay did not create is refused on open, or dropped when asked.
func TestOpenRefusesForeignTriggersAndViews(t *testing.T) {
	ctx := context.Background()
	for name, q := range map[string]string{
		"trigger gone":    `CREATE TRIGGER gone AFTER INSERT ON deliveries BEGIN DELETE FROM deliveries WHERE id = NEW.id; END`,
		"trigger rewrite": `CREATE TRIGGER rewrite AFTER INSERT ON deliveries BEGIN UPDATE deliveries SET raw_request = x'00' WHERE id = NEW.id; END`,
		"view recent":     `CREATE VIEW recent AS SELECT id FROM deliveries`,
	} {
		path := trustStore(t)
		plant(t, path, q)
		_, err := Open(ctx, path)
		var fe *ForeignObjectsError
		if !errors.As(err, &fe) || len(fe.Objects) != 1 || fe.Objects[0] != name {
			t.Errorf("%s: open: %v", name, err)
			continue
		}
		var dropped []string
		st, err := Open(ctx, path, WithDropForeignTriggers(func(o []string) { dropped = o }))
		if err != nil || len(dropped) != 1 || dropped[0] != name {
			t.Errorf("%s: open dropping: %v, dropped %v", name, err, dropped)
			continue
		}
		st.Close()
		if st, err = Open(ctx, path); err != nil {
			t.Errorf("%s: still refused after the drop: %v", name, err)
		} else {
			st.Close()
		}
	}
}

// TestOpenRefusesAnotherSchema: a deliveries table that is not hookreplay's
// (a column missing, another type) is refused.
func TestOpenRefusesAnotherSchema(t *testing.T) {
	path := trustStore(t)
	plant(t, path, `ALTER TABLE deliveries DROP COLUMN origin`)
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "not hookreplay's schema: table deliveries has columns (") {
		t.Fatalf("open: %v", err)
	}
	path = trustStore(t)
	plant(t, path, `ALTER TABLE runs ADD COLUMN extra TEXT`)
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "table runs has columns") {
		t.Fatalf("open: %v", err)
	}
}

// TestWriterRefusesABatchChangedInItsCommit: a trigger created while
// capture runs (after the open-time check) that removes or rewrites a
// delivery as it is inserted makes the batch fail, so nothing is
// acknowledged that is not stored as it arrived.
func TestWriterRefusesABatchChangedInItsCommit(t *testing.T) {
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TRIGGER gone AFTER INSERT ON deliveries BEGIN DELETE FROM deliveries WHERE id = NEW.id; END`,
		`CREATE TRIGGER rewrite AFTER INSERT ON deliveries BEGIN UPDATE deliveries SET target = '/admin/users/1' WHERE id = NEW.id; END`,
		`CREATE TRIGGER answered AFTER UPDATE OF response_status ON deliveries BEGIN DELETE FROM deliveries WHERE id = NEW.id; END`,
	} {
		path := trustStore(t)
		st, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := st.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first := benchDelivery(1)
		if err := w.Commit(ctx, []*Delivery{first}, nil); err != nil {
			t.Fatal(err)
		}
		plant(t, path, q)
		err = w.Commit(ctx, []*Delivery{benchDelivery(2)}, []Response{{ID: first.ID, Status: 200}})
		if err == nil || !strings.Contains(err.Error(), "changed or removed rows within the batch's own commit: nothing in it is acknowledged (3 rows changed, 2 written)") {
			t.Errorf("%s: commit: %v", q, err)
		}
		if n, _ := st.CountDeliveries(ctx, Filter{}); n != 1 {
			t.Errorf("%s: %d deliveries after the refused batch, want the first one only", q, n)
		}
		w.Close()
		st.Close()
	}
}
