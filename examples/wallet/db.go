package wallet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // Postgres driver "pgx"
	_ "modernc.org/sqlite"             // SQLite driver "sqlite"
)

// db is the wallet's database, SQLite or Postgres. Queries are written with
// ? placeholders and rebound to $1, $2… for Postgres.
type db struct {
	*sql.DB
	postgres bool
}

func openDB(ctx context.Context, dsn, variant string) (*db, error) {
	var d db
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" {
			return nil, fmt.Errorf("dsn %q has no file path (use sqlite:PATH)", dsn)
		}
		// WAL lets readers (and hookreplay's probes) read while a delivery
		// writes; busy_timeout makes concurrent writers wait their turn instead
		// of failing; _txlock=immediate takes the write lock when a transaction
		// begins, so two transactions never deadlock upgrading a read lock.
		// synchronous=NORMAL in WAL mode survives a killed process.
		q := url.Values{}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_txlock", "immediate")
		// '?', '#' and '%' would end or escape the path inside a file: URI.
		esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
		sqldb, err := sql.Open("sqlite", "file:"+esc+"?"+q.Encode())
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		// Keep connections between deliveries: opening one per request
		// would serialise a burst behind connection setup.
		sqldb.SetMaxIdleConns(20)
		d.DB = sqldb
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		sqldb, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		sqldb.SetMaxOpenConns(20)
		sqldb.SetMaxIdleConns(20)
		d.DB, d.postgres = sqldb, true
	case dsn == "":
		return nil, errors.New("no database: set a DSN (sqlite:PATH or postgres://…)")
	default:
		return nil, fmt.Errorf("unsupported dsn %q: use sqlite:PATH or postgres://…", dsn)
	}
	if err := d.migrate(ctx, variant); err != nil {
		d.Close()
		return nil, err
	}
	return &d, nil
}

// migrate creates the tables. Only racy's processed_events lacks the unique
// index on event_id — that missing constraint is its bug.
func (d *db) migrate(ctx context.Context, variant string) error {
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS wallets (
			customer TEXT PRIMARY KEY,
			balance  BIGINT NOT NULL
		)`,
		`CREATE TABLE IF NOT EXISTS processed_events (
			event_id     TEXT NOT NULL,
			processed_at BIGINT NOT NULL
		)`,
		`CREATE TABLE IF NOT EXISTS subscriptions (
			id            TEXT PRIMARY KEY,
			customer      TEXT NOT NULL,
			status        TEXT NOT NULL,
			event_created BIGINT NOT NULL
		)`,
	}
	if variant != Racy {
		stmts = append(stmts, `CREATE UNIQUE INDEX IF NOT EXISTS processed_events_event_id ON processed_events (event_id)`)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, s := range stmts {
		if _, err := d.ExecContext(ctx, s); err != nil {
			if strings.Contains(s, "UNIQUE INDEX") {
				return fmt.Errorf("create tables: processed_events holds duplicate event ids (written by the racy variant?): use one database per variant: %w", err)
			}
			return fmt.Errorf("create tables: %w", err)
		}
	}
	return nil
}

// q rebinds ? placeholders for Postgres.
func (d *db) q(query string) string {
	if !d.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// credit adds amount cents to customer's wallet, creating it on first credit.
// It is one atomic statement: two credits never overwrite each other.
func (d *db) credit(ctx context.Context, ex execer, customer string, amount int64) error {
	_, err := ex.ExecContext(ctx, d.q(`INSERT INTO wallets (customer, balance) VALUES (?, ?)
		ON CONFLICT (customer) DO UPDATE SET balance = wallets.balance + excluded.balance`), customer, amount)
	if err != nil {
		return fmt.Errorf("credit %s: %w", customer, err)
	}
	return nil
}

// balance is customer's balance in cents, 0 when the wallet does not exist yet.
func (d *db) balance(ctx context.Context, customer string) (int64, error) {
	var bal int64
	err := d.QueryRowContext(ctx, d.q(`SELECT balance FROM wallets WHERE customer = ?`), customer).Scan(&bal)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read balance: %w", err)
	}
	return bal, nil
}
