package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// mdMark is the emoji a status gets in the Markdown table.
func mdMark(s Status) string {
	switch s {
	case Pass:
		return "✅"
	case Fail:
		return "❌"
	case Warn:
		return "⚠️"
	case Inconclusive:
		return "❔"
	case Error:
		return "🛑"
	case Interrupted:
		return "⏹️"
	}
	return "➖"
}

func mdVerdict(v string) string {
	switch v {
	case VerdictPass:
		return "✅ pass"
	case VerdictFail:
		return "❌ fail"
	case VerdictInconclusive:
		return "❔ inconclusive"
	case VerdictError:
		return "🛑 error: the run stopped before it finished"
	case VerdictInterrupted:
		return "⏹️ interrupted: the run was stopped before it finished"
	}
	return v
}

// Markdown writes c for a pull-request comment or $GITHUB_STEP_SUMMARY: a
// heading with the verdict, a table of deliveries × phases (✅ pass, ❌ fail,
// ⚠️ warning, ➖ skipped or not judged, ❔ inconclusive), then each violation
// with its fix hint, warnings and notes.
func Markdown(w io.Writer, c *Check) error {
	c = normalized(c)
	b := bufio.NewWriter(w)
	writeMdHead(b, c)
	writeMdTable(b, c)
	writeMdFindings(b, c)
	if l := c.Latency; l != nil {
		s := fmt.Sprintf("Latency: first answer %s, p50 %s, max %s", Duration(l.First), Duration(l.P50), Duration(l.Max))
		if l.ProviderTimeout > 0 {
			s += fmt.Sprintf(" (provider timeout %s)", Duration(l.ProviderTimeout))
		}
		fmt.Fprintf(b, "%s.\n\n", s)
	}
	writeMdDetails(b, c)
	return b.Flush()
}

// writeMdHead is the heading with the verdict, the one-line account with the
// exit code, and the target, run and probes.
func writeMdHead(b *bufio.Writer, c *Check) {
	fmt.Fprintf(b, "## hookreplay check: %s\n\n", mdVerdict(c.Verdict))
	line := fmt.Sprintf("**%s.** Exit %d: %s.", mdText(capitalize(c.summary(c.Verdict))), c.ExitCode(), c.exitMeaning())
	fmt.Fprintln(b, line)
	fmt.Fprintln(b)
	var facts []string
	if c.Target != "" {
		facts = append(facts, "target "+mdCode(c.Target))
	}
	if c.RunID != 0 {
		facts = append(facts, fmt.Sprintf("run %d", c.RunID))
	}
	for _, p := range c.Probes {
		facts = append(facts, "probe "+mdCode(p))
	}
	if len(facts) > 0 {
		fmt.Fprintln(b, strings.Join(facts, " · "))
		fmt.Fprintln(b)
	}
}

// writeMdTable is the deliveries × phases table and the order phase's line.
func writeMdTable(b *bufio.Writer, c *Check) {
	cols := phaseColumns(c)
	if len(c.Deliveries) > 0 && len(cols) > 0 {
		fmt.Fprintf(b, "| delivery | %s |\n", strings.Join(cols, " | "))
		fmt.Fprintf(b, "|---|%s\n", strings.Repeat(":---:|", len(cols)))
		for i := range c.Deliveries {
			d := &c.Deliveries[i]
			cells := make([]string, len(cols))
			for _, ph := range d.Phases {
				if k := slices.Index(cols, ph.Phase); k >= 0 {
					cells[k] = mdMark(ph.Status)
				}
			}
			fmt.Fprintf(b, "| %s | %s |\n", mdDelivery(d), strings.Join(cells, " | "))
		}
		fmt.Fprintln(b)
	}
	if o := c.Order; o != nil {
		fmt.Fprintf(b, "Order of deliveries: %s %s\n\n", mdMark(o.Status), mdText(o.Message))
	}
}

// writeMdFindings lists the failed phases with their violations, then the
// phases that warned, were inconclusive or could not be judged.
func writeMdFindings(b *bufio.Writer, c *Check) {
	var fails, others []string
	seen := newOnce(c)
	var last *DeliveryResult
	for _, r := range c.allPhases() {
		if r.D != last || r.D == nil {
			seen.delivery()
			last = r.D
		}
		title := mdText(r.P.Phase)
		if r.D != nil {
			title = mdDelivery(r.D) + " — " + title
		} else {
			title = "order of deliveries"
		}
		switch r.P.Status {
		case Fail:
			var id int64
			if r.D != nil {
				id = r.D.DeliveryID
			}
			f := mdFailure(title, r.P)
			if m := c.Timeline.Section(id, r.P.Phase).Mermaid(); m != "" {
				f += "\n" + m
			}
			fails = append(fails, f)
		case Warn, Inconclusive, NotJudged, Error, Interrupted:
			var s strings.Builder
			fmt.Fprintf(&s, "- %s %s: %s\n", mdMark(r.P.Status), title, mdText(r.P.Message))
			for _, wn := range r.P.Warnings {
				fmt.Fprintf(&s, "  - %s\n", mdText(seen.text(r.P.Phase, wn)))
			}
			if h := warnHint(r.P); h != "" {
				fmt.Fprintf(&s, "  - **Fix:** %s\n", mdText(h))
			}
			others = append(others, s.String())
		}
	}
	if len(fails) > 0 {
		fmt.Fprintf(b, "### Violations\n\n%s", strings.Join(fails, "\n"))
		fmt.Fprintln(b)
	}
	if len(others) > 0 {
		fmt.Fprintf(b, "### Warnings and phases not judged\n\n%s\n", strings.Join(others, ""))
	}
}

