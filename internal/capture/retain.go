package capture

import (
	"context"
	"fmt"
	"time"
)

// MinRetain is the shortest retention a capture accepts (capture --retain's
// help says 10m). A delivery is
// stored with the time its first byte arrived and committed at most
// ReadTimeout + ForwardTimeout + WriteTimeout later (a few minutes at the
// defaults); keeping at least MinRetain means the background prune can never
// reach a delivery capture is still reading, committing or answering.
const MinRetain = 10 * time.Minute

// maxRetainEvery bounds the wait between two background prunes.
const maxRetainEvery = time.Hour

// PruneObserver is an Observer that also hears what retention removed.
type PruneObserver interface {
	// Pruned: n deliveries received before cutoff were removed (n > 0).
	Pruned(n int64, cutoff time.Time)
}

// retainEvery is how often the background prune runs for a retention of
// keep: a tenth of it, at most an hour, so that nothing outlives keep by
// more than that.
func retainEvery(keep time.Duration) time.Duration {
	return min(keep/10, maxRetainEvery)
}

// retain prunes deliveries older than opt.Retain now and then every
// retainEvery until ctx ends. A failed prune (the store unreachable) is
// reported and tried again at the next turn; it never stops the capture.
func (s *Server) retain(ctx context.Context) {
	every := s.opt.RetainEvery
	if every <= 0 {
		every = retainEvery(s.opt.Retain)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cutoff := time.Now().Add(-s.opt.Retain)
		n, err := s.st.PruneDeliveries(ctx, cutoff)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.logf("retention: %v (trying again in %s)", err, every)
		case n > 0:
			s.pruned(n, cutoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruned tells the observer, when it listens for it, what retention removed.
func (s *Server) pruned(n int64, cutoff time.Time) {
	po, ok := s.opt.Observer.(PruneObserver)
	if !ok {
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	po.Pruned(n, cutoff)
}

// checkRetain validates a retention given to New.
func checkRetain(keep time.Duration) error {
	if keep != 0 && keep < MinRetain {
		return fmt.Errorf("retention %s is shorter than %s: deliveries being received could be pruned", keep, MinRetain)
	}
	return nil
}
