package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// Writer is capture's writer: one connection of its own whose statements
// are prepared once, so that a group commit costs a BEGIN, one bound
// statement per row and a COMMIT — no SQL parsed per delivery. It commits new
// deliveries and answers to earlier ones in the same transaction. A Writer
// is used by one goroutine at a time.
//
// On Postgres the connection can be lost (the server restarts, the network
// drops): the Commit that finds it so fails, and the next one opens a new
// connection, so capture answers 503 while the store cannot commit and
// recovers by itself when it can again.
type Writer struct {
	s                       *Store
	conn                    *sql.Conn
	begin, commit, rollback *sql.Stmt
	insert, respond         stmt
	changed                 stmt // SQLite: total_changes(), checked before COMMIT (trust.go)
	broken                  bool // reconnect before the next Commit
	// pid is the Postgres backend of the last pipelined commit: after a
	// lost connection, the commit is resolved once it is done (pglost.go).
	pid uint32
}

// NewWriter opens a Writer on its own connection of s's pool. Close it
// before the store.
func (s *Store) NewWriter(ctx context.Context) (*Writer, error) {
	w := &Writer{s: s}
	if err := w.open(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store writer: %w", err)
	}
	return w, nil
}

// open takes a connection and prepares the Writer's statements on it.
func (w *Writer) open(ctx context.Context) error {
	d := w.s.db.d
	c, err := w.s.db.Conn(ctx)
	if err != nil {
		if w.s.pg != nil { // one line, as Open words it: "cannot connect to HOST:PORT: connect: connection refused"
			return errors.New(d.redact(connectErr(w.s.pg, err)))
		}
		return err
	}
	w.conn = c
	w.insert.d, w.respond.d, w.changed.d = d, d, d
	stmts := []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.begin, d.begin()}, {&w.commit, "COMMIT"}, {&w.rollback, "ROLLBACK"},
		{&w.insert.Stmt, insertDeliverySQL}, {&w.respond.Stmt, setResponseSQL},
	}
	if w.s.pg == nil {
		stmts = append(stmts, struct {
			stmt **sql.Stmt
			sql  string
		}{&w.changed.Stmt, "SELECT total_changes()"})
	}
	for _, p := range stmts {
		if *p.stmt, err = c.PrepareContext(ctx, d.rebind(p.sql)); err != nil {
			return err
		}
	}
	return nil
}

// reopen replaces a connection found broken.
func (w *Writer) reopen(ctx context.Context) error {
	_ = w.release()
	if err := w.open(ctx); err != nil {
		_ = w.release()
		return err
	}
	w.broken = false
	return nil
}

// Commit stores ds (setting each one's ID, and ReceivedAt when zero) and
// records rs, all in one transaction: all of it is durable when Commit
// returns nil, none of it otherwise.
func (w *Writer) Commit(ctx context.Context, ds []*Delivery, rs []Response) (err error) {
	if len(ds) == 0 && len(rs) == 0 {
		return nil
	}
	if w.broken || w.conn == nil {
		if err := w.reopen(ctx); err != nil {
			return fmt.Errorf("store deliveries: %s", w.s.db.d.redact(err.Error()))
		}
	}
	ids := make([]int64, len(ds))
	recvs := make([]time.Time, len(ds))
	if w.s.pg != nil {
		if err := w.commitPipelined(ctx, ds, rs, ids, recvs); err != nil {
			if !w.committedAnyway(ctx, ds, recvs, ids) {
				return fmt.Errorf("store deliveries: %w", err)
			}
		}
	} else if err := w.commitSQLite(ctx, ds, rs, ids, recvs); err != nil {
		return err
	}
	for i, d := range ds {
		d.ID, d.ReceivedAt = ids[i], recvs[i]
		if d.Provider == "" {
			d.Provider = verify.Generic
		}
		if d.Proto == "" {
			d.Proto = "HTTP/1.1"
		}
	}
	return nil
}