// mdFailure is a failed phase's section: its message and each violation
// (the first maxViolationsShown) with where, values, answer and fix hint.
func mdFailure(title string, ph *PhaseResult) string {
	var s strings.Builder
	fmt.Fprintf(&s, "#### ❌ %s\n\n", title)
	if ph.Message != "" {
		fmt.Fprintf(&s, "%s\n\n", mdText(ph.Message))
	}
	for i, v := range ph.Violations {
		if i == maxViolationsShown {
			fmt.Fprintf(&s, "- … and %d more (all are in the JSON and JUnit reports)\n", len(ph.Violations)-i)
			if h := ph.Violations[len(ph.Violations)-1].Hint; h != "" && !showHint(ph.Violations, i-1) {
				fmt.Fprintf(&s, "  - **Fix:** %s\n", mdText(h))
			}
			break
		}
		item := mdText(v.Message)
		if where := violationWhere(v); where != "" {
			item = "**" + mdText(capitalize(where)) + "**: " + item
		}
		fmt.Fprintf(&s, "- %s\n", item)
		if v.Probe != "" || v.Before != "" || v.After != "" || v.Want != "" {
			fmt.Fprintf(&s, "  - %s\n", mdValues(v))
		}
		if v.Status != 0 {
			fmt.Fprintf(&s, "  - answered `%d`\n", v.Status)
		}
		if showHint(ph.Violations, i) {
			fmt.Fprintf(&s, "  - **Fix:** %s\n", mdText(v.Hint))
		}
	}
	return s.String()
}

// writeMdDetails is the run-level warnings and a folded list of skipped
// phases and notes.
func writeMdDetails(b *bufio.Writer, c *Check) {
	var details []string
	for _, r := range c.allPhases() {
		if r.P.Status == Skip {
			title := "order of deliveries"
			if r.D != nil {
				title = fmt.Sprintf("delivery %d", r.D.DeliveryID)
			}
			details = append(details, fmt.Sprintf("- ➖ %s — %s: %s", title, mdText(r.P.Phase), mdText(r.P.Message)))
		}
	}
	for _, n := range c.Notes {
		details = append(details, "- "+mdText(n))
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(b, "\n> ⚠️ **warning:** %s\n", mdText(w))
	}
	if len(details) > 0 {
		fmt.Fprintf(b, "<details><summary>Skipped phases and notes</summary>\n\n%s\n\n</details>\n", strings.Join(details, "\n"))
	}
}

// phaseColumns are the phases any delivery ran, in run order, then any
// phase this version does not know, in the order first seen.
func phaseColumns(c *Check) []string {
	seen := map[string]bool{}
	for _, d := range c.Deliveries {
		for _, ph := range d.Phases {
			seen[ph.Phase] = true
		}
	}
	var cols []string
	for _, p := range PhaseOrder {
		if seen[p] {
			cols = append(cols, p)
			delete(seen, p)
		}
	}
	for _, d := range c.Deliveries {
		for _, ph := range d.Phases {
			if seen[ph.Phase] {
				cols = append(cols, mdText(ph.Phase))
				delete(seen, ph.Phase)
			}
		}
	}
	return cols
}

func mdDelivery(d *DeliveryResult) string {
	s := fmt.Sprintf("#%d", d.DeliveryID)
	if d.Provider != "" {
		s += " " + mdText(d.Provider)
	}
	if d.EventType != "" {
		s += " " + mdCode(d.EventType)
	}
	return s
}

func mdValues(v Violation) string {
	var parts []string
	if v.Before != "" {
		parts = append(parts, "before "+mdCode(valueText(v.Before)))
	}
	if v.After != "" {
		parts = append(parts, "after "+mdCode(valueText(v.After)))
	}
	if v.Want != "" {
		parts = append(parts, "want "+mdCode(valueText(v.Want)))
	}
	s := strings.Join(parts, ", ")
	if v.Probe != "" {
		return "probe " + mdCode(v.Probe) + ": " + s
	}
	return s
}

// mdText makes handler- or payload-controlled text inert in Markdown: one
// line, HTML and the characters that start formatting or break a table
// escaped.
func mdText(s string) string {
	s = safe(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '|', '*', '_', '`', '[', ']', '\\', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode shows s as inline code, choosing a fence longer than any run of
// backticks inside it; "|" is escaped so tables stay intact.
func mdCode(s string) string {
	s = strings.ReplaceAll(truncate(safe(s), 200), "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || len(fence) > 1 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
