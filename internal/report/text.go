package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
)

// maxEffectsShown bounds the sink calls listed per phase in the text report;
// the rest are counted.
const maxEffectsShown = 10

// maxViolationsShown bounds the violations listed per phase in the text and
// Markdown reports; JSON and JUnit list them all.
const maxViolationsShown = 10

// painter colours text, or leaves it alone when colour is off.
type painter struct{ on bool }

func (p painter) paint(s string, attrs ...color.Attribute) string {
	if !p.on || s == "" {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor()
	return c.Sprint(s)
}

func (p painter) bold(s string) string  { return p.paint(s, color.Bold) }
func (p painter) faint(s string) string { return p.paint(s, color.Faint) }

// symbol is the mark shown for a status: ✓ pass, ✗ fail, – skipped or not
// judged, ! warning, ? inconclusive.
func symbol(s Status) string {
	switch s {
	case Pass:
		return "✓"
	case Fail:
		return "✗"
	case Warn:
		return "!"
	case Inconclusive:
		return "?"
	}
	return "–"
}

func (p painter) status(s Status, text string) string {
	switch s {
	case Pass:
		return p.paint(text, color.FgGreen)
	case Fail:
		return p.paint(text, color.FgRed, color.Bold)
	case Warn:
		return p.paint(text, color.FgYellow)
	case Inconclusive:
		return p.paint(text, color.FgMagenta)
	}
	return p.faint(text)
}

func (p painter) verdict(v string) string {
	switch v {
	case VerdictPass:
		return p.paint("PASS", color.FgGreen, color.Bold)
	case VerdictFail:
		return p.paint("FAIL", color.FgRed, color.Bold)
	case VerdictInconclusive:
		return p.paint("INCONCLUSIVE", color.FgMagenta, color.Bold)
	}
	return p.paint(strings.ToUpper(v), color.Bold)
}

// Text writes the terminal report of c: one block per delivery with a line
// per phase (✓ pass, ✗ fail, – skipped or not judged, ! warning,
// ? inconclusive), every violation with the copy that did it, the probe, its
// values and a fix hint, the sink's calls, the latency summary and the
// verdict with its exit code. With colorOn false the output is plain text.
func Text(w io.Writer, c *Check, colorOn bool) error {
	c = normalized(c)
	p := painter{on: colorOn}
	b := bufio.NewWriter(w)

	head := "hookreplay check"
	if c.RunID != 0 {
		head += fmt.Sprintf(" · run %d", c.RunID)
	}
	if c.Target != "" {
		head += " → " + oneLine(c.Target)
	}
	fmt.Fprintln(b, p.bold(head))
	for i, pr := range c.Probes {
		label := "probes:"
		if i > 0 {
			label = "       "
		}
		fmt.Fprintf(b, "%s %s\n", p.faint(label), oneLine(pr))
	}

	width := phaseWidth(c)
	for i := range c.Deliveries {
		d := &c.Deliveries[i]
		fmt.Fprintln(b)
		fmt.Fprintln(b, p.bold(deliveryTitle(d)))
		for _, e := range d.Effect {
			fmt.Fprintf(b, "  %s %s: %s\n", p.faint("effect of the first copy:"), oneLine(e.Probe), deltaText(e))
		}
		for j := range d.Phases {
			writeTextPhase(b, p, &d.Phases[j], width)
		}
		writeTextEffects(b, p, d.Phases)
	}
	if c.Order != nil {
		fmt.Fprintln(b)
		fmt.Fprintln(b, p.bold("all deliveries, in different orders"))
		writeTextPhase(b, p, c.Order, width)
		writeTextEffects(b, p, []PhaseResult{*c.Order})
	}

	if l := c.Latency; l != nil {
		fmt.Fprintln(b)
		s := fmt.Sprintf("latency: first answer %s, p50 %s, max %s", dur(l.First), dur(l.P50), dur(l.Max))
		if l.ProviderTimeout > 0 {
			s += fmt.Sprintf(" (provider timeout %s)", dur(l.ProviderTimeout))
		}
		fmt.Fprintln(b, s)
	}
	if len(c.Notes) > 0 {
		fmt.Fprintln(b)
		for _, n := range c.Notes {
			fmt.Fprintf(b, "%s %s\n", p.faint("note:"), oneLine(n))
		}
	}

	if len(c.Warnings) > 0 {
		fmt.Fprintln(b)
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "%s %s\n", p.status(Warn, "! warning:"), oneLine(w))
		}
	}

	fmt.Fprintln(b)
	fmt.Fprintf(b, "%s  %s\n", p.verdict(c.Verdict), c.summary(c.Verdict))
	fmt.Fprintf(b, "%s\n", p.faint(fmt.Sprintf("exit %d: %s", ExitCode(c.Verdict), exitMeaning(c.Verdict))))
	return b.Flush()
}

