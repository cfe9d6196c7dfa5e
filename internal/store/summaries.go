package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// DeliverySummary is a delivery without its bytes: what a list shows. Reading
// summaries never loads bodies, so a page of a large store stays cheap.
type DeliverySummary struct {
	ID             int64
	ReceivedAt     time.Time
	Source         string
	RemoteAddr     string
	Provider       string
	EventID        string
	EventType      string
	Identity       map[string]string
	Method         string
	Target         string
	BodySize       int
	RawSize        int
	Verification   string
	ResponseStatus int
	Latency        time.Duration
	ForwardError   string
	Origin         string
	DerivedFrom    int64 // the delivery this one is an edited copy of (0: none)
}

// Page is a keyset page of summaries, newest first: at most Limit rows with
// an id below Before (0: from the newest); with After set, the Limit rows just
// above After; with Oldest, the Limit oldest rows. Rows are returned newest
// first in every case.
type Page struct {
	Before int64
	After  int64
	Oldest bool
	Limit  int
}

const summaryCols = `id, received_at, source, remote_addr, provider, event_id, event_type, identity,
	method, target, ` + bodyLenExpr + `, length(raw_request), verification, response_status, latency_ns,
	forward_error, origin, derived_from`

// ListSummaries returns one page of the deliveries matching f (f.Limit and
// f.Oldest are ignored; p decides), newest first.
func (s *Store) ListSummaries(ctx context.Context, f Filter, p Page) ([]DeliverySummary, error) {
	var out []DeliverySummary
	err := s.EachSummary(ctx, f, p, func(d DeliverySummary) error {
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.After > 0 || p.Oldest {
		slices.Reverse(out)
	}
	return out, nil
}

// EachSummary calls fn with each summary of the page ListSummaries returns,
// one row at a time, so a whole store (p.Limit 0) is walked in constant
// memory. The order is the query's: newest first, except oldest first with
// p.After or p.Oldest (ListSummaries turns those around). An error from fn
// stops the walk and is returned.
func (s *Store) EachSummary(ctx context.Context, f Filter, p Page, fn func(DeliverySummary) error) error {
	where, args := f.where(s.db.d)
	order := "DESC"
	switch {
	case p.After > 0:
		where = and(where, "id > ?")
		args = append(args, p.After)
		order = "ASC"
	case p.Oldest:
		order = "ASC"
	case p.Before > 0:
		where = and(where, "id < ?")
		args = append(args, p.Before)
	}
	q := `SELECT ` + summaryCols + `, ` + s.db.d.requestLine() + ` FROM deliveries`
	if where != "" {
		q += " WHERE " + where
	}
	q += " ORDER BY id " + order
	if p.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", p.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, append(s.db.d.oneShot(), args...)...)
	if err != nil {
		return fmt.Errorf("list deliveries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d DeliverySummary
		var recv, lat int64
		var ident, line []byte
		if err := rows.Scan(&d.ID, &recv, &d.Source, &d.RemoteAddr, &d.Provider, &d.EventID, &d.EventType, &ident,
			&d.Method, &d.Target, &d.BodySize, &d.RawSize, &d.Verification, &d.ResponseStatus, &lat,
			&d.ForwardError, &d.Origin, &d.DerivedFrom, &line); err != nil {
			return fmt.Errorf("read delivery: %w", err)
		}
		if line != nil {
			d.Target = exactTarget(d.Target, line)
		}
		d.ReceivedAt = time.Unix(0, recv)
		d.Latency = time.Duration(lat)
		if len(ident) > 2 { // "{}" is the common case: no map to decode
			_ = json.Unmarshal(ident, &d.Identity)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list deliveries: %w", err)
	}
	return nil
}

// Summary returns d without its bytes, as EachSummary reads it.
func (d *Delivery) Summary() DeliverySummary {
	return DeliverySummary{ID: d.ID, ReceivedAt: d.ReceivedAt, Source: d.Source, RemoteAddr: d.RemoteAddr,
		Provider: d.Provider, EventID: d.EventID, EventType: d.EventType, Identity: d.Identity, Method: d.Method,
		Target: d.Target, BodySize: len(d.Body), RawSize: len(d.Raw), Verification: d.Verification,
		ResponseStatus: d.ResponseStatus, Latency: d.Latency, ForwardError: d.ForwardError, Origin: d.Origin,
		DerivedFrom: d.DerivedFrom}
}

// CountDeliveries returns how many deliveries match f (f.Limit ignored).
func (s *Store) CountDeliveries(ctx context.Context, f Filter) (int, error) {
	where, args := f.where(s.db.d)
	q := `SELECT count(*) FROM deliveries`
	if where != "" {
		q += " WHERE " + where
	}
	var n int
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count deliveries: %w", err)
	}
	return n, nil
}

// CountBefore returns how many deliveries matching f are newer than id: the
// position of id in a newest-first list.
func (s *Store) CountBefore(ctx context.Context, f Filter, id int64) (int, error) {
	where, args := f.where(s.db.d)
	where = and(where, "id > ?")
	args = append(args, id)
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM deliveries WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count deliveries: %w", err)
	}
	return n, nil
}

// CountNewer returns how many deliveries matching f are newer than id (all
// of them for id 0) and the newest one's id (id itself when none is), in one
// statement, so that the two agree. Past the newest of a count, a range of
// the primary key: the TUI adds what came since to a count instead of
// counting every match again.
func (s *Store) CountNewer(ctx context.Context, f Filter, id int64) (n int, newest int64, err error) {
	where, args := f.where(s.db.d)
	where = and(where, "id > ?")
	args = append([]any{id}, append(args, id)...)
	q := `SELECT count(*), COALESCE(max(id), ?) FROM deliveries WHERE ` + where
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n, &newest); err != nil {
		return 0, 0, fmt.Errorf("count deliveries: %w", err)
	}
	return n, newest, nil
}

func and(where, cond string) string {
	if where == "" {
		return cond
	}
	return where + " AND " + cond
}

// DeliveryAttempts returns the attempts that sent delivery id, in any run,
// newest first, at most limit (0: all).
func (s *Store) DeliveryAttempts(ctx context.Context, id int64, limit int) ([]*Attempt, error) {
	q := `SELECT ` + attemptCols + ` FROM attempts WHERE delivery_id=? ORDER BY id DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.QueryContext(ctx, q, id)
	if err != nil {
		return nil, fmt.Errorf("list attempts of delivery %d: %w", id, err)
	}
	return scanAttempts(rows)
}

// Watcher tells cheaply whether the store changed, also by another process
// (a capture running in another terminal, or on another machine). On SQLite
// it holds one connection and reads PRAGMA data_version, which changes when
// another connection commits; on Postgres it LISTENs on its own connection
// and counts the notifications the tables' triggers send at each commit, so
// Version costs no query there.
type Watcher struct {
	conn *sql.Conn // SQLite
	pg   *pgWatch  // Postgres
}

// sqlitePoll is how often Wait reads SQLite's data_version.
const sqlitePoll = 100 * time.Millisecond

// Watch returns a Watcher; the caller closes it.
func (s *Store) Watch(ctx context.Context) (*Watcher, error) {
	if s.pg != nil {
		w, err := s.watchPostgres(ctx)
		if err != nil {
			return nil, err
		}
		return &Watcher{pg: w}, nil
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch database: %w", err)
	}
	return &Watcher{conn: c}, nil
}

// Version returns the current data version; it differs from the previous
// call's once anyone else committed. On Postgres the error says the
// watcher's connection is lost (it reconnects by itself, and the version
// moves when it is back).
func (w *Watcher) Version(ctx context.Context) (int64, error) {
	if w.pg != nil {
		v, _, err := w.pg.version()
		return v, err
	}
	var v int64
	if err := w.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("watch database: %w", err)
	}
	return v, nil
}

// Wait returns the data version as soon as it differs from since (a value
// Version or Wait returned), or ctx's error when ctx ends first. On
// Postgres it wakes on the notification itself; on SQLite it reads
// data_version every 100 ms.
func (w *Watcher) Wait(ctx context.Context, since int64) (int64, error) {
	for {
		if w.pg != nil {
			v, wake, _ := w.pg.version()
			if v != since {
				return v, nil
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-wake:
			}
			continue
		}
		v, err := w.Version(ctx)
		if err != nil {
			return 0, err
		}
		if v != since {
			return v, nil
		}
		t := time.NewTimer(sqlitePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// Close releases the watcher's connection.
func (w *Watcher) Close() error {
	if w.pg != nil {
		return w.pg.close()
	}
	return w.conn.Close()
}
