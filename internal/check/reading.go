package check

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// reading is the settled values of every probe at one point.
type reading struct {
	vals []probe.Value
	at   time.Time
	// sinkLen is the sink's call count when the reading was taken, smtpLen
	// the SMTP sink's message count.
	sinkLen, smtpLen int
	// lastChange is when a probe last changed while this reading waited
	// (zero when none did).
	lastChange time.Time
	// from is when this reading began waiting for the probes to settle
	// (zero: a single read, not a settled one); from to at is its settle
	// window in the run's timeline.
	from time.Time
	// unsettled names the probes still changing when --settle-max ran out
	// (the values are the last ones read then).
	unsettled []string
	// slot: read right after a copy was answered (a peek, or an overlap's
	// optimistic reading after a fresh event), so it may show that copy's
	// effect (overlap.observe).
	slot bool
}

// minQuiet is the shortest quiet period a learned settle comes down to: a
// few probe polls, enough for a handler whose effects all land before it
// answers.
const minQuiet = 100 * time.Millisecond

// sent marks the end of a send: the handler may be working from now on.
func (r *runner) sent() {
	r.lastSent.Store(time.Now().UnixNano())
	r.gen.Add(1)
}

// readQuiet is read for the reading a phase or trial starts from: when
// nothing was sent (and no reset run) since the last settled reading, the
// probes have already been seen quiet, so that reading is recorded again at
// point instead of waiting for another quiet period.
//
// One read confirms it: a probe that moved meanwhile (work of an earlier
// phase still landing) makes it wait for a quiet period after all.
func (r *runner) readQuiet(ctx context.Context, d *Delivery, phase, point string) (reading, error) {
	r.clk.settleBegin()
	defer r.clk.settleEnd()
	if r.ov != nil && r.ov.opt {
		return r.readOnce(ctx, d, phase, point, nil, 0)
	}
	if r.lastQuiet != nil && r.quietGen == r.gen.Load() {
		vals, err := probe.ReadAll(ctx, r.o.Probes)
		if err != nil {
			if ctx.Err() != nil {
				return reading{}, ctx.Err()
			}
			return reading{}, &SetupError{Err: err}
		}
		if !probe.SameValues(vals, r.lastQuiet.vals) {
			r.lastQuiet = nil
			return r.read(ctx, d, phase, point)
		}
		rd := *r.lastQuiet
		rd.at, rd.lastChange, rd.from = time.Now(), time.Time{}, time.Time{}
		if err := r.storeReading(ctx, d, phase, point, rd); err != nil {
			return reading{}, err
		}
		return rd, nil
	}
	return r.read(ctx, d, phase, point)
}

// peek reads every probe once, without waiting for them to settle, and
// records the values at point: right after a copy a synchronous handler
// answered, it tells which copy did the work; a settled reading after the
// last copy catches what lands later.
func (r *runner) peek(ctx context.Context, d *Delivery, phase, point string) (reading, error) {
	vals, err := probe.ReadAll(ctx, r.o.Probes)
	if err != nil {
		if ctx.Err() != nil {
			return reading{}, ctx.Err()
		}
		return reading{}, &SetupError{Err: err}
	}
	rd := reading{vals: vals, at: time.Now(), slot: true}
	r.markSinks(&rd)
	if err := r.storeReading(ctx, d, phase, point, rd); err != nil {
		return reading{}, err
	}
	return rd, nil
}

// read settles the probes and records the values at point.
func (r *runner) read(ctx context.Context, d *Delivery, phase, point string) (reading, error) {
	return r.readUntil(ctx, d, phase, point, nil, 0)
}

// readChanged waits (up to SettleMax) for any probe to differ from from,
// then settles: used where an effect is expected, so that an asynchronous
// handler slower than --settle is still measured after its work.
func (r *runner) readChanged(ctx context.Context, d *Delivery, phase, point string, from reading) (reading, error) {
	return r.readUntil(ctx, d, phase, point, &from, r.changeWait())
}

