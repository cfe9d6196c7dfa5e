package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"hash/fnv"
	"net"
	"net/url"
	"os"
	"regexp"
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
	pwFrom  string // where the password came from ("" when none was given)
}

// openPostgres opens the store at a postgres:// URL. Credentials come from
// the URL, PGPASSWORD, PGPASSFILE and the other libpq variables (pgx reads
// them); none of them is ever part of a message.
func openPostgres(ctx context.Context, raw string, o options) (*Store, error) {
	display := displayURL(raw)
	d := postgresDialect{secrets: urlSecrets(raw)}
	cfg, err := pgx.ParseConfig(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("open store %s: not a valid Postgres URL: %s", display, d.redact(parseErr(err)))
	}
	if cfg.Password != "" { // from the URL, PGPASSWORD or PGPASSFILE
		d.secrets = append(d.secrets, cfg.Password, url.QueryEscape(cfg.Password), url.PathEscape(cfg.Password))
	}
	path := cfg.RuntimeParams["search_path"]
	if path == "" { // libpq's way: ?options=-c%20search_path%3Dteam_a
		path = optionsSearchPath(cfg.RuntimeParams["options"])
	}
	urlSchema := firstSchema(path)
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
	t := &pgTarget{cfg: cfg, schema: schema, display: display, pwFrom: passwordFrom(raw, cfg)}
	d.where = t.where()
	cfg.AfterNetConnect = pgGuarded(d.where, pgAnswerTimeout) // pgguard.go
	db := sql.OpenDB(pgConnector{Connector: stdlib.GetConnector(*cfg, stdlib.OptionShouldPing(pingReused)), t: t, d: d})
	db.SetMaxIdleConns(4)
	s := &Store{db: pool{DB: db, d: d}, path: raw, pg: t}
	if err := s.openPostgresSchemaCaught(ctx, o); err != nil {
		db.Close()
		var fe *ForeignObjectsError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("open store %s: %w", display, err)
		}
		return nil, fmt.Errorf("open store %s: %s", display, d.redact(oneLine(err)))
	}
	return s, nil
}

// openPostgresSchemaCaught is openPostgresSchema; a panic of pgx reading
// what the server answered is the open's error, naming the server. A
// server answering a statement with nothing but ReadyForQuery made pgx
// return rows without a result, and database/sql's first look at them
// panicked (FuzzPostgresAnswer): no real server does it.
func (s *Store) openPostgresSchemaCaught(ctx context.Context, o options) (err error) {
	defer func() {
		var pe *panics.Error
		if errors.As(err, &pe) {
			err = fmt.Errorf("the Postgres server at %s answered in a way the Postgres driver cannot read (%w)", s.pg.where(), pe)
		}
	}()
	defer panics.Catch(&err)
	return s.openPostgresSchema(ctx, o)
}

// openPostgresSchema checks the store's schema, migrating it when it is
// not current. A current schema — every open but the first after an
// upgrade — costs one round trip once connected: one statement, sent with
// the simple protocol (no prepare), reads its version and what pgtrust.go
// refuses. Anything else (no schema yet, an older or newer one, a role
// that may not read it) takes the long way, which says what is wrong.
func (s *Store) openPostgresSchema(ctx context.Context, o options) error {
	q := `SELECT version, (SELECT pg_catalog.string_agg(f, E'\x1f') FROM (` + pgForeignQuery() + `) AS f(f))
		FROM ` + s.pg.schemaName() + `.hookreplay_schema`
	var v int
	var foreign sql.NullString
	err := s.db.QueryRowContext(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&v, &foreign)
	var pe *pgconn.PgError
	if err != nil && !errors.As(err, &pe) { // not the server's answer: the connection failed
		return errors.New(connectErr(s.pg, err))
	}
	if err == nil && v == len(pgMigrations) {
		if !foreign.Valid {
			return nil
		}
		if o.dropForeign == nil {
			return &ForeignObjectsError{Objects: strings.Split(foreign.String, "\x1f")}
		}
		return s.checkTrustPostgres(ctx, o.dropForeign)
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	return s.checkTrust(ctx, o.dropForeign)
}

// pingReused is when the pool pings a connection before reusing it: after
// a second idle, as pgx does by default — but not on the first reuse of a
// connection just opened, whose idle time pgx counts from the zero time:
// that ping was a round trip of its own in every short command (list
// opened the store, then pinged before its query).
func pingReused(_ context.Context, p stdlib.ShouldPingParams) bool {
	return p.IdleDuration > time.Second && p.IdleDuration < 100*365*24*time.Hour
}

// pgConnector is pgx's connector with its failures worded by connectErr:
// every connection the pool opens — at start, and again when the server
// restarted under a long replay or check — fails with one line naming the
// server and the cause, not pgx's "failed to connect to `user=…
// database=…`: HOST (IP): server error: …".
type pgConnector struct {
	driver.Connector
	t *pgTarget
	d postgresDialect
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, &pgConnectError{msg: c.d.redact(connectErr(c.t, err)), err: err}
	}
	return conn, nil
}

