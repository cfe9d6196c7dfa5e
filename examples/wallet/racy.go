package wallet

import (
	"context"
	"fmt"
	"time"
)

// creditRacy is the usual first fix: remember processed event ids and skip
// the ones seen before.
//
// BUG: the check (SELECT) and the record (INSERT) are two steps with nothing
// tying them together, and processed_events has no unique constraint. Sent
// one after another, duplicates are skipped, so resending by hand finds
// nothing wrong. But copies that arrive together — Stripe's retry crossing a
// slow first attempt, or two workers picking up the same event — all run the
// SELECT before any of them has run the INSERT, all see "not processed", and
// all credit. RaceWindow stands for the real work a handler does between the
// two (loading the customer, calling an API); the wider it is, the likelier.
func (h *handler) creditRacy(ctx context.Context, ev *event, inv *invoice) (credited bool, err error) {
	var seen int
	if err := h.db.QueryRowContext(ctx, h.db.q(`SELECT COUNT(*) FROM processed_events WHERE event_id = ?`), ev.ID).Scan(&seen); err != nil {
		return false, fmt.Errorf("check %s: %w", ev.ID, err)
	}
	if seen > 0 {
		return false, nil
	}

	time.Sleep(h.opts.RaceWindow) // other work: the window in which a second copy passes the check too

	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, h.db.q(`INSERT INTO processed_events (event_id, processed_at) VALUES (?, ?)`), ev.ID, time.Now().Unix()); err != nil {
		return false, fmt.Errorf("record %s: %w", ev.ID, err)
	}
	if err := h.db.credit(ctx, tx, inv.Customer, inv.AmountPaid); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
