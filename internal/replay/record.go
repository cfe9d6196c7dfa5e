package replay

import (
	"context"
	"fmt"

	"github.com/hookreplay/hookreplay/internal/store"
)

// Recorded is a finished run as stored: the run row, what the engine did and
// its summary.
type Recorded struct {
	Run     *store.Run
	Result  *Result
	Summary Summary
}

// Execute runs job as a stored run of kind ("replay"): a runs row with the
// options (never the secret) and seed, an attempts row per copy as it
// finishes, and the summary and verdict ("ok", "errors" or "interrupted")
// when it ends — also when ctx is cancelled. also (may be nil) sees every
// attempt after it was stored (live output).
func Execute(ctx context.Context, st *store.Store, job *Job, kind string, options map[string]any, also AttemptSink) (*Recorded, error) {
	p := job.Plan()
	run := &store.Run{Kind: kind, Target: p.Target.URL.String(), Seed: job.Seed, Options: options}
	if err := st.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	res, sinkErr := job.Run(ctx, MultiSink{StoreSink{Store: st, RunID: run.ID}, also})
	sum := Summarize(res, p.Deliveries)
	verdict := "ok"
	switch {
	case res.Interrupted:
		verdict = "interrupted"
	case sum.Errors > 0:
		verdict = "errors"
	}
	run.FinishedAt = res.Finished
	run.Verdict = verdict
	if err := st.FinishRun(context.WithoutCancel(ctx), run.ID, res.Finished, verdict, sum); err != nil {
		if sinkErr != nil {
			// The store went away under the run (a team store's server
			// restarted): what stopped it is the news, not that its end
			// could not be written either.
			return nil, fmt.Errorf("run %d stopped after %d sent: %w (its end is not recorded)", run.ID, len(res.Attempts), sinkErr)
		}
		return nil, err
	}
	if sinkErr != nil {
		return &Recorded{Run: run, Result: res, Summary: sum}, fmt.Errorf("run %d stopped: %w", run.ID, sinkErr)
	}
	return &Recorded{Run: run, Result: res, Summary: sum}, nil
}

// PlanOptions is the options map recorded with a run (no secrets).
func PlanOptions(p Plan) map[string]any {
	ids := make([]int64, len(p.Deliveries))
	for i, d := range p.Deliveries {
		ids[i] = d.ID
	}
	m := map[string]any{
		"deliveries":  ids,
		"copies":      p.Copies,
		"order":       string(p.Order),
		"concurrency": p.Concurrency,
		"timeout":     p.Target.Timeout.String(),
		"resigned":    p.Secret != "",
		"raw":         p.Raw,
	}
	if p.Target.Host != "" {
		m["host"] = p.Target.Host
	}
	if p.Target.TLS != nil && p.Target.TLS.InsecureSkipVerify {
		m["insecure"] = true
	}
	if p.LoseResponse > 0 {
		m["lose_response"] = p.LoseResponse
	}
	if p.Schedule != "" && p.Schedule != "none" {
		m["schedule"] = p.Schedule
		m["speedup"] = p.Speedup
	}
	if p.Seed != 0 {
		m["seed"] = p.Seed
	}
	var edits []string
	for _, h := range p.Edits.SetHeaders {
		edits = append(edits, "set-header "+h.Name)
	}
	for _, h := range p.Edits.DropHeaders {
		edits = append(edits, "drop-header "+h)
	}
	if p.Edits.BodyFile != "" {
		edits = append(edits, "body-file "+p.Edits.BodyFile)
	}
	for _, s := range p.Edits.JSONSet {
		edits = append(edits, "json-set "+s)
	}
	if len(p.Overrides) > 0 {
		edits = append(edits, "editor")
	}
	if len(edits) > 0 {
		m["edits"] = edits
	}
	return m
}
