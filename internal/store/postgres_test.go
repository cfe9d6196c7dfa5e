package store

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// Several processes opening a new store at once: the advisory lock makes
// one of them migrate and the others find it done — none fails, and the
// schema is migrated once.
func TestPostgresParallelOpens(t *testing.T) {
	loc := testkit.PostgresSchema(t, "par")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, loc)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			errs <- s.InsertDelivery(ctx, &Delivery{Method: "POST", Target: "/", Raw: []byte("x")})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := deliveriesOpen(t, loc)
	ds, err := s.ListDeliveries(ctx, Filter{})
	if err != nil || len(ds) != 8 {
		t.Fatalf("%d deliveries, %v", len(ds), err)
	}
	seen := map[int64]bool{}
	for _, d := range ds {
		if seen[d.ID] {
			t.Fatalf("id %d given twice", d.ID)
		}
		seen[d.ID] = true
	}
	var v int
	if err := s.db.QueryRowContext(ctx, "SELECT version FROM hookreplay_schema").Scan(&v); err != nil || v != len(pgMigrations) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(pgMigrations))
	}
}

// A schema a newer hookreplay migrated is refused, saying so; tables of
// ours that hookreplay did not create are refused too; other tables in the
// database (another schema) are no concern.
func TestPostgresRefusesNewerAndForeign(t *testing.T) {
	loc := testkit.PostgresSchema(t, "new")
	s := deliveriesOpen(t, loc)
	schema := s.pg.schema
	testkit.PostgresExec(t, loc, "UPDATE "+schema+".hookreplay_schema SET version = 999")
	_, err := Open(context.Background(), loc)
	if err == nil || !strings.Contains(err.Error(), "version 999, newer than this hookreplay") || !strings.Contains(err.Error(), "upgrade hookreplay") {
		t.Fatalf("newer schema: %v", err)
	}

	foreign := testkit.PostgresSchema(t, "foreign")
	testkit.PostgresExec(t, foreign, "CREATE TABLE deliveries (id int)")
	if _, err := Open(context.Background(), foreign); err == nil || !strings.Contains(err.Error(), "did not create") {
		t.Fatalf("schema with someone else's deliveries table: %v", err)
	}

	// The same database, another schema of its own: fine.
	other := deliveriesOpen(t, foreign, WithSchema(schema+"_b"))
	t.Cleanup(func() { testkit.PostgresExec(t, foreign, "DROP SCHEMA IF EXISTS "+schema+"_b CASCADE") })
	if other.pg.schema != schema+"_b" || !strings.Contains(other.Path(), "schema "+schema+"_b") {
		t.Fatalf("WithSchema: schema %q, shown as %s", other.pg.schema, other.Path())
	}
	if err := other.InsertDelivery(context.Background(), &Delivery{Method: "POST", Target: "/", Raw: []byte("x")}); err != nil {
		t.Fatal(err)
	}
}

// The password of the URL is in no message and not in Path.
func TestPostgresPasswordNeverShown(t *testing.T) {
	const pw = "s3cr3t-Passw0rd"
	for _, raw := range []string{
		"postgres://hookreplay:" + pw + "@127.0.0.1:1/db?sslmode=disable",
		"postgresql://hookreplay:" + url.QueryEscape(pw+"/x") + "@127.0.0.1:1/db?sslmode=disable",
		"postgres://hookreplay@127.0.0.1:1/db?sslmode=disable&password=" + pw,
		"postgres://hookreplay:" + pw + "@127.0.0.1:1/db?sslmode=bogus",
		"postgres://hookreplay:" + pw + "%zz@127.0.0.1:1/db",
	} {
		_, err := Open(context.Background(), raw)
		if err == nil {
			t.Fatalf("%s opened", raw)
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error shows the password or is not one line: %v", err)
		}
		if d := Display(raw); strings.Contains(d, pw) {
			t.Errorf("Display shows the password: %s", d)
		}
	}
	// A password from PGPASSFILE (or PGPASSWORD) is kept out as well.
	pass := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(pass, []byte("127.0.0.1:1:*:*:"+pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", pass)
	if _, err := Open(context.Background(), "postgres://hookreplay@127.0.0.1:1/db?sslmode=disable"); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("with PGPASSFILE: %v", err)
	}
	t.Setenv("PGPASSWORD", pw)
	if _, err := Open(context.Background(), "postgres://hookreplay@127.0.0.1:1/db?sslmode=disable"); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("with PGPASSWORD: %v", err)
	}
	dsn := testkit.PostgresSchema(t, "pw")
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(u.User.Username(), pw) // trust auth: any password works
	s := deliveriesOpen(t, u.String())
	if strings.Contains(s.Path(), pw) {
		t.Fatalf("Path shows the password: %s", s.Path())
	}
}

