package cmd

// hookreplay report merge: the reports of one check's shards (check --shard
// K/N, one CI job each) joined into one, in any format.

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/report"
)

type reportMergeOptions struct {
	IO      *iostreams.IO
	Files   []string
	Reports []string
	JSON    bool
}

func newReportCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Work with check reports: merge the shards of a check",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageErr("report needs a subcommand: merge (see 'hookreplay report --help')")
		},
	}
	cmd.AddCommand(newReportMergeCmd(f, nil))
	return cmd
}

func newReportMergeCmd(f *factory, runF func(*reportMergeOptions) error) *cobra.Command {
	o := &reportMergeOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Join the JSON reports of a check's shards into one report",
		Long: `Merge joins the reports of a check split across CI jobs with --shard K/N
into the report the whole check would have written: every delivery's
phases, in shard order, and the worst verdict of them (interrupted, error,
fail, inconclusive, pass). It reads the JSON reports the shards wrote
(--report json=PATH) and writes any format: text on stdout, --json, or
--report FORMAT=PATH (junit, markdown, json, text, html; repeatable). The
HTML page and the Markdown have no timelines: those are drawn from each
shard's store, with 'hookreplay runs show ID --report html=PATH' there.

It refuses reports that are not the shards of one check: another handler,
other probes or options, shards of a different split or of different
selections (a delivery captured between the jobs' starts), a shard given
twice or missing. Reports written without --shard merge when they agree on
all of that and judged different deliveries.

Exit codes are check's: 0 pass, 1 a violation, 3 inconclusive, 2 a shard
that stopped before it finished (error or interrupted) or a usage error.`,
		Example: `  # after a CI matrix of 'hookreplay check ... --shard K/4 --report json=shard-K.json'
  hookreplay report merge shard-*.json --report junit=check.xml --report markdown=$GITHUB_STEP_SUMMARY`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := validateReportFlags(o.JSON, o.Reports); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return reportMergeRun(o)
		},
	}
	cmd.Flags().StringArrayVar(&o.Reports, "report", nil, "also write the merged report: json=PATH, junit=PATH, markdown=PATH, text=PATH (repeatable; PATH - is stdout, instead of the text report)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the merged JSON report on stdout instead of text")
	return cmd
}

func reportMergeRun(o *reportMergeOptions) error {
	var in []report.MergeInput
	for _, path := range o.Files {
		f, err := os.Open(path)
		if err != nil {
			return openErr("report merge", path, err)
		}
		c, err := report.ReadJSON(f)
		f.Close()
		if err != nil {
			return usageErr("report merge %s: %v", path, err)
		}
		in = append(in, report.MergeInput{Name: path, Check: c})
	}
	m, err := report.Merge(in)
	if err != nil {
		return usageErr("report merge: %v", err)
	}
	if err := writeReportFlags(o.IO, o.JSON, o.Reports, false, reportDoc{
		text:   func(w io.Writer, color bool) error { return report.Text(w, m, color) },
		json:   func(w io.Writer) error { return report.JSON(w, m) },
		target: func(t report.Target, stdout io.Writer) error { return t.Write(stdout, m) },
	}); err != nil {
		return err
	}
	switch code := report.ExitCode(m.Verdict); code {
	case 0:
		return nil
	case 1, 3:
		return silentExit(code)
	}
	return setupErr("a shard stopped before it finished (verdict %s): the merged report holds what was judged", m.Verdict)
}
