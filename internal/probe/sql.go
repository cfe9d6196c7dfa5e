package probe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// SQLProbe runs a query against the handler's database; the result rows are
// the value.
type SQLProbe struct {
	query   string
	driver  string // "sqlite" or "pgx"
	dsn     string // what sql.Open gets
	display string // the DSN without a password, for errors
	path    string // sqlite file

	// Timeout bounds one query (DefaultReadTimeout when zero).
	Timeout time.Duration

	mu sync.Mutex
	db *sql.DB // Postgres pool, opened on first Read

	// args are a scoped probe's values, bound to the query's parameters;
	// shared is the probe it was scoped from, whose pool it uses.
	args   []any
	shared *SQLProbe
}

// NewSQL returns a probe running query against dsn: `sqlite:PATH` or a
// `postgres://` / `postgresql://` URL. The query runs read-only. Its rows are
// rendered deterministically (see Read); a single numeric cell is a number.
func NewSQL(dsn, query string) (*SQLProbe, error) {
	p := &SQLProbe{query: strings.TrimSpace(query)}
	if p.query == "" {
		return nil, errors.New("sql probe: empty query")
	}
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" {
			return nil, fmt.Errorf("sql probe: dsn %q has no file path (use sqlite:PATH)", dsn)
		}
		p.driver, p.path, p.display = "sqlite", path, dsn
		q := url.Values{}
		q.Add("mode", "rw") // never create the file: a typo must not read an empty database
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "query_only(1)")
		// '?', '#' and '%' would end or escape the path inside a file: URI.
		esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
		p.dsn = "file:" + esc + "?" + q.Encode()
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, fmt.Errorf("sql probe: bad postgres dsn: %v", redactErr(err, dsn))
		}
		p.driver, p.dsn, p.display = "pgx", dsn, u.Redacted()
	default:
		return nil, fmt.Errorf("sql probe: unsupported dsn %q: use sqlite:PATH or postgres://USER@HOST/DB", redactDSN(dsn))
	}
	return p, nil
}

// redactDSN hides a password in something that may be a URL.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}

func redactErr(err error, dsn string) string {
	msg := strings.Join(strings.Fields(err.Error()), " ") // one line
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// connectWhy is why a database could not be reached, on one line: the
// server's own error ("database "app" does not exist (SQLSTATE 3D000)"), not
// pgx's list of every attempt (its sslmode=prefer first tries TLS and says
// "server refused TLS connection" before the real reason), or — pgx reporting
// every address it tried on a line of its own ("failed to connect to
// `user=app database=app`:\n\t127.0.0.1:5432 (localhost): dial error: dial
// tcp …") — the first network error, standing for them all.
func connectWhy(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("cannot look up %s (%s)", dns.Name, dns.Err)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && op.Addr != nil && op.Err != nil {
		return fmt.Errorf("cannot reach %s (%v)", op.Addr, op.Err)
	}
	return err
}

// Name is "sql: " and the query on one line.
func (p *SQLProbe) Name() string { return "sql: " + strings.Join(strings.Fields(p.query), " ") }

// Read runs the query once in a read-only transaction. SQLite files are
// opened afresh for every reading, so a reset that deletes and recreates the
// file is seen, and the handler's writes are never blocked for longer than a
// read. Rows are rendered one per line as `col=value, col=value`, sorted so
// that the value does not depend on row order; a single cell is rendered
// alone (numeric when it is a number); no rows is NoRows.
func (p *SQLProbe) Read(ctx context.Context) (Value, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(p.Timeout, DefaultReadTimeout))
	defer cancel()
	v, err := p.read(ctx)
	if err != nil {
		return Value{}, probeErr(p.Name(), err)
	}
	return v, nil
}

func (p *SQLProbe) read(ctx context.Context) (Value, error) {
	if p.shared == nil && scoped(p.query) {
		return Value{}, errUnscoped
	}
	var db *sql.DB
	if p.driver == "sqlite" {
		if _, err := os.Stat(p.path); err != nil {
			return Value{}, fmt.Errorf("database %s: %w", p.path, errors.Unwrap(err))
		}
		d, err := sql.Open("sqlite", p.dsn)
		if err != nil {
			return Value{}, fmt.Errorf("open %s: %w", p.display, err)
		}
		defer d.Close()
		db = d
	} else {
		d, err := p.pool()
		if err != nil {
			return Value{}, err
		}
		db = d
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: p.driver == "pgx"})
	if err != nil {
		return Value{}, fmt.Errorf("connect %s: %s", p.display, redactErr(connectWhy(err), p.dsn))
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	rows, err := tx.QueryContext(ctx, p.query, p.args...)
	if err != nil {
		return Value{}, errors.New(redactErr(err, p.dsn))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return Value{}, err
	}
	var lines []string
	var single any
	n, held := 0, 0
	for rows.Next() {
		cells := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range cells {
			ptrs[i] = &cells[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return Value{}, fmt.Errorf("read row: %w", err)
		}
		n++
		if n == 1 && len(cols) == 1 {
			single = cells[0]
		}
		parts := make([]string, len(cols))
		for i, c := range cells {
			parts[i] = cols[i] + "=" + renderCell(c)
		}
		lines = append(lines, strings.Join(parts, ", "))
		held += len(lines[len(lines)-1])
		if n > MaxSQLRows || held > MaxSQLText {
			return Value{}, fmt.Errorf("the query returned more than %d rows or %d bytes; a probe reads a count or a few rows: select what the handler changes (an aggregate, a WHERE)", MaxSQLRows, MaxSQLText)
		}
	}
	if err := rows.Err(); err != nil {
		return Value{}, err
	}
	switch {
	case n == 0:
		return Value{Text: NoRows}, nil
	case n == 1 && len(cols) == 1:
		if f, ok := cellNum(single); ok {
			return Value{Text: renderCell(single), Num: f, IsNum: true}, nil
		}
		return Value{Text: renderCell(single)}, nil
	}
	sort.Strings(lines)
	return Value{Text: strings.Join(lines, "\n")}, nil
}

// What one reading of a SQL probe may hold: its rows are kept, rendered,
// to be compared with the next reading. A probe reads a count or a few
// rows; a query selecting a whole table held it all, every reading
// (3,000,000 rows: 415 MiB allocated, 182 MiB held).
const (
	MaxSQLRows = 100_000
	MaxSQLText = 4 << 20
)

func (p *SQLProbe) pool() (*sql.DB, error) {
	if p.shared != nil {
		return p.shared.pool()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		db, err := sql.Open(p.driver, p.dsn)
		if err != nil {
			return nil, fmt.Errorf("open %s: %s", p.display, redactErr(err, p.dsn))
		}
		db.SetMaxOpenConns(4)
		db.SetConnMaxIdleTime(30 * time.Second)
		p.db = db
	}
	return p.db, nil
}

// Close releases the Postgres connection pool.
func (p *SQLProbe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return nil
	}
	err := p.db.Close()
	p.db = nil
	return err
}

func renderCell(c any) string {
	switch v := c.(type) {
	case nil:
		return "NULL"
	case []byte:
		if utf8.Valid(v) {
			return string(v)
		}
		return fmt.Sprintf("x'%x'", v)
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(c)
}

func cellNum(c any) (float64, bool) {
	switch v := c.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case []byte:
		return parseNum(strings.TrimSpace(string(v)))
	case string:
		return parseNum(strings.TrimSpace(v))
	}
	return 0, false
}
