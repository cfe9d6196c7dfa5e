package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Run is one `replay` or `check` invocation.
type Run struct {
	ID         int64
	Kind       string // "replay" or "check"
	StartedAt  time.Time
	FinishedAt time.Time // zero while running (or when the process died)
	Target     string
	Seed       int64
	Options    map[string]any // never secrets
	Verdict    string
	Summary    json.RawMessage
}

// Attempt is one copy sent during a run.
type Attempt struct {
	ID              int64           `json:"id"`
	RunID           int64           `json:"run_id"`
	DeliveryID      int64           `json:"delivery_id"`
	Phase           string          `json:"phase"`
	Copy            int             `json:"copy"`
	ConnID          int64           `json:"conn_id"`
	EventID         string          `json:"event_id"`
	SentAt          time.Time       `json:"sent_at"`      // first request byte written
	CompletedAt     time.Time       `json:"completed_at"` // last request byte written
	Status          int             `json:"status"`       // 0 when no answer
	ResponseHeaders message.Headers `json:"response_headers"`
	ResponseBody    []byte          `json:"response_body"` // bounded by the engine
	Latency         time.Duration   `json:"latency_ns"`    // last byte written → response headers read
	Err             string          `json:"error,omitempty"`
	Lost            bool            `json:"lost,omitempty"` // response deliberately not read
	Edit            string          `json:"edit,omitempty"`
	StandsFor       time.Duration   `json:"stands_for_ns,omitempty"` // real time on the provider's schedule
	Detail          map[string]any  `json:"detail,omitempty"`
}

// Detail keys of the copy a check's crash phase killed the handler
// handling: when SIGKILL was sent, and when the handler listened again
// after its restart, each RFC 3339 with nanoseconds (a JSON number would
// round them). A run's timeline draws them.
const (
	DetailKilledAt    = "killed_at"
	DetailRestartedAt = "restarted_at"
)

// CreateRun inserts r and sets r.ID.
func (s *Store) CreateRun(ctx context.Context, r *Run) error {
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Now()
	}
	opts, err := json.Marshal(r.Options)
	if err != nil || r.Options == nil {
		opts = []byte("{}")
	}
	if err := s.db.QueryRowContext(ctx, `INSERT INTO runs (kind, started_at, target, seed, options) VALUES (?,?,?,?,?) RETURNING id`,
		r.Kind, r.StartedAt.UnixNano(), r.Target, r.Seed, string(opts)).Scan(&r.ID); err != nil {
		return s.writeFailed("create run", err)
	}
	return nil
}

// FinishRun records the end of run id with its verdict and a JSON summary.
func (s *Store) FinishRun(ctx context.Context, id int64, finished time.Time, verdict string, summary any) error {
	sum, err := json.Marshal(summary)
	if err != nil || summary == nil {
		sum = []byte("{}")
	}
	_, err = s.db.ExecContext(ctx, `UPDATE runs SET finished_at=?, verdict=?, summary=? WHERE id=?`,
		finished.UnixNano(), verdict, string(sum), id)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", id, err)
	}
	return nil
}

// insertAttemptSQL inserts one attempt and returns its id.
const insertAttemptSQL = `INSERT INTO attempts (run_id, delivery_id, phase, copy, conn_id, event_id,
	sent_at, completed_at, status, response_headers, response_body, latency_ns, error, lost, edit,
	stands_for_ns, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`

// InsertAttempt records a and sets a.ID.
func (s *Store) InsertAttempt(ctx context.Context, a *Attempt) error {
	hdrs, _ := json.Marshal(nonNilHeaders(a.ResponseHeaders))
	detail, err := json.Marshal(a.Detail)
	if err != nil || a.Detail == nil {
		detail = []byte("{}")
	}
	if err := s.db.QueryRowContext(ctx, insertAttemptSQL,
		a.RunID, a.DeliveryID, a.Phase, a.Copy, a.ConnID, a.EventID, unixNano(a.SentAt), unixNano(a.CompletedAt),
		a.Status, string(hdrs), a.ResponseBody, a.Latency.Nanoseconds(), a.Err, a.Lost, a.Edit,
		a.StandsFor.Nanoseconds(), string(detail)).Scan(&a.ID); err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	return nil
}

// GetRun returns run id, or an error wrapping ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id int64) (*Run, error) {
	row := s.db.QueryRowContext(ctx, `SELECT id, kind, started_at, finished_at, target, seed, options, verdict, summary FROM runs WHERE id=?`, id)
	r, err := scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no run %d: %w", id, ErrNotFound)
	}
	return r, err
}

