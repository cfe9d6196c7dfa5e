package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// startRun stores the run, when there is a store.
func (r *runner) startRun(ctx context.Context) error {
	if r.o.Store == nil {
		return nil
	}
	run := &store.Run{Kind: "check", StartedAt: r.c.StartedAt, Target: r.o.Target.String(), Seed: r.o.Seed, Options: r.o.RunOptions}
	if err := r.o.Store.CreateRun(ctx, run); err != nil {
		return setupf("%v", err)
	}
	r.runID, r.c.RunID = run.ID, run.ID
	return nil
}

// failRun marks the stored run as ended by err, worded by
// Options.ErrorText: a run past --max-time (a deadline), a probe that
// failed. A run stopped by the user is interrupted's.
func (r *runner) failRun(ctx context.Context, err error) {
	if r.o.Store == nil {
		return
	}
	text := err.Error()
	if r.o.ErrorText != nil {
		text = r.o.ErrorText(err)
	}
	_ = r.o.Store.FinishRun(context.WithoutCancel(ctx), r.runID, r.c.FinishedAt, "error", map[string]string{"error": text})
}

// Signaller is what the cause of a cancelled context may implement to name
// the signal that stopped the run ("SIGTERM"), for the report.
type Signaller interface{ SignalName() string }

// interrupted finishes a run stopped by the user (ctx cancelled): the phase
// in progress is marked interrupted (what it sent is stored, nothing of it
// judged), the verdict is interrupted, and the run is stored with its
// report and the verdicts reached, as a finished run is — stopped by the
// user is said as a replay says it, not as a failure.
func (r *runner) interrupted(ctx context.Context) *report.Check {
	for i := range r.c.Deliveries {
		for j := range r.c.Deliveries[i].Phases {
			markInterrupted(&r.c.Deliveries[i].Phases[j])
		}
	}
	if r.c.Order != nil {
		markInterrupted(r.c.Order)
	}
	var s Signaller
	if errors.As(context.Cause(ctx), &s) {
		r.c.Interrupted = s.SignalName()
	}
	r.c.Latency = r.latencySummary()
	r.c.Verdict = report.VerdictInterrupted
	if r.o.Store != nil {
		ctx := context.WithoutCancel(ctx)
		_ = r.storeVerdicts(ctx)
		_ = r.o.Store.FinishRun(ctx, r.runID, r.c.FinishedAt, report.VerdictInterrupted, r.c)
	}
	return r.c
}

// interruptedMessage is the message of the phase a run was stopped in.
const interruptedMessage = "interrupted: the run was stopped during this phase; what it sent is stored, nothing of it was judged"

// markInterrupted marks ph interrupted when it is the phase that was
// stopped: the one whose result is the error the cancelled context caused.
func markInterrupted(ph *report.PhaseResult) {
	if ph.Status == report.Error {
		ph.Status, ph.Message = report.Interrupted, interruptedMessage
	}
}

// finishRun stores the verdicts and the finished report as the run's summary.
func (r *runner) finishRun(ctx context.Context) error {
	if r.o.Store == nil {
		return nil
	}
	if err := r.storeVerdicts(ctx); err != nil {
		return setupf("%v", err)
	}
	if err := r.o.Store.FinishRun(ctx, r.runID, r.c.FinishedAt, r.c.Verdict, r.c); err != nil {
		return setupf("%v", err)
	}
	return nil
}

