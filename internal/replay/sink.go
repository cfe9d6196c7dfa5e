package replay

import (
	"context"

	"github.com/hookreplay/hookreplay/internal/store"
)

// AttemptSink receives every attempt as soon as it is done. Calls are
// serialised by the engine. An error stops new sends.
type AttemptSink interface {
	Attempt(ctx context.Context, a *store.Attempt) error
}

// BatchSink is an AttemptSink that can take several finished attempts at
// once (the store commits them in one transaction). The engine hands over
// whatever finished while the previous batch was being written.
type BatchSink interface {
	AttemptSink
	Attempts(ctx context.Context, as []*store.Attempt) error
}

func deliver(ctx context.Context, s AttemptSink, as []*store.Attempt) error {
	if b, ok := s.(BatchSink); ok {
		return b.Attempts(ctx, as)
	}
	for _, a := range as {
		if err := s.Attempt(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// SinkFunc adapts a function to AttemptSink.
type SinkFunc func(ctx context.Context, a *store.Attempt) error

// Attempt calls f.
func (f SinkFunc) Attempt(ctx context.Context, a *store.Attempt) error { return f(ctx, a) }

// MultiSink sends each attempt to every sink in order; the first error wins.
type MultiSink []AttemptSink

// Attempt forwards a to every sink.
func (m MultiSink) Attempt(ctx context.Context, a *store.Attempt) error {
	for _, s := range m {
		if s == nil {
			continue
		}
		if err := s.Attempt(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Attempts forwards a batch to every sink in order.
func (m MultiSink) Attempts(ctx context.Context, as []*store.Attempt) error {
	for _, s := range m {
		if s == nil {
			continue
		}
		if err := deliver(ctx, s, as); err != nil {
			return err
		}
	}
	return nil
}

// StoreSink records attempts as rows of run RunID.
type StoreSink struct {
	Store *store.Store
	RunID int64
}

// Attempt inserts a (even after ctx was cancelled: what was done is kept).
func (s StoreSink) Attempt(ctx context.Context, a *store.Attempt) error {
	a.RunID = s.RunID
	return s.Store.InsertAttempt(context.WithoutCancel(ctx), a)
}

// Attempts inserts a batch in one transaction.
func (s StoreSink) Attempts(ctx context.Context, as []*store.Attempt) error {
	for _, a := range as {
		a.RunID = s.RunID
	}
	return s.Store.InsertAttempts(context.WithoutCancel(ctx), as)
}