// readChangedWithin is readChanged waiting up to wait (within SettleMax)
// for the change instead of changeWait: for an effect known to come, only
// maybe much later (a queue recovering a dead worker's job).
func (r *runner) readChangedWithin(ctx context.Context, d *Delivery, phase, point string, from reading, wait time.Duration) (reading, error) {
	return r.readUntil(ctx, d, phase, point, &from, wait)
}

func (r *runner) readUntil(ctx context.Context, d *Delivery, phase, point string, from *reading, changeWait time.Duration) (reading, error) {
	r.clk.settleBegin()
	defer r.clk.settleEnd()
	if r.ov != nil && r.ov.opt {
		return r.readOnce(ctx, d, phase, point, from, changeWait)
	}
	start := time.Now()
	gen := r.gen.Load()
	var seen time.Time
	if from != nil {
		for {
			vals, err := probe.ReadAll(ctx, r.o.Probes)
			if err != nil {
				return reading{}, &SetupError{Err: err}
			}
			if !probe.SameValues(vals, from.vals) {
				seen = time.Now()
				break
			}
			if time.Since(start) >= r.o.SettleMax {
				break
			}
			select {
			case <-ctx.Done():
				return reading{}, ctx.Err()
			case <-time.After(r.pollInterval()):
			}
			// Give up waiting for a change after one settle period plus the
			// handler's slack: a copy that changes nothing is a finding too.
			if time.Since(start) >= changeWait {
				break
			}
		}
	}
	quiet := r.quiet()
	max := r.o.SettleMax - time.Since(start)
	if max < quiet {
		max = quiet
	}
	vals, last, err := probe.SettleAt(ctx, r.o.Probes, quiet, max)
	var unsettled []string
	if err != nil {
		var ns *probe.NotSettledError
		if errors.As(err, &ns) {
			unsettled = ns.Probes
			if len(unsettled) == 0 { // changed within the last poll, not the last settle
				unsettled = r.c.Probes
			}
			r.note("probes were still changing after %s %s (%s); values read then were used", r.name(InputSettleMax), report.Duration(r.o.SettleMax), strings.Join(ns.Probes, "; "))
		} else if ctx.Err() != nil {
			return reading{}, ctx.Err()
		} else {
			return reading{}, &SetupError{Err: err}
		}
	}
	rd := reading{vals: vals, at: time.Now(), lastChange: seen, unsettled: unsettled, from: start}
	if last.After(seen) {
		rd.lastChange = last
	}
	r.markSinks(&rd)
	if err := r.storeReading(ctx, d, phase, point, rd); err != nil {
		return reading{}, err
	}
	if unsettled == nil {
		q := rd
		r.lastQuiet, r.quietGen = &q, gen
	}
	return rd, nil
}

// calibrate keeps watching the probes after rd, the settled reading after a
// copy sent at sent, for an extended window after the last change seen (4 ×
// --settle, at least 1 s,
// within --settle-max): effects of one event that land further apart than
// --settle (a credit now, a receipt email from a slow API later) are still
// part of that event's effect. It learns how long the effects took (sending
// to the last change) and lengthens the settle of every later reading to
// cover it, so later copies' work is not blamed on the next copy or phase.
// It returns the final reading (rd when nothing moved).
//
// The control event (a second sample) is watched as long only when the
// first delivery's effects already took longer than --settle; for a handler
// whose effects land at once it watches 2 × the effective settle.
func (r *runner) calibrate(ctx context.Context, d *Delivery, phase, point string, sent time.Time, rd reading) (reading, error) {
	window, deadline := r.lateWindowOf(phase, sent, rd)
	return r.watchLate(ctx, d, phase, point, sent, rd, rd.lastChange, window, deadline)
}

