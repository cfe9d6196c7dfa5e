package cmd

import (
	"context"
	"errors"

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
	// RunID is set for 'runs show RUN'.
	RunID int64
}

func newRunsCmd(f *factory, runF func(*runsOptions) error) *cobra.Command {
	o := &runsOptions{IO: f.IO, Store: f.ExistingStore}
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
			if runF != nil {
				return runF(o)
			}
			return runsListRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Kind, "kind", "", "only runs of this kind: replay or check")
	cmd.Flags().IntVar(&o.Limit, "limit", 20, "show at most N runs (0: all)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")

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
			if runF != nil {
				return runF(o)
			}
			return runsShowRun(cmd.Context(), o)
		},
	}
	show.Flags().BoolVar(&o.JSON, "json", false, "print the run and its attempts as JSON")
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
		return report.RunsJSON(o.IO.Out, runs, counts)
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
		return report.RunJSONDoc(o.IO.Out, r, as)
	}
	return report.Run(o.IO.Out, report.Colors(o.IO.ColorEnabled()), r, as)
}