// phaseWidth is the column width of phase names so messages line up.
func phaseWidth(c *Check) int {
	w := 5
	for _, r := range c.allPhases() {
		if n := len(r.P.Phase); n > w {
			w = n
		}
	}
	return w
}

func writeTextPhase(b *bufio.Writer, p painter, ph *PhaseResult, width int) {
	name := fmt.Sprintf("%-*s", width, oneLine(ph.Phase))
	line := fmt.Sprintf("  %s %s  %s", p.status(ph.Status, symbol(ph.Status)), p.status(ph.Status, name), oneLine(ph.Message))
	if ph.Status == NotJudged && !strings.Contains(ph.Message, "not judged") {
		line += p.faint(" (not judged)")
	}
	if facts := phaseFacts(ph); facts != "" {
		line += "  " + p.faint("("+facts+")")
	}
	fmt.Fprintln(b, strings.TrimRight(line, " "))
	indent := strings.Repeat(" ", width+5)
	for _, wn := range ph.Warnings {
		fmt.Fprintf(b, "%s%s %s\n", indent, p.status(Warn, "!"), oneLine(wn))
	}
	if h := warnHint(ph); h != "" {
		fmt.Fprintf(b, "%s  %s %s\n", indent, p.paint("fix:", color.FgCyan), h)
	}
	for i, v := range ph.Violations {
		if i == maxViolationsShown {
			fmt.Fprintf(b, "%s%s … and %d more (all are in --report json)\n", indent, p.status(Fail, "✗"), len(ph.Violations)-i)
			if h := ph.Violations[len(ph.Violations)-1].Hint; h != "" && !showHint(ph.Violations, i-1) {
				fmt.Fprintf(b, "%s  %s %s\n", indent, p.paint("fix:", color.FgCyan), oneLine(h))
			}
			break
		}
		where := violationWhere(v)
		msg := oneLine(v.Message)
		if where != "" {
			msg = where + ": " + msg
		}
		fmt.Fprintf(b, "%s%s %s\n", indent, p.status(Fail, "✗"), msg)
		if vals := violationValues(v); vals != "" {
			fmt.Fprintf(b, "%s  %s\n", indent, vals)
		}
		if v.Status != 0 {
			fmt.Fprintf(b, "%s  answered %d\n", indent, v.Status)
		}
		if showHint(ph.Violations, i) {
			fmt.Fprintf(b, "%s  %s %s\n", indent, p.paint("fix:", color.FgCyan), oneLine(v.Hint))
		}
	}
}

// phaseFacts is the short parenthesis after a phase line: copies sent,
// answers, burst spread and how long the phase took.
func phaseFacts(ph *PhaseResult) string {
	var f []string
	if ph.Attempts > 0 {
		f = append(f, plural(ph.Attempts, "copy", "copies"))
	}
	if s := statuses(ph.Statuses); s != "" {
		f = append(f, "answers "+s)
	}
	if ph.BurstSpread > 0 {
		f = append(f, "spread "+dur(ph.BurstSpread))
	}
	if ph.Duration > 0 {
		f = append(f, dur(ph.Duration))
	}
	return strings.Join(f, ", ")
}

func writeTextEffects(b *bufio.Writer, p painter, phases []PhaseResult) {
	total := 0
	for _, ph := range phases {
		total += len(ph.Effects)
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "  %s\n", p.faint(fmt.Sprintf("the sink saw %s:", plural(total, "call", "calls"))))
	for _, ph := range phases {
		for i, e := range ph.Effects {
			if i == maxEffectsShown {
				fmt.Fprintf(b, "    %-8s … and %d more\n", oneLine(ph.Phase), len(ph.Effects)-maxEffectsShown)
				break
			}
			line := fmt.Sprintf("    %-8s %s %s", oneLine(ph.Phase), oneLine(e.Method), oneLine(e.Path))
			if e.Body != "" {
				line += "  " + truncate(oneLine(e.Body), 80)
			}
			fmt.Fprintln(b, line)
		}
	}
}
