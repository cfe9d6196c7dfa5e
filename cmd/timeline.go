package cmd

// The timeline the HTML and Markdown reports draw, built from what the
// store recorded of a run (report.NewTimeline).

import (
	"context"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// timelineRecords reads what the store recorded of run id for its timeline.
func timelineRecords(ctx context.Context, st *store.Store, id int64) (report.TimelineRecords, error) {
	run, err := st.GetRun(ctx, id)
	if err != nil {
		return report.TimelineRecords{}, err
	}
	as, err := st.ListAttempts(ctx, id)
	if err != nil {
		return report.TimelineRecords{}, err
	}
	rds, err := st.ListProbeReadings(ctx, id)
	if err != nil {
		return report.TimelineRecords{}, err
	}
	return report.TimelineRecords{Run: run, Attempts: as, Readings: rds}, nil
}

// wantsTimeline reports whether one of the --report values draws a
// timeline (html, markdown), so that a run whose reports do not is not
// made to read its records back.
func wantsTimeline(reports []string) bool {
	for _, r := range reports {
		if t, err := report.ParseTarget(r); err == nil && (t.Format == report.FormatHTML || t.Format == report.FormatMarkdown) {
			return true
		}
	}
	return false
}

// addCheckTimeline sets c's timeline from the store's records of its run
// when a report draws it. A run whose records cannot be read gets none:
// its reports say so, the run's verdict stands.
func addCheckTimeline(ctx context.Context, st *store.Store, c *report.Check, reports []string) {
	if c == nil || st == nil || c.RunID == 0 || !wantsTimeline(reports) {
		return
	}
	if rec, err := timelineRecords(context.WithoutCancel(ctx), st, c.RunID); err == nil {
		c.Timeline = report.NewTimeline(c, rec)
	}
}

// addKeyCheckTimeline is addCheckTimeline for a keycheck run.
func addKeyCheckTimeline(ctx context.Context, st *store.Store, k *report.KeyCheck, reports []string) {
	if k == nil || st == nil || k.RunID == 0 || !wantsTimeline(reports) {
		return
	}
	if rec, err := timelineRecords(context.WithoutCancel(ctx), st, k.RunID); err == nil {
		k.Timeline = report.NewKeyCheckTimeline(k, rec)
	}
}
