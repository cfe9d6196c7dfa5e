package cmd

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/keycheck"
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
	// Reports re-render a check run's stored report (runs show --report).
	Reports []report.Target
}

func newRunsCmd(f *factory, runF func(*runsOptions) error) *cobra.Command {
	o := &runsOptions{IO: f.IO, Store: f.ExistingStore}
	var listJSON, showJSON *jsonOutput
	var reports []string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List replay, check and keycheck runs",
		Long: `Every 'hookreplay replay', 'hookreplay check' and 'hookreplay keycheck' is
recorded as a run with one attempt per request sent. 'runs' lists them, newest first; 'runs show RUN' shows a
run's attempts.`,
		Example: `  hookreplay runs
  hookreplay runs --kind check --limit 5
  hookreplay runs show 3
  hookreplay runs show 3 --json | jq '.attempts[] | {copy, status, latency_ns}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Kind != "" && o.Kind != "replay" && o.Kind != "check" && o.Kind != keycheck.Kind {
				return usageErr("--kind %q: want replay, check or keycheck", o.Kind)
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
	cmd.Flags().StringVar(&o.Kind, "kind", "", "only runs of this kind: replay, check or keycheck")
	cmd.Flags().IntVar(&o.Limit, "limit", defaultLimit, "at most this many (0 for all)")
	listJSON = addJSONFlags(cmd.Flags(), &o.JSON, "the runs").knownFields(report.RunJSON{})

	show := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run and its attempts",
		Long: `Shows one run and its attempts. A check run's report is kept in the store
whole, so --report renders it again in any format without re-running the check
(a JUnit file for a CI job that did not ask for one, the Markdown for a PR);
html draws each phase as a timeline from the run's attempts and probe readings.`,
		Example: `  hookreplay runs show 3
  hookreplay runs show 3 --json
  hookreplay runs show 7 --report junit=check.xml --report markdown=check.md
  hookreplay runs show 7 --report html=run7.html
  hookreplay runs show 7 --report text=-`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("run", args[0])
			if err != nil {
				return err
			}
			o.RunID = id
			o.jsonOut = showJSON
			o.Reports = nil
			stdout := 0
			for _, r := range reports {
				t, err := report.ParseTarget(r)
				if err != nil {
					return usageErr("%v", err)
				}
				if t.Path == "-" {
					stdout++
				}
				o.Reports = append(o.Reports, t)
			}
			if stdout > 1 || (stdout == 1 && o.JSON) {
				return usageErr("only one report can go to stdout (write the others to files, FORMAT=PATH)")
			}
			if runF != nil {
				return runF(o)
			}
			return runsShowRun(cmd.Context(), o)
		},
	}
	showJSON = addJSONFlags(show.Flags(), &o.JSON, "the run and its attempts").knownFields(report.RunDoc{})
	show.Flags().StringArrayVar(&reports, "report", nil, "render a check or keycheck run's stored report: text=PATH, json=PATH, junit=PATH, markdown=PATH, html=PATH (repeatable; PATH - is stdout, instead of the run view)")
	cmd.AddCommand(show)
	return cmd
}

// reportValues is Reports as --report takes them.
func (o *runsOptions) reportValues() []string {
	out := make([]string, len(o.Reports))
	for i, t := range o.Reports {
		out[i] = t.String()
	}
	return out
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
		if counts[i], err = st.CountAttempts(ctx, r.ID); err != nil {
			return setupErr("%v", err)
		}
	}
	if o.JSON {
		return o.jsonOut.write(o.IO, func(w io.Writer) error { return report.RunsJSON(w, runs, counts) })
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
	startPager(o.IO)
	defer o.IO.StopPager()
	if len(o.Reports) > 0 {
		done, err := runsShowReports(ctx, o, st, r)
		if err != nil || done {
			return err
		}
	}
	as, err := st.ListAttempts(ctx, r.ID)
	if err != nil {
		return setupErr("%v", err)
	}
	if o.JSON {
		return o.jsonOut.write(o.IO, func(w io.Writer) error { return report.RunJSONDoc(w, r, as) })
	}
	return report.Run(o.IO.Out, report.Colors(o.IO.ColorEnabled()), r, as)
}

// runsShowReports writes the stored report of check run r to each --report
// target; done is true when one of them took stdout (the run view is not
// printed then, so stdout holds one document).
func runsShowReports(ctx context.Context, o *runsOptions, st *store.Store, r *store.Run) (done bool, err error) {
	if r.Kind == keycheck.Kind {
		k, err := keycheck.Load(ctx, st, r.ID)
		if err != nil {
			return false, usageErr("--report: %v", err)
		}
		addKeyCheckTimeline(ctx, st, k, o.reportValues())
		for _, t := range o.Reports {
			if err := t.WriteKeyCheck(o.IO.Out, k); err != nil {
				return false, setupErr("--report %s: %v", t, err)
			}
			done = done || t.Path == "-"
		}
		return done, nil
	}
	if r.Kind != "check" {
		return false, usageErr("--report: run %d is a %s run; reports are rendered from check and keycheck runs (see 'hookreplay runs --kind check')", r.ID, r.Kind)
	}
	c, err := check.Load(ctx, st, r.ID)
	if err != nil {
		return false, usageErr("--report: %v", err)
	}
	addCheckTimeline(ctx, st, c, o.reportValues())
	for _, t := range o.Reports {
		if err := t.Write(o.IO.Out, c); err != nil {
			return false, setupErr("--report %s: %v", t, err)
		}
		done = done || t.Path == "-"
	}
	return done, nil
}
