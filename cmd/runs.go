package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
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
			id, err := replayParseID(args[0])
			if err != nil {
				return usageErr("%q is not a run id (see 'hookreplay runs')", args[0])
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

// runJSON is a run as printed by --json.
type runJSON struct {
	ID         int64           `json:"id"`
	Kind       string          `json:"kind"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
	Target     string          `json:"target"`
	Seed       int64           `json:"seed"`
	Options    map[string]any  `json:"options"`
	Verdict    string          `json:"verdict"`
	Attempts   int             `json:"attempts"`
	Summary    json.RawMessage `json:"summary"`
}

func toRunJSON(r *store.Run, attempts int) runJSON {
	j := runJSON{ID: r.ID, Kind: r.Kind, StartedAt: r.StartedAt, Target: r.Target, Seed: r.Seed,
		Options: r.Options, Verdict: r.Verdict, Attempts: attempts, Summary: r.Summary}
	if !r.FinishedAt.IsZero() {
		t := r.FinishedAt
		j.FinishedAt = &t
	}
	if len(j.Summary) == 0 || !json.Valid(j.Summary) {
		j.Summary = json.RawMessage("{}")
	}
	if j.Options == nil {
		j.Options = map[string]any{}
	}
	return j
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
		out := []runJSON{}
		for i, r := range runs {
			out = append(out, toRunJSON(r, counts[i]))
		}
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(runs) == 0 {
		what := "runs"
		if o.Kind != "" {
			what = o.Kind + " runs"
		}
		fmt.Fprintf(o.IO.Out, "no %s yet (start one with 'hookreplay replay' or 'hookreplay check')\n", what)
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tKIND\tSTARTED\tTOOK\tATTEMPTS\tVERDICT\tTARGET")
	for i, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Kind, r.StartedAt.Local().Format("2006-01-02 15:04:05"),
			runTook(r), counts[i], runsVerdict(o.IO, r), r.Target)
	}
	return tw.Flush()
}

func runTook(r *store.Run) string {
	if r.FinishedAt.IsZero() {
		return "unfinished"
	}
	return replay.FormatLatency(r.FinishedAt.Sub(r.StartedAt))
}

func runsVerdict(ios *iostreams.IO, r *store.Run) string {
	v := r.Verdict
	if v == "" {
		v = "-"
	}
	switch v {
	case "ok", "pass":
		return ios.Color(color.FgGreen)(v)
	case "fail", "errors", "error":
		return ios.Color(color.FgRed)(v)
	case "inconclusive", "interrupted":
		return ios.Color(color.FgYellow)(v)
	}
	return v
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
		doc := struct {
			Run      runJSON       `json:"run"`
			Attempts []attemptJSON `json:"attempts"`
		}{toRunJSON(r, len(as)), attemptsJSON(as)}
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	w := o.IO.Out
	bold := o.IO.Color(color.Bold)
	fmt.Fprintf(w, "%s %d  %s → %s\n", bold("run"), r.ID, r.Kind, r.Target)
	fmt.Fprintf(w, "  started   %s", r.StartedAt.Local().Format("2006-01-02 15:04:05.000"))
	if !r.FinishedAt.IsZero() {
		fmt.Fprintf(w, ", took %s", runTook(r))
	} else {
		fmt.Fprint(w, ", never finished (interrupted or still running)")
	}
	fmt.Fprintf(w, "\n  verdict   %s\n", runsVerdict(o.IO, r))
	if r.Seed != 0 {
		fmt.Fprintf(w, "  seed      %d\n", r.Seed)
	}
	if len(r.Options) > 0 {
		keys := make([]string, 0, len(r.Options))
		for k := range r.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			v, _ := json.Marshal(r.Options[k])
			parts = append(parts, k+"="+string(v))
		}
		fmt.Fprintf(w, "  options   %s\n", strings.Join(parts, " "))
	}
	if len(as) == 0 {
		fmt.Fprintln(w, "  no attempts recorded")
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTEMPT\tPHASE\tDELIVERY\tCOPY\tCONN\tSENT\tSTATUS\tLATENCY\tNOTE")
	for _, a := range as {
		sent := "-"
		if !a.SentAt.IsZero() {
			sent = "+" + replay.FormatLatency(a.SentAt.Sub(r.StartedAt))
		}
		status := "-"
		switch {
		case a.Status != 0:
			status = o.IO.StatusColor(a.Status, fmt.Sprint(a.Status))
		case a.Lost && a.Err == "":
			status = o.IO.Color(color.FgMagenta)("lost")
		case a.Err != "":
			status = o.IO.Color(color.FgRed)("ERR")
		}
		var note []string
		if a.Err != "" {
			note = append(note, a.Err)
		}
		if a.StandsFor > 0 || a.Detail["retry"] != nil {
			note = append(note, "stands for "+replay.FormatStandsFor(a.StandsFor))
		}
		if a.Edit != "" {
			note = append(note, a.Edit)
		}
		if len(a.ResponseBody) > 0 {
			note = append(note, oneLineBody(a.ResponseBody, 50))
		}
		conn := "-"
		if a.ConnID != 0 {
			conn = fmt.Sprint(a.ConnID)
		}
		lat := "-"
		if a.Latency > 0 {
			lat = replay.FormatLatency(a.Latency)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Phase, a.DeliveryID, a.Copy, conn, sent, status, lat, strings.Join(note, " · "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Kind == "replay" && len(r.Summary) > 2 {
		var s replay.Summary
		if json.Unmarshal(r.Summary, &s) == nil && s.Attempts > 0 {
			fmt.Fprintln(w)
			replay.WriteSummary(w, o.IO, s)
		}
	}
	return nil
}

// attemptJSON is an attempt as printed by --json: the stored fields plus the
// response body as text when it is UTF-8 (response_body stays base64).
type attemptJSON struct {
	store.Attempt
	ResponseText *string `json:"response_text,omitempty"`
}

func attemptsJSON(as []*store.Attempt) []attemptJSON {
	out := make([]attemptJSON, 0, len(as))
	for _, a := range as {
		j := attemptJSON{Attempt: *a}
		if len(a.ResponseBody) > 0 && utf8.Valid(a.ResponseBody) {
			s := string(a.ResponseBody)
			j.ResponseText = &s
		}
		out = append(out, j)
	}
	return out
}

func oneLineBody(b []byte, max int) string {
	s := message.Printable(strings.Join(strings.Fields(string(b)), " "))
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}
