package wallet

import (
	"context"
	"fmt"
	"time"
)

// creditFixed does the work exactly once per event, however copies arrive.
//
// The event id is claimed with INSERT … ON CONFLICT DO NOTHING against a
// unique index, in the same transaction as the credit:
//   - the database, not the handler, decides which copy wins: a concurrent
//     copy's INSERT waits for the winner's transaction and then inserts
//     nothing, so it credits nothing;
//   - the claim and the credit commit together or not at all: if the process
//     dies in between, neither happened and Stripe's retry does the work.
//
// A duplicate is answered 200: for Stripe the event is handled.
func (h *handler) creditFixed(ctx context.Context, ev *event, inv *invoice) (credited bool, err error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	claimed, err := h.db.claim(ctx, tx, ev.ID)
	if err != nil || !claimed {
		return false, err
	}
	if err := h.db.credit(ctx, tx, inv.Customer, inv.AmountPaid); err != nil {
		return false, err
	}
	if h.opts.Variant == Fixed {
		time.Sleep(h.opts.Delay) // other work inside the transaction (0 but in tests)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit %s: %w", ev.ID, err)
	}
	return true, nil
}

// claim records eventID as processed and reports whether this call did it
// (false: another delivery of the same event claimed it first).
func (d *db) claim(ctx context.Context, ex execer, eventID string) (bool, error) {
	res, err := ex.ExecContext(ctx, d.q(`INSERT INTO processed_events (event_id, processed_at) VALUES (?, ?)
		ON CONFLICT (event_id) DO NOTHING`), eventID, time.Now().Unix())
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", eventID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", eventID, err)
	}
	return n == 1, nil
}

// setSubscription stores a subscription's status from a
// customer.subscription.updated or .deleted event, unless the stored state
// comes from a newer event.
//
// Stripe does not deliver events in order: a retried "updated" can arrive
// after "deleted". Comparing the event's created timestamp keeps the newest
// state whatever the arrival order. Two events of the same second cannot be
// ordered by it; then a cancellation wins, since a canceled subscription
// never becomes active again.
func (h *handler) setSubscription(ctx context.Context, ev *event, sub *subscription) (applied bool, err error) {
	// One statement, so the compare and the write are atomic: the upsert
	// only overwrites a row stored from an older event.
	res, err := h.db.ExecContext(ctx, h.db.q(`INSERT INTO subscriptions (id, customer, status, event_created) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, customer = excluded.customer, event_created = excluded.event_created
		WHERE excluded.event_created > subscriptions.event_created
		   OR (excluded.event_created = subscriptions.event_created
		       AND excluded.status = 'canceled' AND subscriptions.status <> 'canceled')`),
		sub.ID, sub.Customer, sub.Status, ev.Created)
	if err != nil {
		return false, fmt.Errorf("store subscription %s: %w", sub.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store subscription %s: %w", sub.ID, err)
	}
	return n == 1, nil
}
