package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/panics"
)

// Defaults for Settle.
const (
	DefaultSettle    = 250 * time.Millisecond
	DefaultSettleMax = 10 * time.Second
)

// ErrNotSettled is matched (errors.Is) by the error Settle returns when the
// probes were still changing when max ran out.
var ErrNotSettled = errors.New("probes did not settle")

// NotSettledError names the probes that were still changing after max.
type NotSettledError struct {
	Probes []string
	Max    time.Duration
}

func (e *NotSettledError) Error() string {
	return fmt.Sprintf("probes still changing after %s: %s", e.Max, strings.Join(e.Probes, "; "))
}

// Is makes errors.Is(err, ErrNotSettled) true.
func (e *NotSettledError) Is(target error) bool { return target == ErrNotSettled }

// Settle reads every probe repeatedly until all values have held still for
// settle (DefaultSettle when ≤ 0), so that a handler that answers first and
// works later (a queue, a goroutine) is measured after its work. It gives up
// after max (DefaultSettleMax when ≤ 0) and then returns the last values with
// a *NotSettledError. A probe that fails to read stops it at once with that
// probe's *Error: a broken probe is a setup error, never a silent pass.
func Settle(ctx context.Context, probes []Probe, settle, max time.Duration) ([]Value, error) {
	vals, _, err := SettleAt(ctx, probes, settle, max)
	return vals, err
}

// SettleAt is Settle that also returns when a probe last changed while it
// watched (the zero time when none did), so that a caller can learn how
// long a handler's effects take to land.
func SettleAt(ctx context.Context, probes []Probe, settle, max time.Duration) ([]Value, time.Time, error) {
	var last time.Time
	vals, err := settleAt(ctx, probes, settle, max, &last)
	return vals, last, err
}

func settleAt(ctx context.Context, probes []Probe, settle, max time.Duration, last *time.Time) ([]Value, error) {
	settle = orDefault(settle, DefaultSettle)
	max = orDefault(max, DefaultSettleMax)
	interval := settle / 10
	if interval < 10*time.Millisecond {
		interval = 10 * time.Millisecond
	}
	if interval > 100*time.Millisecond {
		interval = 100 * time.Millisecond
	}
	start := time.Now()
	deadline := start.Add(max)
	vals, err := ReadAll(ctx, probes)
	if err != nil {
		return nil, err
	}
	stableSince := time.Now()
	changed := make([]time.Time, len(probes)) // last change of each probe
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		if time.Since(stableSince) >= settle {
			return vals, nil
		}
		if !time.Now().Before(deadline) {
			var moving []string
			for i, p := range probes {
				if !changed[i].IsZero() && time.Since(changed[i]) < settle {
					moving = append(moving, p.Name())
				}
			}
			return vals, &NotSettledError{Probes: moving, Max: max}
		}
		wait := interval
		if rest := settle - time.Since(stableSince); rest < wait {
			wait = rest
		}
		if rest := time.Until(deadline); rest < wait {
			wait = rest
		}
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return vals, ctx.Err()
		case <-timer.C:
		}
		next, err := ReadAll(ctx, probes)
		if err != nil {
			return vals, err
		}
		now := time.Now()
		for i := range next {
			if !next[i].Equal(vals[i]) {
				changed[i] = now
				stableSince = now
				*last = now
			}
		}
		vals = next
	}
}

// readCaught reads p; a panic inside its client library (a driver, the
// Redis client) is the probe's error, in one line, rather than a goroutine
// dump that ends the process without its report.
func readCaught(ctx context.Context, p Probe) (v Value, err error) {
	defer panics.Catch(&err)
	return p.Read(ctx)
}

// ReadAll reads every probe once, concurrently, and returns the values in
// the probes' order, or the first probe's error (by probe order).
func ReadAll(ctx context.Context, probes []Probe) ([]Value, error) {
	vals := make([]Value, len(probes))
	errs := make([]error, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := readCaught(ctx, p)
			if err != nil {
				err = probeErr(p.Name(), err)
			}
			vals[i], errs[i] = v, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return vals, nil
}
