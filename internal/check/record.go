package check

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// record stores an attempt and keeps its latency for the summary.
func (r *runner) record(ctx context.Context, a *store.Attempt, d *Delivery, phase string, copyN int, eventID string) error {
	a.RunID, a.Phase, a.Copy, a.EventID = r.runID, phase, copyN, eventID
	if d != nil {
		a.DeliveryID = d.ID
	}
	if a.Err == "" && !a.Lost && a.Status != 0 {
		r.answers = append(r.answers, a.Latency)
	}
	if r.o.Store != nil {
		if err := r.o.Store.InsertAttempt(ctx, a); err != nil {
			return setupf("%v", err)
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
	return &c, nil
}