// record stores an attempt and keeps its latency for the summary.
func (r *runner) record(ctx context.Context, a *store.Attempt, d *Delivery, phase string, copyN int, eventID string) error {
	a.RunID, a.Phase, a.Copy, a.EventID = r.runID, phase, copyN, eventID
	if d != nil {
		a.DeliveryID = d.ID
	}
	if a.Err == "" && !a.Lost && a.Status != 0 {
		r.answers = append(r.answers, a.Latency)
		if d != nil {
			r.answered[d.ID] = append(r.answered[d.ID], store.Attempt{Phase: phase, Copy: copyN, Latency: a.Latency, Status: a.Status})
		}
	}
	held := *a
	if r.o.Store != nil && !r.hold(func(ctx context.Context, phase func(string) string) error {
		held.Phase = phase(held.Phase)
		return r.o.Store.InsertAttempt(ctx, &held)
	}) {
		if err := r.o.Store.InsertAttempt(ctx, a); err != nil {
			return setupf("%v", err)
		}
	}
	r.obs.Attempt(*a)
	return nil
}

// storeReading stores every probe's value in rd, taken at point of phase,
// and tells the Observer.
func (r *runner) storeReading(ctx context.Context, d *Delivery, phase, point string, rd reading) error {
	if r.ov != nil {
		r.ov.observe(rd)
	}
	if r.o.Store != nil {
		row := store.ProbeReading{RunID: r.runID, DeliveryID: deliveryID(d), Phase: phase, Point: point, ReadAt: rd.at,
			SettleFrom: rd.from, ChangedAt: rd.lastChange}
		probes := r.o.Probes
		if !r.hold(func(ctx context.Context, name func(string) string) error {
			row.Phase = name(row.Phase)
			return StoreReading(ctx, r.o.Store, row, probes, rd.vals)
		}) {
			if err := StoreReading(ctx, r.o.Store, row, probes, rd.vals); err != nil {
				return setupf("%v", err)
			}
		}
	}
	r.obs.Reading(Reading{DeliveryID: deliveryID(d), Phase: phase, Point: point, Probes: r.c.Probes, Values: rd.vals, At: rd.at})
	return nil
}

// StoreReading stores one reading of probes, vals[i] being probes[i]'s
// value: a row like row (run, delivery, phase, point, time) for each probe,
// with its name, its text and its number when it is one. check and keycheck
// both store their readings through it.
func StoreReading(ctx context.Context, st *store.Store, row store.ProbeReading, probes []probe.Probe, vals []probe.Value) error {
	for i, p := range probes {
		pr := row
		pr.Probe, pr.Value, pr.Numeric = p.Name(), vals[i].Text, nil
		if vals[i].IsNum {
			n := vals[i].Num
			pr.Numeric = &n
		}
		if err := st.InsertProbeReading(ctx, &pr); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) storeVerdicts(ctx context.Context) error {
	add := func(did int64, p report.PhaseResult) error {
		detail, _ := json.Marshal(p)
		return r.o.Store.InsertVerdict(ctx, &store.VerdictRow{RunID: r.runID, DeliveryID: did, Phase: p.Phase,
			Status: string(p.Status), Message: p.Message, Detail: detail})
	}
	for _, d := range r.c.Deliveries {
		for _, p := range d.Phases {
			if err := add(d.DeliveryID, p); err != nil {
				return err
			}
		}
	}
	if r.c.Order != nil {
		return add(0, *r.c.Order)
	}
	return nil
}

// Load returns the report of a finished check run from the store (its
// summary is the full report), so it can be re-rendered without re-running.
func Load(ctx context.Context, st *store.Store, runID int64) (*report.Check, error) {
	run, err := st.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if run.Kind != "check" {
		return nil, fmt.Errorf("run %d is a %s run, not a check", runID, run.Kind)
	}
	if run.FinishedAt.IsZero() || run.Verdict == "error" || run.Verdict == "" {
		return nil, fmt.Errorf("check run %d did not finish (verdict %q)", runID, run.Verdict)
	}
	var c report.Check
	if err := json.Unmarshal(run.Summary, &c); err != nil {
		return nil, fmt.Errorf("check run %d: read its report: %w", runID, err)
	}
	if c.SchemaVersion == 0 {
		// An interrupted run stored before reports were kept for them.
		return nil, fmt.Errorf("check run %d did not finish (verdict %q) and has no report", runID, run.Verdict)
	}
	return &c, nil
}
