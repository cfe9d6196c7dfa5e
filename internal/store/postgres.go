package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/hookreplay/hookreplay/internal/secret"
)

// DefaultSchema is the Postgres schema hookreplay's tables live in when
// neither the URL's search_path nor WithSchema names one.
const DefaultSchema = "hookreplay"

// notifyChannel is the channel the tables' triggers notify on every change;
// the payload is the schema, so that stores in other schemas of the same
// database do not wake each other's watchers.
const notifyChannel = "hookreplay"

// pgConnectTimeout bounds a connection attempt when the URL (connect_timeout)
// and the environment (PGCONNECT_TIMEOUT) do not.
const pgConnectTimeout = 10 * time.Second

// pgTarget is where a Postgres store is.
type pgTarget struct {
	cfg     *pgx.ConnConfig // search_path set to the schema
	schema  string
	display string // the URL without credentials
}

// openPostgres opens the store at a postgres:// URL. Credentials come from
// the URL, PGPASSWORD, PGPASSFILE and the other libpq variables (pgx reads
// them); none of them is ever part of a message.
func openPostgres(ctx context.Context, raw string, o options) (*Store, error) {
	display := displayURL(raw)
	d := postgresDialect{secrets: urlSecrets(raw)}
	cfg, err := pgx.ParseConfig(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("open store %s: not a valid Postgres URL: %s", display, d.redact(oneLine(err)))
	}
	if cfg.Password != "" { // from the URL, PGPASSWORD or PGPASSFILE
		d.secrets = append(d.secrets, cfg.Password, url.QueryEscape(cfg.Password), url.PathEscape(cfg.Password))
	}
	urlSchema := firstSchema(cfg.RuntimeParams["search_path"])
	if urlSchema == "" {
		urlSchema = DefaultSchema
	}
	schema := o.schema
	if schema == "" {
		schema = urlSchema
	}
	if len(schema) > 63 {
		return nil, fmt.Errorf("open store %s: schema name %q is longer than Postgres allows (63 bytes)", display, schema)
	}
	cfg.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	// capture acknowledges a delivery only once it is committed: whatever
	// the server's default, a commit here waits for the WAL flush.
	cfg.RuntimeParams["synchronous_commit"] = "on"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "hookreplay"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	if schema != urlSchema { // --db-schema: the URL alone does not say
		display += " (schema " + schema + ")"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxIdleConns(4)
	s := &Store{db: pool{DB: db, d: d}, path: raw, pg: &pgTarget{cfg: cfg, schema: schema, display: display}}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %s", display, d.redact(connectErr(cfg, err)))
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %s", display, d.redact(oneLine(err)))
	}
	return s, nil
}

// connectErr words a failed connection in one line: where, and the cause
// (the server's own message, or the network's) without pgx's repetition of
// each address it tried.
func connectErr(cfg *pgx.ConnConfig, err error) string {
	where := fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	if strings.HasPrefix(cfg.Host, "/") {
		where = fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("cannot connect to %s: the server says: %s (SQLSTATE %s)", where, pe.Message, pe.Code)
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return fmt.Sprintf("cannot connect to %s: %s", where, oneLine(oe.Err))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("cannot connect to %s: no answer within %s", where, cfg.ConnectTimeout)
	}
	return fmt.Sprintf("cannot connect to %s: %s", where, oneLine(err))
}

// firstSchema is the first schema a search_path names ("" for none).
func firstSchema(path string) string {
	first, _, _ := strings.Cut(path, ",")
	first = strings.TrimSpace(first)
	if len(first) >= 2 && first[0] == '"' && first[len(first)-1] == '"' {
		return strings.ReplaceAll(first[1:len(first)-1], `""`, `"`)
	}
	if first == "$user" {
		return ""
	}
	return first
}

// displayURL is raw without its password and credential parameters.
func displayURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "postgres://(URL not shown: it does not parse)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	for k := range q {
		if credentialParam(k) {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// urlSecrets are the credentials written in raw, as written and decoded.
func urlSecrets(raw string) []string {
	out := secret.URLPassword(raw)
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return out
	}
	for k, vs := range u.Query() {
		if credentialParam(k) {
			for _, v := range vs {
				out = append(out, v, url.QueryEscape(v))
			}
		}
	}
	return out // short ones are replaced only as credentials: see redact
}

func credentialParam(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "pass") || strings.Contains(k, "secret") || strings.Contains(k, "token")
}

// oneLine is err's message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// schemaName is the store's schema, quoted for SQL.
func (t *pgTarget) schemaName() string { return pgx.Identifier{t.schema}.Sanitize() }

// lockKey is the advisory lock migrations of this schema take.
func (t *pgTarget) lockKey() int64 {
	h := fnv.New64a()
	h.Write([]byte("hookreplay schema " + t.schema))
	return int64(h.Sum64())
}

