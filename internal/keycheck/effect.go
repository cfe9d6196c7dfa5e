package keycheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/store"
)

// reading is every probe's settled value at one point.
type reading struct {
	vals []probe.Value
	at   time.Time
	// lastChange is when a probe last changed while the reading waited.
	lastChange time.Time
	// from is when the reading began waiting for the probes to settle
	// (zero: one read confirming the last settled reading).
	from time.Time
}

// minQuiet is the shortest quiet period a learned settle comes down to.
const minQuiet = 100 * time.Millisecond

// before is the reading a check starts from: the last settled reading when
// nothing was sent or run since (one read confirms it), else a settled one.
func (r *runner) before(ctx context.Context, check string) (reading, error) {
	if r.last != nil && r.lastGen == r.gen {
		vals, err := probe.ReadAll(ctx, r.o.Probes)
		if err != nil {
			return reading{}, r.probeErr(ctx, err)
		}
		if probe.SameValues(vals, r.last.vals) {
			rd := reading{vals: vals, at: time.Now()}
			return rd, r.storeReading(ctx, check, "before", rd)
		}
	}
	return r.settled(ctx, check, "before", nil)
}

// after is the reading after a check's requests. When expect is set (an
// effect is due) it first waits, up to a few settle periods, for any probe
// to move from from, so that an API that works after answering is measured
// after its work; then the probes must hold still for the quiet period.
func (r *runner) after(ctx context.Context, check, point string, from reading, expect bool) (reading, error) {
	if expect {
		return r.settled(ctx, check, point, &from)
	}
	return r.settled(ctx, check, point, nil)
}

func (r *runner) settled(ctx context.Context, check, point string, from *reading) (reading, error) {
	start := time.Now()
	var seen time.Time
	if from != nil {
		wait := min(max(8*r.o.Settle, 2*time.Second), r.o.SettleMax)
		for {
			vals, err := probe.ReadAll(ctx, r.o.Probes)
			if err != nil {
				return reading{}, r.probeErr(ctx, err)
			}
			if !probe.SameValues(vals, from.vals) {
				seen = time.Now()
				break
			}
			if time.Since(start) >= wait {
				break
			}
			select {
			case <-ctx.Done():
				return reading{}, ctx.Err()
			case <-time.After(r.poll()):
			}
		}
	}
	vals, last, err := probe.SettleAt(ctx, r.o.Probes, r.quiet, max(r.o.SettleMax-time.Since(start), r.quiet))
	if err != nil {
		var ns *probe.NotSettledError
		if !errors.As(err, &ns) {
			return reading{}, r.probeErr(ctx, err)
		}
		r.note("probes were still changing after %s %s (%s); the values read then were used", r.name(InputSettleMax), r.o.SettleMax, strings.Join(ns.Probes, "; "))
	}
	rd := reading{vals: vals, at: time.Now(), lastChange: seen, from: start}
	if last.After(seen) {
		rd.lastChange = last
	}
	if err := r.storeReading(ctx, check, point, rd); err != nil {
		return reading{}, err
	}
	if err == nil {
		q := rd
		r.last, r.lastGen = &q, r.gen
	}
	return rd, nil
}

func (r *runner) probeErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &SetupError{Err: err}
}

func (r *runner) poll() time.Duration {
	return min(max(r.o.Settle/10, 10*time.Millisecond), 100*time.Millisecond)
}

// learn takes how long the first operation's effects took to land (from
// sending to the last probe change) into the quiet period every later
// reading waits for, as check does: --settle plus that, or, when the
// settle was not given, 3 × that (at least minQuiet) when shorter.
func (r *runner) learn(dur time.Duration) {
	r.effDur = dur
	q := r.o.Settle + dur
	if r.o.LearnSettle {
		if short := max(minQuiet, 3*dur); short < r.o.Settle {
			q = short
		}
	}
	r.quiet = min(q, r.o.SettleMax)
}

