package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// pgHostile are objects the owner of a team store's schema can create that
// would change or remove deliveries as capture stores them, each with what
// the check names.
var pgHostile = []struct {
	name, want string
	stmts      []string
}{
	{"after insert delete", "trigger gone on deliveries", []string{
		`CREATE FUNCTION gone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM deliveries WHERE id = NEW.id; RETURN NULL; END $$`,
		`CREATE TRIGGER gone AFTER INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION gone()`}},
	{"before insert rewrite", "trigger rewrite on deliveries", []string{
		`CREATE FUNCTION rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.raw_request = 'x'; NEW.target = '/admin'; RETURN NEW; END $$`,
		`CREATE TRIGGER rewrite BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION rewrite()`}},
	{"deferred constraint trigger", "trigger later on deliveries", []string{
		`CREATE FUNCTION later() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM deliveries WHERE id = NEW.id; RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER later AFTER INSERT ON deliveries DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION later()`}},
	{"rule", "rule also_gone on deliveries", []string{
		`CREATE RULE also_gone AS ON INSERT TO deliveries DO ALSO DELETE FROM deliveries WHERE target = NEW.target`}},
	{"hookreplay's notify function replaced", "trigger deliveries_notify on deliveries (not as hookreplay made it)", []string{
		`CREATE OR REPLACE FUNCTION hookreplay_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
			IF pg_trigger_depth() = 1 AND TG_TABLE_NAME = 'deliveries' THEN DELETE FROM deliveries WHERE id > 1; END IF; RETURN NULL; END $$`}},
	{"unlogged", "unlogged table deliveries", []string{`ALTER TABLE deliveries SET UNLOGGED`}},
}

// TestPostgresOpenRefusesForeignTriggersAndRules: what the owner of the
// schema added is refused on open (one line naming it), or dropped when
// asked; hookreplay's own notifications are not.
func TestPostgresOpenRefusesForeignTriggersAndRules(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	ctx := context.Background()
	for _, h := range pgHostile {
		loc := testkit.PostgresSchema(t, "pgtrust")
		deliveriesOpen(t, loc).Close()
		testkit.PostgresExec(t, loc, h.stmts...)
		_, err := Open(ctx, loc)
		var fe *ForeignObjectsError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "holds "+h.want) || !strings.Contains(err.Error(), "that hookreplay did not create") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: open: %v", h.name, err)
			continue
		}
		if h.name == "unlogged" || strings.Contains(h.name, "notify") {
			continue // not a trigger or rule of its own: not dropped
		}
		var dropped []string
		s, err := Open(ctx, loc, WithDropForeignTriggers(func(o []string) { dropped = o }))
		if err != nil || len(dropped) != 1 || dropped[0] != h.want {
			t.Errorf("%s: open dropping: %v, dropped %v", h.name, err, dropped)
			continue
		}
		s.Close()
		deliveriesOpen(t, loc).Close()
	}
}

// TestPostgresWriterRefusesForeignObjectsCreatedWhileOpen: a trigger or
// rule created while capture's writer is open, between two commits, makes
// the next commit fail before COMMIT with nothing stored, instead of
// acknowledging deliveries the trigger removed or rewrote (without the
// check every commit here succeeded and the deliveries were gone or
// changed).
func TestPostgresWriterRefusesForeignObjectsCreatedWhileOpen(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	ctx := context.Background()
	for _, h := range pgHostile {
		loc := testkit.PostgresSchema(t, "pgguard")
		s := deliveriesOpen(t, loc)
		w, err := s.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first := benchDelivery(1)
		if err := w.Commit(ctx, []*Delivery{first}, nil); err != nil {
			t.Fatal(err)
		}
		testkit.PostgresExec(t, loc, h.stmts...)
		batch := []*Delivery{benchDelivery(2), benchDelivery(3), benchDelivery(4)}
		err = w.Commit(ctx, batch, []Response{{ID: first.ID, Status: 200}})
		var fe *ForeignObjectsError
		if !errors.As(err, &fe) || !fe.InCommit || !strings.Contains(err.Error(), h.want) || !strings.Contains(err.Error(), "nothing in this commit is acknowledged") {
			t.Errorf("%s: commit: %v", h.name, err)
		}
		got, err := s.ListDeliveries(ctx, Filter{Oldest: true})
		if err != nil || len(got) != 1 || got[0].ID != first.ID || got[0].ResponseStatus != 0 {
			t.Errorf("%s: after the refused commit %d deliveries (%v), want the first one only, unanswered", h.name, len(got), err)
		}
		// The writer's connection is still usable once the object is gone.
		w.Close()
	}
}

