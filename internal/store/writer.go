package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// Writer is capture's writer: one connection of its own whose statements
// are prepared once, so that a group commit costs a BEGIN, one bound
// statement per row and a COMMIT — no SQL parsed per delivery. It commits new
// deliveries and answers to earlier ones in the same transaction. A Writer
// is used by one goroutine at a time.
type Writer struct {
	conn                                     *sql.Conn
	begin, commit, rollback, insert, respond *sql.Stmt
}

// NewWriter opens a Writer on its own connection of s's pool. Close it
// before the store.
func (s *Store) NewWriter(ctx context.Context) (*Writer, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open store writer: %w", err)
	}
	w := &Writer{conn: conn}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.begin, "BEGIN IMMEDIATE"}, {&w.commit, "COMMIT"}, {&w.rollback, "ROLLBACK"},
		{&w.insert, insertDeliverySQL}, {&w.respond, setResponseSQL},
	} {
		if *p.stmt, err = conn.PrepareContext(ctx, p.sql); err != nil {
			w.Close()
			return nil, fmt.Errorf("open store writer: %w", err)
		}
	}
	return w, nil
}

// Commit stores ds (setting each one's ID, and ReceivedAt when zero) and
// records rs, all in one transaction: all of it is durable when Commit
// returns nil, none of it otherwise.
func (w *Writer) Commit(ctx context.Context, ds []*Delivery, rs []Response) (err error) {
	if len(ds) == 0 && len(rs) == 0 {
		return nil
	}
	if _, err := w.begin.ExecContext(ctx); err != nil {
		return fmt.Errorf("store deliveries: %w", err)
	}
	defer func() {
		if err != nil {
			// A failed COMMIT (or statement) may leave the transaction open.
			_, _ = w.rollback.ExecContext(context.Background())
		}
	}()
	ids := make([]int64, len(ds))
	recvs := make([]time.Time, len(ds))
	for i, d := range ds {
		if ids[i], recvs[i], err = insertWith(ctx, w.insert, d); err != nil {
			return fmt.Errorf("store delivery: %w", err)
		}
	}
	for _, r := range rs {
		if _, err := w.respond.ExecContext(ctx, responseArgs(r)...); err != nil {
			return fmt.Errorf("record response of delivery %d: %w", r.ID, err)
		}
	}
	if _, err := w.commit.ExecContext(ctx); err != nil {
		return fmt.Errorf("store deliveries: %w", err)
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

// Close releases the Writer's statements and connection.
func (w *Writer) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{w.begin, w.commit, w.rollback, w.insert, w.respond} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	errs = append(errs, w.conn.Close())
	return errors.Join(errs...)
}
