package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookreplay/hookreplay/internal/secret"
)

// dialect is what differs between the two backends in the SQL the store's
// methods share. The methods write their statements once, with ? for
// parameters; everything else that differs (schema, migrations, the
// database's mark, the live-change signal) is in sqlite.go and postgres.go.
type dialect interface {
	// rebind turns the ? parameters of query into the backend's own.
	rebind(query string) string
	// globMatch returns a condition matching column against a SQLite-style
	// glob (* ? [...]) and its argument.
	globMatch(column, glob string) (string, any)
	// bodyContains returns a condition that the bytes of expr contain text,
	// ASCII case ignored, and its argument.
	bodyContains(expr, text string) (string, any)
	// headerMatch returns a condition that the headers column (JSON
	// [{name, value}]) holds h, and its arguments.
	headerMatch(h HeaderMatch) (string, []any)
	// begin is the statement the capture writer starts a transaction with.
	begin() string
	// redact removes credentials from text bound for a message.
	redact(text string) string
	// args makes statement arguments storable: Postgres's text holds
	// neither NUL nor bytes that are not UTF-8, which SQLite keeps.
	args(args []any) []any
	// lost words err when it says the connection to the database was lost
	// (its server restarted or went away under a command); else err.
	lost(err error) error
	// requestLine is a column of deliveries' request line, as sent, where
	// the target column does not hold it exactly (NULL elsewhere): a
	// delivery's summary is read without its raw request.
	requestLine() string
	// oneShot are the arguments that go before a read's own, for a
	// statement a short-lived command runs once or twice: on Postgres, sent
	// without preparing it first (one round trip instead of two; the server
	// infers the parameters' types from the statement).
	oneShot() []any
}

type sqliteDialect struct{}

func (sqliteDialect) rebind(q string) string { return q }

func (sqliteDialect) globMatch(col, glob string) (string, any) { return col + " GLOB ?", glob }

func (sqliteDialect) bodyContains(expr, text string) (string, any) {
	return `CAST(` + expr + ` AS TEXT) LIKE ? ESCAPE '\'`, "%" + likeEscaper.Replace(text) + "%"
}

func (sqliteDialect) headerMatch(h HeaderMatch) (string, []any) {
	q := `EXISTS (SELECT 1 FROM json_each(headers) h WHERE lower(json_extract(h.value, '$.name')) = ?`
	if h.AnyValue {
		return q + `)`, []any{strings.ToLower(h.Name)}
	}
	return q + ` AND json_extract(h.value, '$.value') = ?)`, []any{strings.ToLower(h.Name), h.Value}
}

// begin takes the write lock at once (as _txlock=immediate does for BeginTx).
func (sqliteDialect) begin() string { return "BEGIN IMMEDIATE" }

func (sqliteDialect) redact(text string) string { return text }

func (sqliteDialect) args(args []any) []any { return args }

func (sqliteDialect) lost(err error) error { return err }

// requestLine: SQLite's target is the exact bytes.
func (sqliteDialect) requestLine() string { return "NULL" }

func (sqliteDialect) oneShot() []any { return nil }

type postgresDialect struct {
	secrets []string // the DSN's password, as written and decoded
	where   string   // the server, HOST:PORT or its socket, for messages
}

// lost words a connection the server closed under a statement — pgx's
// "conn closed", "unexpected EOF", FATAL 57P01 "terminating connection due
// to administrator command" — as "lost the connection to HOST:PORT: …";
// errors.Is and errors.As still see pgx's error.
func (d postgresDialect) lost(err error) error {
	var worded *pgConnectError
	if err == nil || errors.As(err, &worded) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var refused *pgRefusal // pgguard.go: already says where and why
	if errors.As(err, &refused) {
		return &pgConnectError{msg: d.redact(refused.msg), err: err}
	}
	var cause string
	var pe *pgconn.PgError
	var oe *net.OpError
	switch {
	case errors.As(err, &pe):
		if !strings.HasPrefix(pe.Code, "57P") { // operator intervention: shutdown, crash, not yet up
			return err
		}
		cause = fmt.Sprintf("the server says: %s (SQLSTATE %s)", pe.Message, pe.Code)
	case errors.As(err, &oe) && oe.Err != nil:
		cause = oneLine(oe.Err)
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		err.Error() == "conn closed", strings.HasSuffix(err.Error(), ": conn closed"):
		cause = "the connection was closed"
	default:
		return err
	}
	return &pgConnectError{msg: d.redact(fmt.Sprintf("lost the connection to %s: %s", d.where, cause)), err: err}
}

var rebound sync.Map // query → Postgres form