// commitSQLite runs the transaction statement by statement: a statement is
// a function call into SQLite, not a round trip.
func (w *Writer) commitSQLite(ctx context.Context, ds []*Delivery, rs []Response, ids []int64, recvs []time.Time) (err error) {
	if _, err := w.begin.ExecContext(ctx); err != nil {
		return fmt.Errorf("store deliveries: %w", err)
	}
	defer func() {
		if err != nil {
			// A failed COMMIT (or statement) may leave the transaction open.
			if _, rerr := w.rollback.ExecContext(context.Background()); rerr != nil {
				w.lost()
			}
		}
	}()
	start, err := w.changes(ctx)
	if err != nil {
		return fmt.Errorf("store deliveries: %w", err)
	}
	for i, d := range ds {
		if ids[i], recvs[i], err = insertWith(ctx, w.insert, d); err != nil {
			return fmt.Errorf("store delivery: %w", err)
		}
	}
	written := int64(len(ds))
	for _, r := range rs {
		res, err := w.respond.ExecContext(ctx, responseArgs(r)...)
		if err != nil {
			return fmt.Errorf("record response of delivery %d: %w", r.ID, err)
		}
		// 0 when the delivery was deleted meanwhile (the TUI, prune).
		n, _ := res.RowsAffected()
		written += n
	}
	if err := w.verifyBatch(ctx, start, written); err != nil {
		return fmt.Errorf("store deliveries: %w", err)
	}
	if _, err := w.commit.ExecContext(ctx); err != nil {
		return fmt.Errorf("store deliveries: %w", err)
	}
	return nil
}

// commitPipelined sends the whole transaction to Postgres at once (pgx's
// pipeline: BEGIN, the inserts, the answers, COMMIT) and reads the results:
// one round trip per group commit instead of one per row. After an error
// the transaction is rolled back; a connection that cannot do even that is
// replaced before the next Commit.
func (w *Writer) commitPipelined(ctx context.Context, ds []*Delivery, rs []Response, ids []int64, recvs []time.Time) error {
	d := w.s.db.d
	ran := false
	err := w.conn.Raw(func(dc any) error {
		ran = true
		c := dc.(*stdlib.Conn).Conn()
		w.pid = c.PgConn().PID()
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue(pgMarkSQL)
		for i, dl := range ds {
			recvs[i] = receivedAt(dl)
		}
		multi := distinctArrivals(recvs) // pgbatch.go
		if multi {
			queueInserts(b, d, ds, recvs)
		} else {
			for i, dl := range ds {
				b.Queue(d.rebind(insertDeliverySQL), d.args(deliveryArgs(dl, recvs[i]))...)
			}
		}
		for _, r := range rs {
			b.Queue(d.rebind(setResponseSQL), d.args(responseArgs(r))...)
		}
		// Before COMMIT, holding the inserts' lock: nothing but
		// hookreplay's own acted on these rows (pgtrust.go).
		b.Queue(pgGuardSQL(), len(ds), len(rs))
		b.Queue("COMMIT")
		br := c.SendBatch(ctx, b)
		_, err := br.Exec()
		if err == nil {
			_, err = br.Exec() // pgMarkSQL
		}
		if err == nil && multi && len(ds) > 0 {
			if err = readInserts(br, ds, recvs, ids); err != nil {
				err = fmt.Errorf("store delivery: %w", err)
			}
		}
		for i := range ds {
			if err == nil && !multi {
				if err = br.QueryRow().Scan(&ids[i]); err != nil {
					err = fmt.Errorf("store delivery: %w", err)
				}
			}
		}
		for _, r := range rs {
			if err == nil {
				if _, err = br.Exec(); err != nil {
					err = fmt.Errorf("record response of delivery %d: %w", r.ID, err)
				}
			}
		}
		if err == nil {
			if _, err = br.Exec(); err != nil {
				err = guardErr(err)
			}
		}
		if err == nil {
			_, err = br.Exec()
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil && !c.IsClosed() {
			if _, rerr := c.Exec(context.Background(), "ROLLBACK"); rerr != nil {
				w.broken = true
			}
		}
		if c.IsClosed() {
			w.broken = true
		}
		return err
	})
	if err != nil && !ran { // the connection was gone before the batch
		w.lost()
	}
	return err
}

// lost marks the connection for replacement when it is a Postgres one: a
// SQLite connection is a file handle, never lost, and its errors (busy, a
// full disk) are the statement's, not the connection's.
func (w *Writer) lost() {
	if w.s.pg != nil {
		w.broken = true
	}
}

// release closes the Writer's statements and connection.
func (w *Writer) release() error {
	var errs []error
	for _, st := range []**sql.Stmt{&w.begin, &w.commit, &w.rollback, &w.insert.Stmt, &w.respond.Stmt, &w.changed.Stmt} {
		if *st != nil {
			errs = append(errs, (*st).Close())
			*st = nil
		}
	}
	if w.conn != nil {
		errs = append(errs, w.conn.Close())
		w.conn = nil
	}
	return errors.Join(errs...)
}

// Close releases the Writer's statements and connection.
func (w *Writer) Close() error {
	if w.broken {
		_ = w.release() // a lost connection fails to close: nothing to report
		return nil
	}
	return w.release()
}
