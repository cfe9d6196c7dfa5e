package check

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// replayOptions is how the crash phase sends every copy: plainly.
var replayOptions = replay.SendOptions{}

// sleepUntil returns at t: it sleeps most of the way and spins the last
// stretch, since a timer may fire a millisecond late and the windows the
// crash phase aims at are a few milliseconds wide.
func sleepUntil(t time.Time) {
	const spin = 500 * time.Microsecond
	if d := time.Until(t) - spin; d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(t) {
	}
}

// triggerPoll is the pause between two readings while the crash phase waits
// for the first probe change: short enough to kill within a fraction of a
// millisecond of the commit, long enough not to starve the handler of CPU.
const triggerPoll = 100 * time.Microsecond

// awaitChange reads the probes as fast as they answer while the copy is in
// flight (its attempt arrives on sent) and returns at the first change from
// before, naming the probe that changed: the handler committed an effect and
// has most likely not answered yet, the window where work done and answer
// lost is a bug. When the copy is answered first it returns that attempt
// with answered true. A probe that fails to read is read again: the
// readings before and after the trial report probe errors.
func (c *crashPhase) awaitChange(ctx context.Context, before []probe.Value, sent <-chan store.Attempt) (a store.Attempt, answered bool, trigger string) {
	for {
		select {
		case a := <-sent:
			return a, true, ""
		case <-ctx.Done():
			return store.Attempt{}, false, ""
		default:
		}
		vals, err := probe.ReadAll(ctx, c.r.o.Probes)
		if err == nil {
			for k := range vals {
				if k < len(before) && !vals[k].Equal(before[k]) {
					return store.Attempt{}, false, c.r.c.Probes[k] + " moved"
				}
			}
		}
		time.Sleep(triggerPoll)
	}
}

// restartEffect is what restarting the handler with no event changed: the
// work a fresh process does on its own (startup writes, token exchanges and
// other calls to the sink, cache warm-up). Each crash trial restarts the
// handler once, so this much of a trial's change is the restart's, not the
// event's.
type restartEffect struct {
	// delta[k] is probe k's numeric change (nil: none).
	delta []*big.Rat
}

// added returns rd with the restart's numeric changes added: the reading a
// restart alone would have left.
func (e restartEffect) added(rd reading) reading {
	if e.delta == nil {
		return rd
	}
	vals := append([]probe.Value(nil), rd.vals...)
	for k, d := range e.delta {
		if d == nil || k >= len(vals) {
			continue
		}
		b, ok := vals[k].Rat()
		if !ok && vals[k].Empty() {
			b, ok = new(big.Rat), true
		}
		if ok {
			vals[k] = probe.TextValue(probe.FormatRat(new(big.Rat).Add(b, d)))
		}
	}
	rd.vals = vals
	return rd
}

// learnRestart restarts the handler once with no event and records what
// that changed, so that a crash trial's restart is not charged to its event.
// What it cannot subtract (a textual probe that changed) is a warning.
func (c *crashPhase) learnRestart(ctx context.Context) error {
	r := c.r
	// The probes were seen quiet before the phase: one read confirms it.
	before, err := r.readQuiet(ctx, c.d, PhaseCrash, "before a restart with no event")
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := r.o.Serve.Kill(ctx); err != nil {
		return &SetupError{Err: fmt.Errorf("crash phase: %w", err)}
	}
	if err := c.restartServer(ctx); err != nil {
		return err
	}
	after, err := r.read(ctx, c.d, PhaseCrash, "after a restart with no event")
	if err != nil {
		return err
	}
	c.restartCost = time.Since(start)
	var changed, kept []string
	for k := range before.vals {
		if k >= len(after.vals) || before.vals[k].Equal(after.vals[k]) {
			continue
		}
		name := r.c.Probes[k]
		d, ok := probe.ExactDelta(before.vals[k], after.vals[k])
		if !ok {
			kept = append(kept, name)
			continue
		}
		if c.restart.delta == nil {
			c.restart.delta = make([]*big.Rat, len(before.vals))
		}
		c.restart.delta[k] = d
		f, _ := d.Float64()
		changed = append(changed, fmt.Sprintf("%s by %s", name, signed(f)))
	}
	if len(changed) > 0 {
		r.note("delivery %d: restarting the handler with no event changed %s (what a fresh process does on its own); the crash phase does not charge that to the events it kills",
			c.d.ID, strings.Join(changed, ", "))
	}
	if len(kept) > 0 {
		c.ph.Warnings = append(c.ph.Warnings, fmt.Sprintf("restarting the handler with no event changed %s, which is not a number: its change after a crash cannot be told apart from the event's", strings.Join(kept, ", ")))
	}
	return nil
}

// markKill records on a, the copy the handler was killed handling, when
// the kill's signal was sent and, when the restart succeeded, when it
// ended (at).
func markKill(a *store.Attempt, killAt, at time.Time, restarted bool) {
	if killAt.IsZero() {
		return
	}
	if a.Detail == nil {
		a.Detail = map[string]any{}
	}
	a.Detail[store.DetailKilledAt] = killAt.UTC().Format(time.RFC3339Nano)
	if restarted {
		a.Detail[store.DetailRestartedAt] = at.UTC().Format(time.RFC3339Nano)
	}
}
