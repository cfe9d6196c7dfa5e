package wallet

import (
	"encoding/json"
	"errors"
	"fmt"
)

// event is the part of a Stripe event the wallet reads.
type event struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Created int64  `json:"created"` // unix seconds: when Stripe created the event
	Data    struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// invoice is data.object of invoice.paid and invoice.payment_succeeded.
type invoice struct {
	ID         string `json:"id"`
	Customer   string `json:"customer"`
	AmountPaid int64  `json:"amount_paid"` // cents
	Currency   string `json:"currency"`
}

// subscription is data.object of customer.subscription.* events.
type subscription struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Status   string `json:"status"`
}

func parseEvent(body []byte) (*event, error) {
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("not a Stripe event: %v", err)
	}
	if ev.ID == "" || ev.Type == "" {
		return nil, errors.New("not a Stripe event: no id or type")
	}
	return &ev, nil
}

func (ev *event) invoice() (*invoice, error) {
	var inv invoice
	if err := json.Unmarshal(ev.Data.Object, &inv); err != nil {
		return nil, fmt.Errorf("%s: data.object is not an invoice: %v", ev.ID, err)
	}
	if inv.Customer == "" || inv.AmountPaid < 0 {
		return nil, fmt.Errorf("%s: invoice without customer or with a negative amount", ev.ID)
	}
	return &inv, nil
}

func (ev *event) subscription() (*subscription, error) {
	var sub subscription
	if err := json.Unmarshal(ev.Data.Object, &sub); err != nil {
		return nil, fmt.Errorf("%s: data.object is not a subscription: %v", ev.ID, err)
	}
	if sub.ID == "" || sub.Status == "" {
		return nil, fmt.Errorf("%s: subscription without id or status", ev.ID)
	}
	return &sub, nil
}