// lateWindowOf is how long calibrate watches after rd, the settled reading
// after a copy of phase sent at sent, and until when.
func (r *runner) lateWindowOf(phase string, sent time.Time, rd reading) (window time.Duration, deadline time.Time) {
	window = 4 * r.o.Settle
	if window < time.Second {
		window = time.Second
	}
	if phase == "control" && r.effDur < r.o.Settle {
		window = 2 * r.effSettle
	}
	limit := sent.Add(r.o.SettleMax)
	// The settled reading already watched since the last change it saw:
	// the window counts from there (from the reading when nothing moved).
	from := rd.at
	if !rd.lastChange.IsZero() {
		from = rd.lastChange
	}
	deadline = from.Add(window)
	if deadline.After(limit) {
		deadline = limit
	}
	return window, deadline
}

// watchLate is calibrate's watch from cur until deadline, a change
// extending it by window (within --settle-max of sent); last is the last
// change seen so far (zero: none).
func (r *runner) watchLate(ctx context.Context, d *Delivery, phase, point string, sent time.Time, cur reading, last time.Time, window time.Duration, deadline time.Time) (reading, error) {
	r.clk.settleBegin()
	defer r.clk.settleEnd()
	limit := sent.Add(r.o.SettleMax)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return reading{}, ctx.Err()
		case <-time.After(r.pollInterval()):
		}
		vals, err := probe.ReadAll(ctx, r.o.Probes)
		if err != nil {
			return reading{}, &SetupError{Err: err}
		}
		if probe.SameValues(vals, cur.vals) {
			continue
		}
		seen := time.Now()
		if cur, err = r.readUntil(ctx, d, phase, point+" (late effects)", nil, 0); err != nil {
			return reading{}, err
		}
		last = seen
		if cur.lastChange.After(last) {
			last = cur.lastChange
		}
		r.obs.Note(Note{Kind: NoteLateEffect, DeliveryID: d.ID, Phase: phase, After: last.Sub(sent), Settle: r.o.Settle})
		if next := time.Now().Add(window); next.Before(limit) {
			deadline = next
		} else {
			deadline = limit
		}
	}
	if !last.IsZero() {
		r.learn(last.Sub(sent))
	}
	return cur, nil
}

// learn takes dur, how long one event's effects took from sending to the
// last probe change, into the quiet period every later reading waits for.
// Effects slower than --settle lengthen it to --settle + dur. Faster ones,
// when the settle was not given (LearnSettle), shorten it to 3 × the slowest
// seen (at least minQuiet): a handler whose work is done when it answers is
// not waited on for the default's sake.
func (r *runner) learn(dur time.Duration) {
	if dur <= r.effDur && r.learned {
		return
	}
	if dur > r.effDur {
		r.effDur = dur
	}
	r.learned = true
	eff := r.o.Settle + r.effDur
	if r.o.LearnSettle {
		if short := max(minQuiet, 3*r.effDur); short < r.o.Settle {
			eff = short
		}
	}
	if eff > r.o.SettleMax {
		eff = r.o.SettleMax
	}
	r.effSettle = eff // effDur only grows, so eff does
}

func (r *runner) pollInterval() time.Duration {
	iv := r.o.Settle / 10
	if iv < 10*time.Millisecond {
		iv = 10 * time.Millisecond
	}
	if iv > 100*time.Millisecond {
		iv = 100 * time.Millisecond
	}
	return iv
}

// changeWait is how long readChanged waits for a first change: several
// settle periods (an asynchronous handler's queue delay), bounded by SettleMax.
func (r *runner) changeWait() time.Duration {
	w := 8 * r.o.Settle
	if w < 2*time.Second {
		w = 2 * time.Second
	}
	if w > r.o.SettleMax {
		w = r.o.SettleMax
	}
	return w
}

// quiet is how long a reading must see no change: the effective settle
// counted from the last send (its work lands within effDur of it), and
// never less than --settle.
func (r *runner) quiet() time.Duration {
	if r.crashQuiet > 0 {
		return r.crashQuiet
	}
	q := r.effSettle
	if last := r.lastSent.Load(); last != 0 {
		q -= time.Since(time.Unix(0, last))
	}
	if floor := min(r.o.Settle, r.effSettle); q < floor {
		q = floor
	}
	return q
}

