package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// TestPostgresSchemaMadeForTheRole: docs/team.md's owner role has no
// CREATE on the database; an admin created its schema for it. The first
// open migrates inside that schema (CREATE SCHEMA IF NOT EXISTS alone was
// refused: it needs CREATE on the database even when the schema exists).
func TestPostgresSchemaMadeForTheRole(t *testing.T) {
	dsn := testkit.PostgresDSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	suffix := time.Now().UnixNano()
	role, schema := fmt.Sprintf("hr_owner_%d", suffix), fmt.Sprintf("hr_owned_%d", suffix)
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'owner-pw-123'",
		"CREATE SCHEMA " + schema + " AUTHORIZATION " + role,
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Exec("DROP OWNED BY " + role)
		admin.Exec("DROP ROLE " + role)
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "owner-pw-123")
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := Open(context.Background(), u.String())
	if err != nil {
		t.Fatalf("open as the schema's owner: %v", err)
	}
	defer s.Close()
	d := &Delivery{Method: "POST", Target: "/", Raw: []byte("POST / HTTP/1.1\r\n\r\n")}
	if err := s.InsertDelivery(context.Background(), d); err != nil || d.ID == 0 {
		t.Fatalf("insert: %d %v", d.ID, err)
	}
}

// TestPostgresRolesThatMayNot: docs/team.md's roles, each used where its
// rights fall short, says what to do in one line instead of the server's
// "permission denied for schema" or "must be owner of table deliveries":
// the capture role used before the owner created the tables, a role given
// nothing, and the capture role first to run a newer hookreplay.
func TestPostgresRolesThatMayNot(t *testing.T) {
	dsn := testkit.PostgresDSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	suffix := time.Now().UnixNano()
	owner, capture, stranger := fmt.Sprintf("hr_own_%d", suffix), fmt.Sprintf("hr_cap_%d", suffix), fmt.Sprintf("hr_none_%d", suffix)
	schema := fmt.Sprintf("hr_roles_%d", suffix)
	for _, q := range []string{
		"CREATE ROLE " + owner + " LOGIN PASSWORD 'owner-pw-123'",
		"CREATE ROLE " + capture + " LOGIN PASSWORD 'capture-pw-123'",
		"CREATE ROLE " + stranger + " LOGIN PASSWORD 'stranger-pw-123'",
		"CREATE SCHEMA " + schema + " AUTHORIZATION " + owner,
		"GRANT USAGE ON SCHEMA " + schema + " TO " + capture,
		"ALTER DEFAULT PRIVILEGES FOR ROLE " + owner + " IN SCHEMA " + schema + " GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO " + capture,
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		for _, r := range []string{owner, capture, stranger} {
			admin.Exec("DROP OWNED BY " + r)
			admin.Exec("DROP ROLE " + r)
		}
	})
	as := func(role, pw string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(role, pw)
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	refused := func(loc string, want ...string) {
		t.Helper()
		s, err := Open(context.Background(), loc)
		if err == nil {
			s.Close()
			t.Fatalf("%s opened", loc)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v\ndoes not say %q", err, w)
			}
		}
		if strings.Contains(err.Error(), "SQLSTATE") || strings.Contains(err.Error(), "-pw-123") {
			t.Errorf("%v\nshows the server's raw error or a password", err)
		}
	}

	refused(as(capture, "capture-pw-123"), "schema "+schema+" holds no hookreplay tables yet and this role may not create them",
		"run hookreplay once as the role that owns the schema")
	s, err := Open(context.Background(), as(owner, "owner-pw-123"))
	if err != nil {
		t.Fatalf("open as the owner: %v", err)
	}
	s.Close()
	if s, err := Open(context.Background(), as(capture, "capture-pw-123")); err != nil {
		t.Fatalf("the capture role, once the owner created the tables: %v", err)
	} else {
		s.Close()
	}
	refused(as(stranger, "stranger-pw-123"), "this role may not read schema "+schema, "grant it USAGE on the schema and SELECT on its tables")

	// The store as the hookreplay before the last migration left it (the
	// last migration undone by hand), opened first by the capture role.
	last := len(pgMigrations)
	if last != 3 {
		t.Fatalf("this test undoes migration 3; with %d migrations, undo the last one instead", last)
	}
	for _, q := range []string{
		"ALTER TABLE " + schema + ".probe_readings DROP COLUMN settle_from",
		"ALTER TABLE " + schema + ".probe_readings DROP COLUMN changed_at",
		"UPDATE " + schema + ".hookreplay_schema SET version = 2",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	refused(as(capture, "capture-pw-123"), fmt.Sprintf("schema %s is at version 2 and this hookreplay needs version %d", schema, last),
		"run this hookreplay once as the role that owns the schema")
	if s, err := Open(context.Background(), as(owner, "owner-pw-123")); err != nil {
		t.Fatalf("the owner migrates it: %v", err)
	} else {
		s.Close()
	}
}