// A Postgres connection lost under the Writer (the server restarted, a
// proxy dropped it): the Commit that finds it fails, the next one
// reconnects, and nothing committed is lost.
func TestPostgresWriterReconnects(t *testing.T) {
	app := fmt.Sprintf("hr_reconn_%d", time.Now().UnixNano())
	loc := testkit.PostgresSchema(t, "reconn") + "&application_name=" + app
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	w := writerOpen(t, s)
	d1 := &Delivery{Method: "POST", Target: "/1", Raw: []byte("1")}
	if err := w.Commit(ctx, []*Delivery{d1}, nil); err != nil {
		t.Fatal(err)
	}
	// Kill the writer's backend from outside, as a server restart does.
	testkit.PostgresExec(t, loc, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = '`+app+`' AND pid <> pg_backend_pid()`)
	d2 := &Delivery{Method: "POST", Target: "/2", Raw: []byte("2")}
	var err error
	var errs int
	for i := 0; i < 3; i++ {
		if err = w.Commit(ctx, []*Delivery{d2}, nil); err == nil {
			break
		}
		errs++
	}
	if err != nil {
		t.Fatalf("the writer did not reconnect: %v", err)
	}
	if errs == 0 {
		t.Fatal("the first commit on a terminated connection succeeded: the test did not cut the writer's connection")
	}
	got, err := s.ListDeliveries(ctx, Filter{Oldest: true})
	if err != nil || len(got) != 2 || got[0].Target != "/1" || got[1].Target != "/2" {
		t.Fatalf("after reconnecting: %d deliveries, %v", len(got), err)
	}
}

// Watch wakes on another store's commit through LISTEN/NOTIFY, and not on
// a commit to another schema of the same database.
func TestPostgresWatchIsPerSchema(t *testing.T) {
	ctx := context.Background()
	a := deliveriesOpen(t, testkit.PostgresSchema(t, "wa"))
	b := deliveriesOpen(t, testkit.PostgresSchema(t, "wb"))
	w, err := a.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	v0, err := w.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.InsertDelivery(ctx, &Delivery{Method: "POST", Target: "/", Raw: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if v, err := w.Wait(short, v0); err == nil {
		t.Fatalf("a commit to another schema woke the watcher: %d → %d", v0, v)
	}
	start := time.Now()
	if err := a.InsertDelivery(ctx, &Delivery{Method: "POST", Target: "/", Raw: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	if v, err := w.Wait(wctx, v0); err != nil || v == v0 {
		t.Fatalf("no wake on the store's own commit: %d, %v", v, err)
	}
	t.Logf("woken %s after the insert began", time.Since(start).Round(time.Millisecond))
}

// The schema a URL names, in the forms people write: pgx's ?search_path=
// (its first schema), Postgres's own default "$user", public (quoted or not:
// no schema named), and libpq's ?options=-c search_path=… (which the
// connection's own search_path would otherwise override unseen).
func TestPostgresURLSchema(t *testing.T) {
	for _, c := range []struct{ path, options, want string }{
		{"team_a,public", "", "team_a"},
		{`"My Team", public`, "", "My Team"},
		{`"$user", public`, "", ""},
		{"$user,public", "", ""},
		{"", "-c search_path=team_c", "team_c"},
		{"", "-csearch_path=team_c,public -c statement_timeout=5s", "team_c"},
		{"", "--search_path=team_d", "team_d"},
		{"", `-c search_path=my\ team`, "my team"},
		{"", "-c statement_timeout=5s", ""},
		{"team_a", "-c search_path=team_c", "team_a"},
	} {
		path := c.path
		if path == "" {
			path = optionsSearchPath(c.options)
		}
		if got := firstSchema(path); got != c.want {
			t.Errorf("search_path %q, options %q: schema %q, want %q", c.path, c.options, got, c.want)
		}
	}

	// Through a real server: the tables land in the schema options names.
	loc := testkit.PostgresSchema(t, "opts")
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	schema := q.Get("search_path")
	q.Del("search_path")
	u.RawQuery = q.Encode() + "&options=-c%20search_path%3D" + schema // %20: libpq reads + as itself
	s := deliveriesOpen(t, u.String())
	if err := s.InsertDelivery(context.Background(), &Delivery{Method: "POST", Target: "/", Raw: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if got := countIn(t, loc, schema); got != 1 {
		t.Fatalf("schema %s holds %d deliveries, want the 1 stored through ?options=-c search_path=", schema, got)
	}
}

func countIn(t *testing.T, dsn, schema string) int {
	t.Helper()
	s := deliveriesOpen(t, dsn)
	ds, err := s.ListDeliveries(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(ds)
}

// A connection the pool opens later — the server restarted under a long
// replay, the role was disabled — fails in the words Open uses, not pgx's
// "failed to connect to `user=… database=…`: HOST (IP): server error: …".
func TestPostgresLaterConnectionWorded(t *testing.T) {
	dsn := testkit.PostgresSchema(t, "later")
	role := fmt.Sprintf("hr_later_%d", time.Now().UnixNano())
	testkit.PostgresExec(t, dsn, "CREATE ROLE "+role+" LOGIN PASSWORD 'later-pw-123'")
	t.Cleanup(func() { testkit.PostgresExec(t, dsn, "DROP OWNED BY "+role, "DROP ROLE "+role) })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	testkit.PostgresExec(t, dsn, "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
	deliveriesOpen(t, dsn).Close() // the owner creates the tables
	testkit.PostgresExec(t, dsn, "GRANT SELECT ON ALL TABLES IN SCHEMA "+schema+" TO "+role)
	u.User = url.UserPassword(role, "later-pw-123")
	s := deliveriesOpen(t, u.String())
	s.db.SetMaxIdleConns(0) // every statement on a connection of its own
	testkit.PostgresExec(t, dsn, "ALTER ROLE "+role+" NOLOGIN")
	_, err = s.ListDeliveries(context.Background(), Filter{})
	if err == nil {
		t.Fatal("listed as a role that may no longer log in")
	}
	if msg := err.Error(); !strings.Contains(msg, "cannot connect to ") || !strings.Contains(msg, "is not permitted to log in") ||
		strings.Contains(msg, "failed to connect to `") || strings.Contains(msg, "later-pw-123") {
		t.Fatalf("a later connection failed with %q", msg)
	}
}