// pgConnectError is a failed connection, worded; errors.Is and errors.As
// still see pgx's error (a cancelled context stays one).
type pgConnectError struct {
	msg string
	err error
}

func (e *pgConnectError) Error() string { return e.msg }
func (e *pgConnectError) Unwrap() error { return e.err }

var (
	// pgxConnectPrefix and pgxDialPrefix are what pgx puts before the cause
	// of a failed connection: the user and database (said by the URL shown
	// beside it), then the address tried.
	pgxConnectPrefix = regexp.MustCompile("^failed to connect to `[^`]*`:\\s*")
	pgxDialPrefix    = regexp.MustCompile(`^(\S+) \([^)]*\): `)
	pgxParsePrefix   = regexp.MustCompile("^cannot parse `.*?`: ")
)

// connectErr words a failed connection in one line: where, and the cause
// (the server's own message, or the network's, TLS's, DNS's) without pgx's
// wrapping, which repeats the user, the database and each address tried.
func connectErr(t *pgTarget, err error) string {
	var worded *pgConnectError
	if errors.As(err, &worded) {
		return worded.msg
	}
	var refused *pgRefusal
	if errors.As(err, &refused) {
		return refused.msg
	}
	cfg := t.cfg
	where := t.where()
	text := pgxConnectPrefix.ReplaceAllString(oneLine(err), "")
	if m := pgxDialPrefix.FindStringSubmatch(text); m != nil {
		where, text = m[1], text[len(m[0]):] // the address that failed (of several hosts, the first)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		msg := fmt.Sprintf("cannot connect to %s: the server says: %s (SQLSTATE %s)", where, pe.Message, pe.Code)
		if pe.Code == "28P01" { // invalid_password
			if t.pwFrom == "" {
				return msg + "; no password was given: set PGPASSWORD, add a line to ~/.pgpass (or PGPASSFILE), or put it in the URL"
			}
			return msg + "; the password came from " + t.pwFrom
		}
		return msg
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("cannot connect to %s: cannot resolve the host name %s: %s", where, dns.Name, dns.Err)
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return fmt.Sprintf("cannot connect to %s: %s", where, oneLine(oe.Err))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("cannot connect to %s: no answer within %s", where, cfg.ConnectTimeout)
	}
	switch {
	case strings.Contains(text, "server refused TLS connection"):
		return fmt.Sprintf("cannot connect to %s: the server does not accept TLS connections, which the URL's sslmode requires (sslmode=disable connects without TLS: only on a network you trust)", where)
	case strings.HasPrefix(text, "tls error: "):
		return fmt.Sprintf("cannot connect to %s: TLS: %s", where, strings.TrimPrefix(text, "tls error: "))
	case strings.HasPrefix(text, "ValidateConnect failed: "):
		return fmt.Sprintf("cannot connect to %s: the server is not what the URL's target_session_attrs asks for (%s)", where, strings.TrimPrefix(text, "ValidateConnect failed: "))
	case strings.HasPrefix(text, "failed to receive message: "), strings.HasPrefix(text, "received unexpected message"):
		return fmt.Sprintf("cannot connect to %s: what answers there is not a Postgres server (is the port right?)", where)
	}
	return fmt.Sprintf("cannot connect to %s: %s", where, text)
}

// where is the server a connection goes to first: HOST:PORT, or the
// socket's path.
func (t *pgTarget) where() string {
	if strings.HasPrefix(t.cfg.Host, "/") {
		return fmt.Sprintf("%s/.s.PGSQL.%d", t.cfg.Host, t.cfg.Port)
	}
	return fmt.Sprintf("%s:%d", t.cfg.Host, t.cfg.Port)
}

// parseErr words a URL pgx cannot read: its reason, without the URL again
// (the message names it, without its password).
func parseErr(err error) string {
	return pgxParsePrefix.ReplaceAllString(oneLine(err), "")
}