// TestPostgresGuardAllowsOwnNotifications: a store as hookreplay made it
// passes the check, at open and in every commit, and its notifications
// still fire.
func TestPostgresGuardAllowsOwnNotifications(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	ctx := context.Background()
	loc := testkit.PostgresSchema(t, "pgguardok")
	s := deliveriesOpen(t, loc)
	if found, err := s.pgForeign(ctx); err != nil || len(found) != 0 {
		t.Fatalf("a fresh store: %v %v", found, err)
	}
	w := writerOpen(t, s)
	for i := range 3 {
		if err := w.Commit(ctx, []*Delivery{benchDelivery(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.CountDeliveries(ctx, Filter{}); n != 3 {
		t.Errorf("%d deliveries", n)
	}
}

// TestPostgresWriterRefusesRowsChangedByForeignCode: code that is not a
// trigger or a rule but runs inside capture's insert — the default of a
// column added since, a CHECK constraint, each calling a function that
// deletes an acknowledged delivery — makes
// the commit fail before COMMIT, by the backend's own counts of the rows
// the commit changed (without that count each commit succeeded and the
// earlier delivery was gone).
func TestPostgresWriterRefusesRowsChangedByForeignCode(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	ctx := context.Background()
	gone := `CREATE FUNCTION gone() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM deliveries WHERE id = 1; RETURN 0; END $$`
	for _, tc := range []struct {
		name  string
		stmts []string
	}{
		{"column default", []string{gone, `ALTER TABLE deliveries ADD COLUMN sneaky int DEFAULT gone()`}},
		{"check constraint", []string{gone, `ALTER TABLE deliveries ADD CONSTRAINT sneaky CHECK (gone() = 0) NOT VALID`}},
	} {
		loc := testkit.PostgresSchema(t, "pgcount")
		s := deliveriesOpen(t, loc)
		w, err := s.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first := benchDelivery(1)
		if err := w.Commit(ctx, []*Delivery{first}, nil); err != nil || first.ID != 1 {
			t.Fatalf("%s: first commit: id %d, %v", tc.name, first.ID, err)
		}
		testkit.PostgresExec(t, loc, tc.stmts...)
		err = w.Commit(ctx, []*Delivery{benchDelivery(2), benchDelivery(3)}, nil)
		if err == nil || !strings.Contains(err.Error(), "changed or removed rows within the batch's own commit: nothing in it is acknowledged") ||
			!strings.Contains(err.Error(), "1 deleted") {
			t.Errorf("%s: commit: %v", tc.name, err)
		}
		got, err := s.ListDeliveries(ctx, Filter{Oldest: true})
		if err != nil || len(got) != 1 || got[0].ID != first.ID {
			t.Errorf("%s: after the refused commit %d deliveries (%v), want the first one only", tc.name, len(got), err)
		}
		w.Close()
	}
}

// TestPostgresGuardWithoutCounts: on a server that counts nothing
// (track_counts off, a superuser's setting) the commit's count check must
// not refuse every commit; the catalog check still runs.
func TestPostgresGuardWithoutCounts(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	ctx := context.Background()
	s := deliveriesOpen(t, testkit.PostgresSchema(t, "pgnocount"))
	c, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "SET track_counts = off"); err != nil {
		t.Skipf("the test role may not turn track_counts off: %v", err)
	}
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, pgMarkSQL); err != nil {
		t.Fatal(err)
	}
	d := benchDelivery(1)
	if _, err := tx.ExecContext(ctx, s.db.d.rebind(insertDeliverySQL), s.db.d.args(deliveryArgs(d, d.ReceivedAt))...); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, pgGuardSQL(), 1, 0); err != nil {
		t.Errorf("a commit of one delivery with track_counts off: %v", guardErr(err))
	}
}
