package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
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