// migratePostgres brings the schema up to date. A store at the current
// version is only read (a read-only role may browse it); otherwise the
// migrations run in one transaction under an advisory lock, so that several
// processes starting at once migrate once, and the others wait and find it
// done.
func (s *Store) migratePostgres(ctx context.Context) error {
	t := s.pg
	v, marked, err := pgVersion(ctx, s.db.DB, t)
	if err != nil {
		return err
	}
	if marked && v == len(pgMigrations) {
		return nil
	}
	if v > len(pgMigrations) {
		return tooNew(t, v)
	}
	tx, err := s.db.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", t.lockKey()); err != nil {
		return fmt.Errorf("lock the schema for migration: %w", err)
	}
	// CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the
	// schema exists: a schema an admin created for the role (docs/team.md's
	// owner) is used as it is.
	var exists bool
	if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", t.schema).Scan(&exists); err != nil {
		return fmt.Errorf("look for schema %s: %w", t.schema, err)
	}
	if !exists {
		if _, err := tx.ExecContext(ctx, "CREATE SCHEMA "+t.schemaName()); err != nil {
			return fmt.Errorf("create schema %s: %s (the role needs CREATE on the database the first time, or create the schema for it)", t.schema, oneLine(err))
		}
	}
	if v, marked, err = pgVersion(ctx, tx, t); err != nil {
		return err
	}
	if v > len(pgMigrations) {
		return tooNew(t, v)
	}
	if !marked {
		if taken, err := pgTaken(ctx, tx, t); err != nil {
			return err
		} else if len(taken) > 0 {
			return fmt.Errorf("schema %s already holds tables named as hookreplay's (%s) that hookreplay did not create; give another schema (--db-schema or ?search_path=)", t.schema, strings.Join(taken, ", "))
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE "+t.schemaName()+".hookreplay_schema (version integer NOT NULL); INSERT INTO "+t.schemaName()+".hookreplay_schema VALUES (0)"); err != nil {
			return fmt.Errorf("mark schema %s as hookreplay's: %w", t.schema, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL search_path TO "+t.schemaName()); err != nil {
		return err
	}
	for i := v; i < len(pgMigrations); i++ {
		if _, err := tx.ExecContext(ctx, pgMigrations[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+t.schemaName()+".hookreplay_schema SET version = $1", len(pgMigrations)); err != nil {
		return fmt.Errorf("record schema version: %w", err)
	}
	return tx.Commit()
}

func tooNew(t *pgTarget, v int) error {
	return fmt.Errorf("the hookreplay schema %s in this database is at version %d, newer than this hookreplay knows (%d); upgrade hookreplay (every machine sharing the store needs a version at least as new)", t.schema, v, len(pgMigrations))
}

type queryer interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// pgVersion reads the schema's version; marked is false when the schema
// has no hookreplay mark (it is new, or not hookreplay's).
func pgVersion(ctx context.Context, q queryer, t *pgTarget) (v int, marked bool, err error) {
	var reg sql.NullString
	if err := q.QueryRowContext(ctx, "SELECT to_regclass($1)::text", t.schemaName()+".hookreplay_schema").Scan(&reg); err != nil {
		return 0, false, fmt.Errorf("read schema version: %w", err)
	}
	if !reg.Valid {
		return 0, false, nil
	}
	if err := q.QueryRowContext(ctx, "SELECT version FROM "+t.schemaName()+".hookreplay_schema").Scan(&v); err != nil {
		return 0, false, fmt.Errorf("read schema version: %w", err)
	}
	return v, true, nil
}

// pgTaken lists tables of the schema named as hookreplay's own.
func pgTaken(ctx context.Context, q queryer, t *pgTarget) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1
		AND table_name IN ('deliveries', 'runs', 'attempts', 'probe_readings', 'verdicts', 'effects') ORDER BY table_name`, t.schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// pgSynchronous is Synchronous on Postgres: 2 when commits wait for the
// WAL flush, 0 when not.
func (s *Store) pgSynchronous(ctx context.Context) (int, error) {
	var v string
	if err := s.db.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&v); err != nil {
		return 0, err
	}
	if v == "off" {
		return 0, nil
	}
	return 2, nil
}

// pgWatch follows the store's changes by LISTEN on its own connection: the
// tables' triggers NOTIFY on every statement that changes them, and the
// notification arrives when the transaction commits. It reconnects by
// itself; a reconnection counts as a change (some may have been missed).
type pgWatch struct {
	t      *pgTarget
	d      postgresDialect
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	v       int64
	err     error         // set while disconnected
	changed chan struct{} // closed and replaced at each change
}

func (s *Store) watchPostgres(ctx context.Context) (*pgWatch, error) {
	c, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	w := &pgWatch{t: s.pg, d: s.db.d.(postgresDialect), cancel: cancel, done: make(chan struct{}), v: 1, changed: make(chan struct{})}
	go w.run(wctx, s, c)
	return w, nil
}

// listen opens the watcher's connection and subscribes.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, s.pg.cfg)
	if err != nil {
		// Shown in the TUI's status bar while the server is away: the one
		// line open gives, not pgx's "failed to connect to `user=…`".
		return nil, fmt.Errorf("watch database: connection lost: %s", s.db.d.redact(connectErr(s.pg.cfg, err)))
	}
	if _, err := c.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("watch database: %s", s.db.d.redact(oneLine(err)))
	}
	return c, nil
}

func (w *pgWatch) run(ctx context.Context, s *Store, c *pgx.Conn) {
	defer close(w.done)
	for {
		for c != nil {
			n, err := c.WaitForNotification(ctx)
			if ctx.Err() != nil {
				c.Close(context.Background())
				return
			}
			if err != nil {
				c.Close(context.Background())
				c = nil
				w.set(fmt.Errorf("watch database: connection lost: %s", w.d.redact(oneLine(err))), false)
				break
			}
			if n.Payload == w.t.schema {
				w.set(nil, true)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		cctx, cancel := context.WithTimeout(ctx, pgConnectTimeout)
		nc, err := s.listen(cctx)
		cancel()
		if err != nil {
			w.set(err, false)
			continue
		}
		c = nc
		w.set(nil, true)
	}
}

func (w *pgWatch) set(err error, bump bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
	if bump {
		w.v++
		close(w.changed)
		w.changed = make(chan struct{})
	}
}

func (w *pgWatch) version() (int64, <-chan struct{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.v, w.changed, w.err
}

func (w *pgWatch) close() error {
	w.cancel()
	<-w.done
	return nil
}
