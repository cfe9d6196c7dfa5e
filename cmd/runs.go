package cmd

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

type runsOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	Kind  string
	Limit int
	JSON  bool
	// jsonOut narrows and filters the JSON (--json FIELDS, --jq, --template).
	jsonOut *jsonOutput
	// RunID is set for 'runs show RUN'.
	RunID int64
}

func newRunsCmd(f *factory, runF func(*runsOptions) error) *cobra.Command {
	o := &runsOptions{IO: f.IO, Store: f.ExistingStore}
	var listJSON, showJSON *jsonOutput
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List replay and check runs",
		Long: `Every 'hookreplay replay' and 'hookreplay check' is recorded as a run with one
attempt per copy sent. 'runs' lists them, newest first; 'runs show RUN' shows a
run's attempts.`,
		Example: `  hookreplay runs
  hookreplay runs --kind check --limit 5
  hookreplay runs show 3
  hookreplay runs show 3 --json | jq '.attempts[] | {copy, status, latency_ns}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Kind != "" && o.Kind != "replay" && o.Kind != "check" {
				return usageErr("--kind %q: want replay or check", o.Kind)
			}
			if err := intFlagIn("--limit", o.Limit, 0, maxListLimit); err != nil {
				return err
			}
			o.jsonOut = listJSON
			if runF != nil {
				return runF(o)
			}
			return runsListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Kind, "kind", "", "only runs of this kind: replay or check")
	cmd.Flags().IntVar(&o.Limit, "limit", 20, "show at most N runs (0: all)")
	listJSON = addJSONFlags(cmd.Flags(), &o.JSON, "the runs")

	show := &cobra.Command{
		Use:     "show RUN",
		Short:   "Show one run and its attempts",
		Example: "  hookreplay runs show 3\n  hookreplay runs show 3 --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("run", args[0])
			if err != nil {
				return err
			}
			o.RunID = id
			o.jsonOut = showJSON
			if runF != nil {
				return runF(o)
			}
			return runsShowRun(cmd.Context(), o)
		},
	}
	showJSON = addJSONFlags(show.Flags(), &o.JSON, "the run and its attempts")
	cmd.AddCommand(show)
	return cmd
}

func runsListRun(ctx context.Context, o *runsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.ListRuns(ctx, o.Kind, o.Limit)
	if err != nil {
		return setupErr("%v", err)
	}
	counts := make([]int, len(runs))
	for i, r := range runs {
		as, err := st.ListAttempts(ctx, r.ID)
		if err != nil {
			return setupErr("%v", err)
		}
		counts[i] = len(as)
	}
	if o.JSON {
		return o.jsonOut.write(o.IO.Out, func(w io.Writer) error { return report.RunsJSON(w, runs, counts) })
	}
	return report.Runs(o.IO.Out, report.Colors(o.IO.ColorEnabled()), runs, counts, o.Kind)
}

func runsShowRun(ctx context.Context, o *runsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.GetRun(ctx, o.RunID)
	if errors.Is(err, store.ErrNotFound) {
		return usageErr("no run %d (see 'hookreplay runs')", o.RunID)
	}
	if err != nil {
		return setupErr("%v", err)
	}
	as, err := st.ListAttempts(ctx, r.ID)
	if err != nil {
		return setupErr("%v", err)
	}
	if o.JSON {
		return o.jsonOut.write(o.IO.Out, func(w io.Writer) error { return report.RunJSONDoc(w, r, as) })
	}
	return report.Run(o.IO.Out, report.Colors(o.IO.ColorEnabled()), r, as)
}