// passwordFrom says where the password of a connection to raw comes from,
// in libpq's order (the URL, PGPASSWORD, the password file), or "" when
// there is none.
func passwordFrom(raw string, cfg *pgx.ConnConfig) string {
	if cfg.Password == "" {
		return ""
	}
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil {
		if _, ok := u.User.Password(); ok || u.Query().Has("password") {
			return "the URL"
		}
	}
	if os.Getenv("PGPASSWORD") != "" {
		return "PGPASSWORD"
	}
	if f := os.Getenv("PGPASSFILE"); f != "" {
		return "the password file PGPASSFILE names"
	}
	return "the password file ~/.pgpass"
}

// optionsSearchPath is the search_path that libpq's options parameter
// sets (-c search_path=A, -csearch_path=A or --search_path=A; a backslash
// escapes the next character), "" when it sets none. hookreplay sets the
// connection's search_path itself, which the server applies after options:
// without this, a schema chosen there would be ignored.
func optionsSearchPath(opts string) string {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(opts); i++ {
		c := opts[i]
		switch {
		case c == '\\' && i+1 < len(opts):
			i++
			w.WriteByte(opts[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	path := ""
	for i := 0; i < len(words); i++ {
		var setting string
		switch word := words[i]; {
		case word == "-c" && i+1 < len(words):
			i++
			setting = words[i]
		case strings.HasPrefix(word, "--"):
			setting = word[2:]
		case strings.HasPrefix(word, "-c"):
			setting = word[2:]
		}
		name, value, ok := strings.Cut(setting, "=")
		if ok && strings.ReplaceAll(strings.ToLower(name), "-", "_") == "search_path" {
			path = value // the last one wins, as on the server
		}
	}
	return path
}

// firstSchema is the first schema a search_path names ("" for none).
func firstSchema(path string) string {
	first, _, _ := strings.Cut(path, ",")
	first = strings.TrimSpace(first)
	if first == "$user" || first == `"$user"` { // Postgres's own default ("$user", public): no schema named
		return ""
	}
	if len(first) >= 2 && first[0] == '"' && first[len(first)-1] == '"' {
		return strings.ReplaceAll(first[1:len(first)-1], `""`, `"`)
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
			if denied(err) { // a schema made for another role (docs/team.md's owner), used first by this one
				return fmt.Errorf("schema %s holds no hookreplay tables yet and this role may not create them (%s): run hookreplay once as the role that owns the schema, then grant this one its rights (docs/team.md, Database roles)", t.schema, pgMessage(err))
			}
			return fmt.Errorf("mark schema %s as hookreplay's: %w", t.schema, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL search_path TO "+t.schemaName()); err != nil {
		return err
	}
	for i := v; i < len(pgMigrations); i++ {
		if _, err := tx.ExecContext(ctx, pgMigrations[i]); err != nil {
			if denied(err) && v > 0 { // a newer hookreplay, run first by a role that does not own the tables
				return fmt.Errorf("schema %s is at version %d and this hookreplay needs version %d, which this role may not migrate it to (%s): run this hookreplay once as the role that owns the schema (docs/team.md, Database roles)", t.schema, v, len(pgMigrations), pgMessage(err))
			}
			if denied(err) {
				return fmt.Errorf("create hookreplay's tables in schema %s: %s (the role needs CREATE on the schema the first time)", t.schema, pgMessage(err))
			}
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
		return 0, false, readVersionErr(t, err)
	}
	if !reg.Valid {
		return 0, false, nil
	}
	if err := q.QueryRowContext(ctx, "SELECT version FROM "+t.schemaName()+".hookreplay_schema").Scan(&v); err != nil {
		return 0, false, readVersionErr(t, err)
	}
	return v, true, nil
}

func readVersionErr(t *pgTarget, err error) error {
	if denied(err) { // a role given no USAGE on the schema, or no SELECT on its tables
		return fmt.Errorf("this role may not read schema %s (%s): grant it USAGE on the schema and SELECT on its tables (docs/team.md, Database roles)", t.schema, pgMessage(err))
	}
	return fmt.Errorf("read schema version: %w", err)
}

// denied reports whether the server refused err's statement for want of a
// privilege (SQLSTATE 42501, insufficient_privilege).
func denied(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}

// pgMessage is the server's message of err, without pgx's "ERROR:" and
// SQLSTATE; anything else as one line.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return oneLine(err)
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

	// trap holds a panic of run (pgx reading what the server sends):
	// Wait and Version raise it on their caller's goroutine.
	trap panics.Trap
}

func (s *Store) watchPostgres(ctx context.Context) (*pgWatch, error) {
	c, subscribed, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	w := &pgWatch{t: s.pg, d: s.db.d.(postgresDialect), cancel: cancel, done: make(chan struct{}), v: 1, changed: make(chan struct{})}
	w.trap.OnPanic = func() { w.set(nil, true) } // wakes Wait, which raises it
	go w.run(wctx, s, c, subscribed)
	return w, nil
}

// listen opens the watcher's connection and subscribes.
func (s *Store) listen(ctx context.Context) (c *pgx.Conn, subscribed bool, err error) {
	cfg := s.pg.cfg.Copy()
	// It waits for notifications as long as nothing changes: the answer
	// bound is not for it; the message bounds are.
	cfg.AfterNetConnect = pgGuarded(s.pg.where(), 0)
	c, err = pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		// Shown in the TUI's status bar while the server is away: the one
		// line open gives, not pgx's "failed to connect to `user=…`".
		return nil, false, fmt.Errorf("watch database: connection lost: %s", s.db.d.redact(connectErr(s.pg, err)))
	}
	var standby bool
	if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err == nil && standby {
		// A read replica (hot standby) refuses LISTEN, and no NOTIFY
		// reaches it anyway: the watcher polls it for replayed WAL.
		return c, false, nil
	}
	if _, err := c.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		c.Close(context.Background())
		return nil, false, fmt.Errorf("watch database: %s", s.db.d.redact(oneLine(err)))
	}
	return c, true, nil
}

// standbyPoll is how often a watcher on a read replica asks how far it has
// replayed the primary's WAL: a change there is a change of the store, as
// far as the replica can tell (it may be another schema's or database's;
// the view reads again and finds nothing new).
const standbyPoll = 500 * time.Millisecond

// errPromoted ends a watcher's polling of a standby that was promoted.
var errPromoted = errors.New("the standby was promoted to a primary")

// replayed is how far a standby has replayed WAL, "" on a primary. A
// primary that went through crash recovery since it started (a machine
// reset, a killed postmaster) still reports the last WAL record that
// recovery applied, which never moves again: only a server in recovery is
// a standby.
func replayed(ctx context.Context, c *pgx.Conn) (string, error) {
	var lsn *string
	if err := c.QueryRow(ctx, "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text END").Scan(&lsn); err != nil || lsn == nil {
		return "", err
	}
	return *lsn, nil
}

// standbyAt is replayed on the watcher's connection c: on one that did not
// subscribe (a standby's when it connected), a server no longer in
// recovery was promoted since, errPromoted (the watcher follows a primary
// by LISTEN on a new connection).
func standbyAt(ctx context.Context, c *pgx.Conn, subscribed bool) (string, error) {
	lsn, err := replayed(ctx, c)
	if err == nil && lsn == "" && !subscribed {
		err = errPromoted
	}
	return lsn, err
}

func (w *pgWatch) run(ctx context.Context, s *Store, c *pgx.Conn, subscribed bool) {
	defer close(w.done)
	defer w.trap.Guard()
	for {
		var lsn string
		var err error
		if c != nil {
			lsn, err = standbyAt(ctx, c, subscribed)
		}
		for c != nil && err == nil && lsn != "" { // a read replica: poll
			select {
			case <-ctx.Done():
				c.Close(context.Background())
				return
			case <-time.After(standbyPoll):
			}
			var now string
			if now, err = standbyAt(ctx, c, subscribed); err == nil && now != lsn {
				lsn = now
				w.set(nil, true)
			}
		}
		promoted := errors.Is(err, errPromoted)
		if err != nil && c != nil {
			if ctx.Err() != nil {
				c.Close(context.Background())
				return
			}
			c.Close(context.Background())
			c = nil
			if !promoted { // a promotion is no loss: LISTEN at once
				w.set(fmt.Errorf("watch database: connection lost: %s", w.d.redact(oneLine(err))), false)
			}
		}
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
		if !promoted {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		cctx, cancel := context.WithTimeout(ctx, pgConnectTimeout)
		nc, sub, err := s.listen(cctx)
		cancel()
		if err != nil {
			w.set(err, false)
			continue
		}
		c, subscribed = nc, sub
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
	w.trap.Rethrow()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.v, w.changed, w.err
}

func (w *pgWatch) close() error {
	w.cancel()
	<-w.done
	return nil
}