func (r *runner) storeReading(ctx context.Context, name, point string, rd reading) error {
	if r.o.Store == nil {
		return nil
	}
	row := store.ProbeReading{RunID: r.runID, Phase: name, Point: point, ReadAt: rd.at, SettleFrom: rd.from, ChangedAt: rd.lastChange}
	if err := check.StoreReading(context.WithoutCancel(ctx), r.o.Store, row, r.o.Probes, rd.vals); err != nil {
		return setupf("%v", err)
	}
	return nil
}

// delta is one probe's change between two readings.
type delta struct {
	d       float64
	num     bool // d is a number (both readings numeric)
	changed bool
}

func deltas(from, to reading) []delta {
	out := make([]delta, len(from.vals))
	for i := range from.vals {
		d, ok := probe.Delta(from.vals[i], to.vals[i])
		out[i] = delta{d: d, num: ok, changed: !from.vals[i].Equal(to.vals[i])}
	}
	return out
}

// effect is what the probes saw between two readings, in multiples of E.
type effect struct {
	ds    []delta
	names []string
	// k is the multiple of E; exact is false when the probes cannot say
	// (a textual probe that changed, deltas not proportional to E).
	k     float64
	exact bool
}

// effectOf measures from → to against E.
func (r *runner) effectOf(from, to reading) effect {
	ds := deltas(from, to)
	e := effect{ds: ds, names: r.k.Probes, exact: true}
	ks := []float64{}
	changed := false
	for i, d := range ds {
		changed = changed || d.changed
		ei := r.e[i]
		switch {
		case d.num && ei.num && ei.d != 0:
			ks = append(ks, d.d/ei.d)
		case d.num && ei.num:
			if d.d != 0 {
				e.exact = false
			}
		case d.changed && !ei.changed:
			e.exact = false
		}
	}
	switch {
	case len(ks) == 0 && !changed:
		e.k = 0
	case len(ks) == 0:
		e.k, e.exact = 1, false // textual probes changed: at least once
	default:
		e.k = ks[0]
		for _, k := range ks[1:] {
			if math.Abs(k-e.k) > 1e-9 {
				e.exact = false
			}
		}
	}
	return e
}

// is reports whether the effect is n × E. Textual probes only tell none
// from some, so with them 1 and 2 are both "some".
func (e effect) is(n int) bool {
	if n == 0 {
		for _, d := range e.ds {
			if d.changed {
				return false
			}
		}
		return true
	}
	if !e.exact {
		return e.k >= 1 && !e.numeric()
	}
	return math.Abs(e.k-float64(n)) < 1e-9
}

// none: nothing changed.
func (e effect) none() bool { return e.is(0) }

// more: the effect is over E (a second operation) as far as the probes tell.
func (e effect) more(n int) bool {
	if e.none() {
		return false
	}
	return e.numeric() && e.k > float64(n)+1e-9
}

func (e effect) numeric() bool {
	for _, d := range e.ds {
		if d.num && d.d != 0 {
			return true
		}
	}
	return false
}

// String is the effect as the report shows it: "+0", "+E", "+2E", with
// the probes' deltas after a non-zero one.
func (e effect) String() string {
	if e.none() {
		return "+0"
	}
	var k string
	switch {
	case !e.exact && !e.numeric():
		k = "changed"
	case !e.exact:
		k = "not a multiple of E"
	case math.Abs(e.k-1) < 1e-9:
		k = "+E"
	case math.Abs(e.k-math.Round(e.k)) < 1e-9:
		k = fmt.Sprintf("+%gE", math.Round(e.k))
	default:
		k = fmt.Sprintf("+%.3gE", e.k)
	}
	return k + " (" + strings.Join(e.parts(), ", ") + ")"
}

// parts lists each probe's change: "count +2", "state changed".
func (e effect) parts() []string {
	var out []string
	for i, d := range e.ds {
		name := fmt.Sprintf("probe %d", i+1)
		if i < len(e.names) {
			name = e.names[i]
		}
		switch {
		case d.num:
			out = append(out, fmt.Sprintf("%s %+g", name, d.d))
		case d.changed:
			out = append(out, name+" changed")
		default:
			out = append(out, name+" unchanged")
		}
	}
	return out
}
