package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// ProbeReading is one value a side-effect probe returned during a check run.
type ProbeReading struct {
	ID         int64     `json:"id"`
	RunID      int64     `json:"run_id"`
	DeliveryID int64     `json:"delivery_id"`
	Phase      string    `json:"phase"`
	Point      string    `json:"point"` // "before", "after", "after copy 3", ...
	Probe      string    `json:"probe"`
	Value      string    `json:"value"`
	Numeric    *float64  `json:"numeric,omitempty"` // nil when the value is not a number
	ReadAt     time.Time `json:"read_at"`
	// SettleFrom is when the reading began waiting for the probes to hold
	// still (zero: not recorded); ChangedAt when a probe last changed while
	// it waited (zero: none did). With ReadAt they are its settle window.
	SettleFrom time.Time `json:"settle_from,omitzero"`
	ChangedAt  time.Time `json:"changed_at,omitzero"`
}

// VerdictRow is the stored judgement of one phase of one delivery.
type VerdictRow struct {
	ID         int64           `json:"id"`
	RunID      int64           `json:"run_id"`
	DeliveryID int64           `json:"delivery_id"`
	Phase      string          `json:"phase"`
	Status     string          `json:"status"` // pass|fail|warn|skip|inconclusive|notjudged
	Message    string          `json:"message"`
	Detail     json.RawMessage `json:"detail"`
}

// EffectRow is one call the check's stand-in downstream API (the sink) received.
type EffectRow struct {
	ID         int64     `json:"id"`
	RunID      int64     `json:"run_id"`
	DeliveryID int64     `json:"delivery_id"`
	Phase      string    `json:"phase"`
	At         time.Time `json:"at"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	Body       []byte    `json:"body"`
}

// InsertProbeReading records r and sets r.ID.
func (s *Store) InsertProbeReading(ctx context.Context, r *ProbeReading) error {
	var num sql.NullFloat64
	if r.Numeric != nil {
		num = sql.NullFloat64{Float64: *r.Numeric, Valid: true}
	}
	if r.ReadAt.IsZero() {
		r.ReadAt = time.Now()
	}
	if err := s.db.QueryRowContext(ctx, `INSERT INTO probe_readings (run_id, delivery_id, phase, point, probe, value,
		numeric, read_at, settle_from, changed_at) VALUES (?,?,?,?,?,?,?,?,?,?) RETURNING id`, r.RunID, r.DeliveryID, r.Phase, r.Point, r.Probe, r.Value,
		num, r.ReadAt.UnixNano(), unixNano(r.SettleFrom), unixNano(r.ChangedAt)).Scan(&r.ID); err != nil {
		return fmt.Errorf("record probe reading: %w", err)
	}
	return nil
}

// ListProbeReadings returns run id's probe readings in the order they were taken.
func (s *Store) ListProbeReadings(ctx context.Context, runID int64) ([]*ProbeReading, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, run_id, delivery_id, phase, point, probe, value, numeric, read_at,
		settle_from, changed_at FROM probe_readings WHERE run_id=? ORDER BY id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list probe readings of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []*ProbeReading
	for rows.Next() {
		var r ProbeReading
		var num sql.NullFloat64
		var at, from, changed int64
		if err := rows.Scan(&r.ID, &r.RunID, &r.DeliveryID, &r.Phase, &r.Point, &r.Probe, &r.Value, &num, &at, &from, &changed); err != nil {
			return nil, fmt.Errorf("read probe reading: %w", err)
		}
		if num.Valid {
			v := num.Float64
			r.Numeric = &v
		}
		r.ReadAt, r.SettleFrom, r.ChangedAt = fromUnixNano(at), fromUnixNano(from), fromUnixNano(changed)
		out = append(out, &r)
	}
	return out, rows.Err()
}

// InsertVerdict records v and sets v.ID.
func (s *Store) InsertVerdict(ctx context.Context, v *VerdictRow) error {
	detail := v.Detail
	if len(detail) == 0 {
		detail = json.RawMessage("{}")
	}
	if err := s.db.QueryRowContext(ctx, `INSERT INTO verdicts (run_id, delivery_id, phase, status, message, detail)
		VALUES (?,?,?,?,?,?) RETURNING id`, v.RunID, v.DeliveryID, v.Phase, v.Status, v.Message, string(detail)).Scan(&v.ID); err != nil {
		return fmt.Errorf("record verdict: %w", err)
	}
	return nil
}

// ListVerdicts returns run id's verdicts in the order they were recorded.
func (s *Store) ListVerdicts(ctx context.Context, runID int64) ([]*VerdictRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, run_id, delivery_id, phase, status, message, detail
		FROM verdicts WHERE run_id=? ORDER BY id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list verdicts of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []*VerdictRow
	for rows.Next() {
		var v VerdictRow
		var detail string
		if err := rows.Scan(&v.ID, &v.RunID, &v.DeliveryID, &v.Phase, &v.Status, &v.Message, &detail); err != nil {
			return nil, fmt.Errorf("read verdict: %w", err)
		}
		v.Detail = json.RawMessage(detail)
		out = append(out, &v)
	}
	return out, rows.Err()
}

// InsertEffect records e and sets e.ID.
func (s *Store) InsertEffect(ctx context.Context, e *EffectRow) error {
	body := e.Body
	if body == nil {
		body = []byte{}
	}
	if err := s.db.QueryRowContext(ctx, `INSERT INTO effects (run_id, delivery_id, phase, at, method, path, body)
		VALUES (?,?,?,?,?,?,?) RETURNING id`, e.RunID, e.DeliveryID, e.Phase, unixNano(e.At), e.Method, e.Path, body).Scan(&e.ID); err != nil {
		return fmt.Errorf("record effect: %w", err)
	}
	return nil
}

// ListEffects returns run id's sink calls in the order they were recorded.
func (s *Store) ListEffects(ctx context.Context, runID int64) ([]*EffectRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, run_id, delivery_id, phase, at, method, path, body
		FROM effects WHERE run_id=? ORDER BY id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list effects of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []*EffectRow
	for rows.Next() {
		var e EffectRow
		var at int64
		if err := rows.Scan(&e.ID, &e.RunID, &e.DeliveryID, &e.Phase, &at, &e.Method, &e.Path, &e.Body); err != nil {
			return nil, fmt.Errorf("read effect: %w", err)
		}
		e.At = fromUnixNano(at)
		out = append(out, &e)
	}
	return out, rows.Err()
}
