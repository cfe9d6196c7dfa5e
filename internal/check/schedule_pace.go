package check

// The default number of deliveries checked at once follows the handler.
// DefaultJobs is what the machine allows; a handler that serialises its
// work (one database connection, a lock, two workers) answers each copy
// later the more deliveries send at once, and an answer slowed by
// hookreplay's own concurrency must never read as a slow handler in the
// latency phase, which --jobs 1 would pass. So when no jobs count was
// given, a pace admits deliveries: the first runs alone until the handler
// answers it (its latency alone, base), then more start, at most half again
// the deliveries whose first copy was answered, while the handler answered
// the last two copies, and every running delivery's last copy, within
// slowFactor × base (at least slowFloor, so a 2 ms handler's scheduling
// noise throttles nothing); all at once, until the first hold, when even a
// handler answering one copy at a time would answer every running
// delivery's copy within that floor (base × the most at once ≤
// slowFloor). While it answers slower, no delivery starts; the ones
// running finish, and starts resume, half again at most, once it answers
// at its pace again. The concurrency settles near the most the handler
// serves at its own speed.
// An explicit --jobs N is obeyed as given.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

const (
	// slowFactor: an answer over slowFactor × the first delivery's alone
	// is markedly slower.
	slowFactor = 2
	// slowFloor: answers within it are never slow, whatever the base.
	slowFloor = 20 * time.Millisecond
)

// pace admits deliveries to be checked at once (enter, leave), learning
// from every single copy's answer (answered). Burst copies are not told:
// they share the handler with each other alone too.
type pace struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change
	max     int           // the most at once: DefaultJobs, at most the groups
	slots   map[*paceSlot]bool

	active, proven int // deliveries running, and those whose first copy was answered
	base           time.Duration
	haveBase       bool
	// slow: one of the last two answers was over the threshold: nothing
	// starts until two in a row are within it. jammed: both were, the
	// handler is slowed (one alone may be the machine's noise). last: the
	// last answer was over.
	slow, jammed, last bool
	// held: a start was held while the handler was jammed; from then on
	// they start half again at most, never all at once.
	held bool

	// peak is the most deliveries that ran at once, holdAt the most
	// running when a start was held, slowest the slowest answer of a
	// slow run.
	peak, holdAt int
	slowest      time.Duration
}

// paceSlot is one delivery admitted by a pace.
type paceSlot struct {
	proven bool
	lat    time.Duration // its last single copy's answer time
}

func newPace(max int) *pace {
	return &pace{max: max, changed: make(chan struct{}), slots: map[*paceSlot]bool{}}
}

// threshold is the answer time over which the handler is slower than
// alone; 0 before base is known.
func (p *pace) threshold() time.Duration {
	return max(slowFactor*p.base, slowFloor)
}

// admit reports whether a delivery may start now; mu held.
func (p *pace) admit() bool {
	if p.active == 0 {
		return true
	}
	if !p.haveBase || p.active >= p.max || p.slow {
		return false
	}
	for s := range p.slots {
		if s.proven && s.lat > p.threshold() {
			return false // a running delivery's last answer was slow
		}
	}
	if time.Duration(p.max)*p.base <= slowFloor && !p.held {
		// Even a handler that answers one copy at a time answers every
		// running delivery's copy within the floor: start them all.
		return true
	}
	return p.active-p.proven < max(1, p.proven/2)
}

// enter waits until a delivery may start and returns its slot.
func (p *pace) enter(ctx context.Context) (*paceSlot, error) {
	counted := false
	for {
		p.mu.Lock()
		if p.admit() {
			p.active++
			p.peak = max(p.peak, p.active)
			s := &paceSlot{}
			p.slots[s] = true
			p.mu.Unlock()
			return s, nil
		}
		if p.jammed && !counted {
			// Held for the handler's pace, not for the machine's.
			counted, p.held = true, true
			p.holdAt = max(p.holdAt, p.active)
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// leave ends the delivery of s.
func (p *pace) leave(s *paceSlot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active--
	delete(p.slots, s)
	if s.proven {
		p.proven--
	}
	p.wake()
}

// answered tells the pace the outcome of a single copy sent by the
// delivery of s: an answered copy's latency, nothing for a lost one or an
// error (they say nothing of the handler's pace).
func (p *pace) answered(s *paceSlot, a store.Attempt) {
	if s == nil || a.Err != "" || a.Lost || a.Status == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.haveBase {
		// Only the first delivery runs until it is known: its answer alone.
		p.base, p.haveBase = a.Latency, true
	}
	if !s.proven {
		s.proven = true
		p.proven++
	}
	s.lat = a.Latency
	over := a.Latency > p.threshold()
	p.slow, p.jammed, p.last = over || p.last, over && p.last, over
	if p.jammed {
		p.slowest = max(p.slowest, a.Latency)
	}
	p.wake()
}

// wake tells the deliveries waiting in enter that something changed; mu held.
func (p *pace) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// note says how many deliveries ran at once and why.
func (p *pace) note() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.haveBase {
		return ""
	}
	alone := fmt.Sprintf("%s alone", report.Duration(p.base))
	jobs := fmt.Sprintf("jobs %d (the machine's default)", DefaultJobs())
	if p.max < DefaultJobs() {
		jobs = fmt.Sprintf("jobs %d (the machine's default is %d)", p.max, DefaultJobs())
	}
	if !p.held {
		return fmt.Sprintf("%s, at most %d ran at once: none was held back for the handler's pace (two answers in a row over %s: 2 × its %s, at least %s)",
			jobs, p.peak, report.Duration(p.threshold()), alone, report.Duration(slowFloor))
	}
	return fmt.Sprintf("%s, held to %d at once while the handler answered in up to %s, %.1f× its %s: no delivery was started while it answered over %s (2 × its %s, at least %s)",
		jobs, p.holdAt, report.Duration(p.slowest), float64(p.slowest)/float64(max(p.base, time.Microsecond)), alone,
		report.Duration(p.threshold()), alone, report.Duration(slowFloor))
}
