package wallet

// Variants for hookreplay's own tests. Each one is the fixed handler with
// exactly one bug that one `hookreplay check` phase must catch, except async,
// which is correct and must not be flagged. The bugs of conflict, nosig and
// slow live where they happen, in ServeHTTP and handle (wallet.go), marked
// "BUG (variant)"; claimfirst, workfirst and lastwrite are below.

import (
	"context"
	"fmt"
	"time"
)

// creditClaimFirst (variant claimfirst) claims the event, commits the claim,
// and only then credits, in a second transaction.
//
// BUG: caught by the crash phase. Duplicates and bursts are handled right —
// the claim is unique — but if the process dies between the two commits
// (a deploy, an OOM kill; Delay widens the gap) the event is marked processed
// and never credited: Stripe's retry finds the claim and does nothing. The
// claim must commit with the work (creditFixed), or a stuck claim must expire.
func (h *handler) creditClaimFirst(ctx context.Context, ev *event, inv *invoice) (credited bool, err error) {
	claimed, err := h.db.claim(ctx, h.db, ev.ID) // commits on its own
	if err != nil || !claimed {
		return false, err
	}
	time.Sleep(h.opts.Delay) // other work between the claim and the credit
	if err := h.db.credit(ctx, h.db, inv.Customer, inv.AmountPaid); err != nil {
		return false, fmt.Errorf("credit after claiming %s: %w", ev.ID, err)
	}
	return true, nil
}

// creditWorkFirst (variant workfirst) checks that the event is not yet
// processed, credits in one transaction and records the event id in a
// second one.
//
// BUG: caught by the crash phase. Duplicates that arrive after the handling
// are seen (the id is recorded by then), but if the process dies between the
// two commits (Delay widens the gap: a receipt sent, a log written) the
// credit is kept and the id is not: Stripe, which got no answer, retries,
// and the retry credits again. The record must commit with the work.
func (h *handler) creditWorkFirst(ctx context.Context, ev *event, inv *invoice) (credited bool, err error) {
	var seen int
	if err := h.db.QueryRowContext(ctx, h.db.q(`SELECT COUNT(*) FROM processed_events WHERE event_id = ?`), ev.ID).Scan(&seen); err != nil {
		return false, fmt.Errorf("look up %s: %w", ev.ID, err)
	}
	if seen > 0 {
		return false, nil
	}
	if err := h.db.credit(ctx, h.db, inv.Customer, inv.AmountPaid); err != nil { // commits on its own
		return false, fmt.Errorf("credit %s: %w", ev.ID, err)
	}
	time.Sleep(h.opts.Delay) // other work between the credit and the record
	if _, err := h.db.claim(ctx, h.db, ev.ID); err != nil {
		return false, fmt.Errorf("record %s after crediting: %w", ev.ID, err)
	}
	return true, nil
}

// setSubscriptionLastWrite (variant lastwrite) stores the status carried by
// whichever subscription event arrives last.
//
// BUG: caught by the order phase. Stripe does not guarantee delivery order:
// when "customer.subscription.deleted" arrives before a retried "…updated",
// the canceled subscription is stored as active again. The fixed handler
// (setSubscription) compares the events' created timestamps.
func (h *handler) setSubscriptionLastWrite(ctx context.Context, ev *event, sub *subscription) (applied bool, err error) {
	_, err = h.db.ExecContext(ctx, h.db.q(`INSERT INTO subscriptions (id, customer, status, event_created) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, customer = excluded.customer, event_created = excluded.event_created`),
		sub.ID, sub.Customer, sub.Status, ev.Created)
	if err != nil {
		return false, fmt.Errorf("store subscription %s: %w", sub.ID, err)
	}
	return true, nil
}
