package probe

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"os"
	"strings"
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

// A Postgres probe that cannot connect says why on one line, in the
// server's or the dial's words: not pgx's list of attempts, whose first
// line (sslmode=prefer trying TLS) reads "server refused TLS connection".
func TestPostgresConnectErrorIsOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	cases := []struct{ dsn, want string }{{"postgres://app:s3cret@" + closed + "/app", "connection refused"}}
	if os.Getenv("HOOKREPLAY_TEST_PG") != "" {
		u, err := url.Parse(testkit.PostgresDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/hookreplay_no_such_database"
		cases = append(cases, struct{ dsn, want string }{u.String(), `database "hookreplay_no_such_database" does not exist (SQLSTATE 3D000)`})
	}
	for _, tc := range cases {
		p, err := NewSQL(tc.dsn, "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Read(context.Background())
		p.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") ||
			strings.Contains(err.Error(), "TLS") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want one line with %q", tc.dsn, err, tc.want)
		}
	}
}

// On Postgres a scoped query binds its values as $1, $2 (in order, a
// placeholder used twice bound twice) and shares the pool of the probe it
// was scoped from.
func TestPostgresScopedProbe(t *testing.T) {
	dsn := pgSchema(t, "testdata/wallets.sql")
	base, err := NewSQL(dsn, "SELECT balance FROM wallets WHERE customer = {{json:data.object.customer}} AND {{json:data.object.customer}} <> {{event.type}}")
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	p, key, err := base.Scope(scopeVars(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(key, "$1") || !strings.Contains(key, "$3") {
		t.Fatalf("key %q", key)
	}
	v, err := p.Read(context.Background())
	if err != nil || v.Text != "5000" {
		t.Fatalf("scoped read: %v %v", v, err)
	}
	if p.(*SQLProbe).db != nil || base.db == nil {
		t.Fatal("the scoped probe should use its base's pool")
	}
}