// ListRuns returns runs newest first; kind "" means any kind, limit 0 no limit.
func (s *Store) ListRuns(ctx context.Context, kind string, limit int) ([]*Run, error) {
	q := `SELECT id, kind, started_at, finished_at, target, seed, options, verdict, summary FROM runs`
	var args []any
	if kind != "" {
		q += ` WHERE kind=?`
		args = append(args, kind)
	}
	q += ` ORDER BY id DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

const attemptCols = `id, run_id, delivery_id, phase, copy, conn_id, event_id, sent_at,
	completed_at, status, response_headers, response_body, latency_ns, error, lost, edit, stands_for_ns, detail`

// ListAttempts returns run id's attempts in the order they were recorded.
func (s *Store) ListAttempts(ctx context.Context, runID int64) ([]*Attempt, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+attemptCols+` FROM attempts WHERE run_id=? ORDER BY id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list attempts of run %d: %w", runID, err)
	}
	return scanAttempts(rows)
}

// scanAttempts reads and closes rows of attemptCols.
func scanAttempts(rows *sql.Rows) ([]*Attempt, error) {
	defer rows.Close()
	var out []*Attempt
	for rows.Next() {
		var a Attempt
		var sent, done, lat, stands int64
		var hdrs, detail string
		if err := rows.Scan(&a.ID, &a.RunID, &a.DeliveryID, &a.Phase, &a.Copy, &a.ConnID, &a.EventID, &sent, &done,
			&a.Status, &hdrs, &a.ResponseBody, &lat, &a.Err, &a.Lost, &a.Edit, &stands, &detail); err != nil {
			return nil, fmt.Errorf("read attempt: %w", err)
		}
		a.SentAt, a.CompletedAt = fromUnixNano(sent), fromUnixNano(done)
		a.Latency, a.StandsFor = time.Duration(lat), time.Duration(stands)
		_ = json.Unmarshal([]byte(hdrs), &a.ResponseHeaders)
		_ = json.Unmarshal([]byte(detail), &a.Detail)
		out = append(out, &a)
	}
	return out, rows.Err()
}

func scanRun(r scanner) (*Run, error) {
	var run Run
	var started, finished int64
	var opts, summary string
	if err := r.Scan(&run.ID, &run.Kind, &started, &finished, &run.Target, &run.Seed, &opts, &run.Verdict, &summary); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("read run: %w", err)
	}
	run.StartedAt, run.FinishedAt = fromUnixNano(started), fromUnixNano(finished)
	_ = json.Unmarshal([]byte(opts), &run.Options)
	run.Summary = json.RawMessage(summary)
	return &run, nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// InsertAttempts records as in one transaction (one commit for many copies,
// which a fast replay needs) and sets each ID.
func (s *Store) InsertAttempts(ctx context.Context, as []*Attempt) error {
	if len(as) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, insertAttemptSQL)
	if err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	defer stmt.Close()
	for _, a := range as {
		hdrs, _ := json.Marshal(nonNilHeaders(a.ResponseHeaders))
		detail, err := json.Marshal(a.Detail)
		if err != nil || a.Detail == nil {
			detail = []byte("{}")
		}
		if err := stmt.QueryRowContext(ctx, a.RunID, a.DeliveryID, a.Phase, a.Copy, a.ConnID, a.EventID, unixNano(a.SentAt),
			unixNano(a.CompletedAt), a.Status, string(hdrs), a.ResponseBody, a.Latency.Nanoseconds(), a.Err, a.Lost, a.Edit,
			a.StandsFor.Nanoseconds(), string(detail)).Scan(&a.ID); err != nil {
			return fmt.Errorf("record attempt: %w", s.db.d.lost(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	return nil
}

// CountAttempts returns how many attempts run id recorded (an index count:
// the attempts themselves are not read).
func (s *Store) CountAttempts(ctx context.Context, id int64) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM attempts WHERE run_id=?`, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("count attempts of run %d: %w", id, err)
	}
	return n, nil
}

// AttemptCounts returns how many attempts each run recorded, by run id.
func (s *Store) AttemptCounts(ctx context.Context) (map[int64]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT run_id, count(*) FROM attempts GROUP BY run_id`)
	if err != nil {
		return nil, fmt.Errorf("count attempts: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("count attempts: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}
