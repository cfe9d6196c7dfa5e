package cmd

// The report flags check and keycheck share: --json and --report
// FORMAT=PATH (repeatable), of which one at most may take stdout.

import (
	"io"
	"strings"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/report"
)

// validateReportFlags refuses report targets that cannot be written: a
// malformed --report, or two documents for stdout.
func validateReportFlags(asJSON bool, reports []string) error {
	var stdout []string
	if asJSON {
		stdout = append(stdout, "--json")
	}
	for _, r := range reports {
		t, err := report.ParseTarget(r)
		if err != nil {
			return usageErr("%v", err)
		}
		if t.Path == "-" {
			stdout = append(stdout, "--report "+r)
		}
	}
	if len(stdout) > 1 {
		return usageErr("%s all write to stdout: only one report can go there (write the others to files, FORMAT=PATH)", strings.Join(stdout, " and "))
	}
	return nil
}

// reportDoc renders one finished run's report: as text, as JSON, and to a
// --report target.
type reportDoc struct {
	text   func(w io.Writer, color bool) error
	json   func(w io.Writer) error
	target func(t report.Target, stdout io.Writer) error
}

// writeReportFlags writes d as the flags ask: the text report (or --json)
// on stdout — through the pager when page is set — unless a --report FORMAT=- takes stdout,
// so that stdout always holds one document; then every --report.
func writeReportFlags(ios *iostreams.IO, asJSON bool, reports []string, page bool, d reportDoc) error {
	toStdout := false
	for _, r := range reports {
		if t, _ := report.ParseTarget(r); t.Path == "-" {
			toStdout = true
		}
	}
	if !toStdout && page {
		startPager(ios)
		defer ios.StopPager()
	}
	switch {
	case toStdout:
	case asJSON:
		if err := d.json(ios.Out); err != nil {
			return err
		}
	default:
		if err := d.text(ios.Out, ios.ColorEnabled()); err != nil {
			return err
		}
	}
	for _, r := range reports {
		t, _ := report.ParseTarget(r)
		if err := d.target(t, ios.Out); err != nil {
			return setupErr("--report %s: %v", r, err)
		}
	}
	return nil
}