// markSinks notes in rd how many calls and messages the sinks had received,
// so that effects can list those that came between two readings.
func (r *runner) markSinks(rd *reading) {
	if r.o.Sink != nil {
		rd.sinkLen = r.o.Sink.Len()
	}
	if r.o.SMTP != nil {
		rd.smtpLen = r.o.SMTP.Len()
	}
}

// effects returns the sink calls and the emails the SMTP sink counted
// between two readings, and stores them.
func (r *runner) effects(ctx context.Context, d *Delivery, phase string, from, to reading) []report.Effect {
	out := r.sinkEffects(ctx, d, phase, from, to)
	return append(out, r.emailEffects(ctx, d, phase, from, to)...)
}

// sinkEffects returns the sink calls between two readings and stores them.
func (r *runner) sinkEffects(ctx context.Context, d *Delivery, phase string, from, to reading) []report.Effect {
	if r.o.Sink == nil {
		return nil
	}
	calls := r.o.Sink.CallsSince(from.sinkLen)
	if n := to.sinkLen - from.sinkLen; n >= 0 && n < len(calls) {
		calls = calls[:n]
	}
	var out []report.Effect
	for _, c := range calls {
		if !r.o.Sink.Counts(c) {
			continue // listed apart, in the run's notes
		}
		out = append(out, report.Effect{At: c.At, Method: c.Method, Path: c.Path, Body: string(c.Body)})
		r.storeEffect(ctx, d, &store.EffectRow{Phase: phase, At: c.At, Method: c.Method, Path: c.Path, Body: c.Body})
	}
	return out
}

// storeEffect records e, one effect seen during phase for d (nil: none),
// with the run.
func (r *runner) storeEffect(ctx context.Context, d *Delivery, e *store.EffectRow) {
	if r.o.Store == nil {
		return
	}
	e.RunID = r.runID
	if d != nil {
		e.DeliveryID = d.ID
	}
	if r.hold(func(ctx context.Context, phase func(string) string) error {
		e.Phase = phase(e.Phase)
		_ = r.o.Store.InsertEffect(ctx, e)
		return nil
	}) {
		return
	}
	_ = r.o.Store.InsertEffect(ctx, e)
}

// emailEffects returns the messages the SMTP sink counted between two
// readings, and stores them (method SMTP, the recipients as path, the
// subject as body).
func (r *runner) emailEffects(ctx context.Context, d *Delivery, phase string, from, to reading) []report.Effect {
	if r.o.SMTP == nil {
		return nil
	}
	mails := r.o.SMTP.MailsSince(from.smtpLen)
	if n := to.smtpLen - from.smtpLen; n >= 0 && n < len(mails) {
		mails = mails[:n]
	}
	var out []report.Effect
	for _, m := range mails {
		if !r.o.SMTP.Counts(m) {
			continue
		}
		out = append(out, report.Effect{Kind: report.EffectEmail, At: m.At, From: m.From, To: m.To, Subject: m.Subject})
		r.storeEffect(ctx, d, &store.EffectRow{Phase: phase, At: m.At, Method: "SMTP", Path: strings.Join(m.To, ", "), Body: []byte(m.Subject)})
	}
	return out
}

// sinkCalls counts the sink calls among effects (not the emails).
func sinkCalls(effects []report.Effect) int {
	n := 0
	for _, e := range effects {
		if e.Kind == "" {
			n++
		}
	}
	return n
}

// emailDetails says, on every violation of res that concerns the SMTP
// sink's probe, which emails the phase saw: `dups sent "Your receipt" to
// alice@example.com ×3`.
func (r *runner) emailDetails(res *report.PhaseResult) {
	if r.o.SMTP == nil {
		return
	}
	s := report.EmailSummary(res.Effects)
	if s == "" {
		return
	}
	for k, p := range r.o.Probes {
		if !probe.IsSMTP(p) || k >= len(r.c.Probes) {
			continue
		}
		for i := range res.Violations {
			if res.Violations[i].Probe == r.c.Probes[k] {
				res.Violations[i].Detail = res.Phase + " sent " + s
			}
		}
	}
}
