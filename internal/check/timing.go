package check

// Where a phase's time goes (issue 28 §1): sending copies, waiting for the
// probes to settle, reading them. The runner keeps running totals; a phase
// takes their difference over its busySpan (report.PhaseTiming).

import (
	"context"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// clock is a runner's running totals. Sends may overlap (crash sends from
// goroutines) and a probe reading is every probe read at once, so sending
// and reading count the time at least one is in progress, not the sum.
type clock struct {
	mu               sync.Mutex
	sending, reading busySpan
	settling         time.Duration
	reads            int
	settleDepth      int
	settleSince      time.Time
}

// busySpan is the time at least one of overlapping activities was in progress.
type busySpan struct {
	n     int
	since time.Time
	total time.Duration
}

func (s *busySpan) begin() {
	if s.n == 0 {
		s.since = time.Now()
	}
	s.n++
}

func (s *busySpan) end() {
	s.n--
	if s.n == 0 {
		s.total += time.Since(s.since)
	}
}

func (c *clock) sendBegin() { c.mu.Lock(); c.sending.begin(); c.mu.Unlock() }
func (c *clock) sendEnd()   { c.mu.Lock(); c.sending.end(); c.mu.Unlock() }

// settleBegin and settleEnd bracket a wait for quiet; nested waits (a
// calibration's settled readings) count once.
func (c *clock) settleBegin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settleDepth == 0 {
		c.settleSince = time.Now()
	}
	c.settleDepth++
}

func (c *clock) settleEnd() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settleDepth--
	if c.settleDepth == 0 {
		c.settling += time.Since(c.settleSince)
	}
}

// snapshot is the totals now.
func (c *clock) snapshot() report.PhaseTiming {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := report.PhaseTiming{Sending: c.sending.total, Settling: c.settling, ProbeReads: c.reading.total, Reads: c.reads}
	now := time.Now()
	if c.sending.n > 0 {
		t.Sending += now.Sub(c.sending.since)
	}
	if c.reading.n > 0 {
		t.ProbeReads += now.Sub(c.reading.since)
	}
	if c.settleDepth > 0 {
		t.Settling += now.Sub(c.settleSince)
	}
	return t
}

// since is what the totals grew by from start.
func (c *clock) since(start report.PhaseTiming) *report.PhaseTiming {
	t := c.snapshot()
	return &report.PhaseTiming{Sending: t.Sending - start.Sending, Settling: t.Settling - start.Settling,
		ProbeReads: t.ProbeReads - start.ProbeReads, Reads: t.Reads - start.Reads}
}

// timed wraps probes so that every reading counts on c: the time one
// reading (every probe, read at once) is in progress, and how many.
func (c *clock) timed(probes []probe.Probe) []probe.Probe {
	out := make([]probe.Probe, len(probes))
	for i, p := range probes {
		out[i] = &timedProbe{Probe: p, c: c, first: i == 0}
	}
	return out
}

// timedProbe is a probe whose reads count on a clock; the first probe of
// a set counts the readings.
type timedProbe struct {
	probe.Probe
	c     *clock
	first bool
}

// Unwrap returns the probe timed, for probe.Unwrap and the kind checks.
func (t *timedProbe) Unwrap() probe.Probe { return t.Probe }

func (t *timedProbe) Read(ctx context.Context) (probe.Value, error) {
	t.c.mu.Lock()
	t.c.reading.begin()
	if t.first {
		t.c.reads++
	}
	t.c.mu.Unlock()
	defer func() { t.c.mu.Lock(); t.c.reading.end(); t.c.mu.Unlock() }()
	return t.Probe.Read(ctx)
}

// Scope scopes the timed probe (probe.Scoper), still timed by its clock.
func (t *timedProbe) Scope(v probe.Vars) (probe.Probe, string, error) {
	s, ok := t.Probe.(probe.Scoper)
	if !ok {
		return t, "", nil
	}
	p, key, err := s.Scope(v)
	if err != nil {
		return nil, "", err
	}
	return &timedProbe{Probe: p, c: t.c, first: t.first}, key, nil
}

// retimed is probes timed by c instead of the clock they were timed by.
func (c *clock) retimed(probes []probe.Probe) []probe.Probe {
	out := make([]probe.Probe, len(probes))
	for i, p := range probes {
		if t, ok := p.(*timedProbe); ok {
			p = t.Probe
		}
		out[i] = p
	}
	return c.timed(out)
}