// rebind numbers the ? parameters ($1, $2, ...), leaving quoted text alone.
func (postgresDialect) rebind(q string) string {
	if v, ok := rebound.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	n, quoted := 0, false
	for _, r := range q {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == '?' && !quoted:
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	rebound.Store(q, b.String())
	return b.String()
}

func (postgresDialect) globMatch(col, glob string) (string, any) {
	return col + " ~ ?", globRegexp(glob)
}

// globRegexp is SQLite's GLOB pattern as an anchored regular expression: *
// any run, ? one character, [...] a class ([^...] negated), anything else
// itself.
func globRegexp(glob string) string {
	var b strings.Builder
	b.WriteString("^")
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			end := i + 1
			if end < len(rs) && rs[end] == '^' {
				end++
			}
			if end < len(rs) && rs[end] == ']' {
				end++
			}
			for end < len(rs) && rs[end] != ']' {
				end++
			}
			if end >= len(rs) { // no closing bracket: a literal [
				b.WriteString(`\[`)
				continue
			}
			class := string(rs[i+1 : end])
			neg := strings.HasPrefix(class, "^")
			class = strings.TrimPrefix(class, "^")
			class = strings.ReplaceAll(class, `\`, `\\`)
			b.WriteString("[")
			if neg {
				b.WriteString("^")
			}
			b.WriteString(class)
			b.WriteString("]")
			i = end
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return b.String()
}

// bodyContains compares in bytea's escape text form (bytes 0 and ≥ 0x80 as
// \ooo, \ doubled), in which every byte sequence is text: the needle is put
// in the same form, so the match is on bytes, as SQLite's is.
func (postgresDialect) bodyContains(expr, text string) (string, any) {
	return `encode(` + expr + `, 'escape') ILIKE ? ESCAPE '\'`, "%" + likeEscaper.Replace(byteaEscape(text)) + "%"
}

func (postgresDialect) headerMatch(h HeaderMatch) (string, []any) {
	q := `EXISTS (SELECT 1 FROM jsonb_array_elements(headers::jsonb) h(e) WHERE lower(h.e->>'name') = ?`
	if h.AnyValue {
		return q + `)`, []any{strings.ToLower(h.Name)}
	}
	return q + ` AND h.e->>'value' = ?)`, []any{strings.ToLower(h.Name), h.Value}
}

// byteaEscape is Postgres's encode(b, 'escape').
func byteaEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == 0 || c >= 0x80:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (postgresDialect) begin() string { return "BEGIN" }

// requestLine: a target stored with U+FFFD for bytes text cannot hold
// (postgresText) comes with its request line, up to the first LF, which
// exactTarget reads it from.
func (postgresDialect) requestLine() string {
	return `(CASE WHEN strpos(target, chr(65533)) > 0 THEN substring(raw_request FROM 1 FOR position('\x0a'::bytea IN raw_request)) END)`
}

func (postgresDialect) oneShot() []any { return []any{pgx.QueryExecModeExec} }

// args replaces, in string arguments, NUL and bytes that are not UTF-8 by
// U+FFFD (as JSON does): a delivery's exact bytes are its raw request
// (bytea); its target is read back from them (exactTarget), its headers too
// (exactHeaders). Byte slices go to bytea untouched.
func (postgresDialect) args(args []any) []any {
	var out []any // a copy, made at the first change: never the caller's slice
	for i, a := range args {
		if s, ok := a.(string); ok && !storableText(s) {
			if out == nil {
				out = append([]any(nil), args...)
			}
			out[i] = postgresText(s)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// postgresText is s as Postgres's text can hold it: NUL and bytes that are
// not UTF-8 as U+FFFD.
func postgresText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func storableText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// redact hides the DSN's password in text (secret.Hide: a short one only
// where it stands as a credential — the userinfo of a URL (":o@") or, here
// too, a libpq password=o parameter — so URLs and conninfo strings in
// messages never show it while ordinary letters stay).
func (d postgresDialect) redact(text string) string {
	text = secret.Hide(text, d.secrets, "xxxxx")
	for _, s := range d.secrets {
		if s == "" || len(s) >= secret.MinLen {
			continue
		}
		for _, k := range []string{"password=", "password='", "PASSWORD=", "PASSWORD='"} {
			text = replaceValue(text, k+s, k+"xxxxx")
		}
	}
	return text
}

// replaceValue replaces old in text only where it ends a value: at the end
// of text or before a separator (space, &, quote, comma, semicolon).
func replaceValue(text, old, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, old)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(old)
		if end == len(text) || strings.ContainsRune(" &'\",;)\n", rune(text[end])) {
			b.WriteString(text[:i])
			b.WriteString(repl)
		} else {
			b.WriteString(text[:end])
		}
		text = text[end:]
	}
}

// pool is the store's connection pool with its dialect: statements are
// written with ? and rebound here.
type pool struct {
	*sql.DB
	d dialect
}

func (c pool) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	r, err := c.DB.ExecContext(ctx, c.d.rebind(q), c.d.args(args)...)
	return r, c.d.lost(err)
}

func (c pool) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	r, err := c.DB.QueryContext(ctx, c.d.rebind(q), c.d.args(args)...)
	return r, c.d.lost(err)
}

func (c pool) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.DB.QueryRowContext(ctx, c.d.rebind(q), c.d.args(args)...)
}

func (c pool) BeginTx(ctx context.Context, opts *sql.TxOptions) (txn, error) {
	t, err := c.DB.BeginTx(ctx, opts)
	return txn{Tx: t, d: c.d}, c.d.lost(err)
}

// txn is a transaction of pool, rebinding as pool does.
type txn struct {
	*sql.Tx
	d dialect
}

func (t txn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	r, err := t.Tx.ExecContext(ctx, t.d.rebind(q), t.d.args(args)...)
	return r, t.d.lost(err)
}

// Commit commits, a lost connection worded as the statements' are.
func (t txn) Commit() error { return t.d.lost(t.Tx.Commit()) }

func (t txn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.d.rebind(q), t.d.args(args)...)
}

func (t txn) PrepareContext(ctx context.Context, q string) (stmt, error) {
	st, err := t.Tx.PrepareContext(ctx, t.d.rebind(q))
	return stmt{Stmt: st, d: t.d}, t.d.lost(err)
}

// stmt is a prepared statement whose arguments go through its dialect.
type stmt struct {
	*sql.Stmt
	d dialect
}

func (s stmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	r, err := s.Stmt.ExecContext(ctx, s.d.args(args)...)
	return r, s.d.lost(err)
}

func (s stmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return s.Stmt.QueryRowContext(ctx, s.d.args(args)...)
}
