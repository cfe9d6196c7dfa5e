package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// maxEffectsShown bounds the sink calls listed per phase in the text report;
// the rest are counted.
const maxEffectsShown = 10

// maxViolationsShown bounds the violations listed per phase in the text and
// Markdown reports; JSON and JUnit list them all.
const maxViolationsShown = 10

// symbol is the mark shown for a status: ✓ pass, ✗ fail, – skipped or not
// judged, ! warning, ? inconclusive.
// Symbol is the mark a phase status is shown with: ✓ pass, ✗ fail, ! warn,
// ? inconclusive, – skipped or not judged.
func Symbol(s Status) string { return symbol(s) }

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
	case Error:
		return "E"
	case Info:
		return "i"
	case Interrupted:
		return "‖"
	}
	return "–"
}

// PhaseTone is the tone of a phase status: skipped and not judged phases are
// muted.
func PhaseTone(s Status) Tone {
	switch s {
	case Pass:
		return TonePass
	case Fail:
		return ToneFail
	case Warn:
		return ToneWarn
	case Inconclusive:
		return ToneInconclusive
	case Error:
		return ToneFail
	case Info:
		return ToneInfo
	case Interrupted:
		return ToneWarn
	}
	return ToneMuted
}

// VerdictTone is the tone of a run's verdict as the store keeps it: pass or
// ok, fail or error(s), inconclusive, interrupted; "" for anything else.
func VerdictTone(v string) Tone {
	switch v {
	case VerdictPass, "ok":
		return TonePass
	case VerdictFail, "errors", "error":
		return ToneFail
	case VerdictInconclusive:
		return ToneInconclusive
	case "interrupted":
		return ToneWarn
	}
	return ""
}

// phaseStatus paints text in the tone of s; a failed phase stands out in bold.
func phaseStatus(p Painter, s Status, text string) string {
	if s == Fail {
		return p.Emphasis(ToneFail, text)
	}
	return p.Paint(PhaseTone(s), text)
}

// verdictText is a check's verdict in capitals, bold in its tone.
func verdictText(p Painter, v string) string {
	switch v {
	case VerdictPass, VerdictFail, VerdictInconclusive:
		return p.Emphasis(VerdictTone(v), strings.ToUpper(v))
	}
	return p.Bold(strings.ToUpper(v))
}

// Text writes the terminal report of c: one block per delivery with a line
// per phase (✓ pass, ✗ fail, – skipped or not judged, ! warning,
// ? inconclusive), every violation with the copy that did it, the probe, its
// values and a fix hint, the sink's calls, the latency summary and the
// verdict with its exit code. With colorOn false the output is plain text.
func Text(w io.Writer, c *Check, colorOn bool) error {
	c = normalized(c)
	p := Colors(colorOn)
	b := bufio.NewWriter(w)

	head := "hookreplay check"
	if c.RunID != 0 {
		head += fmt.Sprintf(" · run %d", c.RunID)
	}
	if c.Target != "" {
		head += " → " + safe(c.Target)
	}
	fmt.Fprintln(b, p.Bold(head))
	probes := c.Probes
	if len(c.ProbeDefs) == len(c.Probes) {
		probes = c.ProbeDefs
	}
	for i, pr := range probes {
		label := "probes:"
		if i > 0 {
			label = "       "
		}
		fmt.Fprintf(b, "%s %s\n", p.Faint(label), safe(pr))
	}

	width := phaseWidth(c)
	seen := newOnce(c)
	for i := range c.Deliveries {
		d := &c.Deliveries[i]
		seen.delivery()
		fmt.Fprintln(b)
		fmt.Fprintln(b, p.Bold(deliveryTitle(d)))
		if len(d.EventIDs) > 1 {
			fmt.Fprintf(b, "  %s %s\n", p.Faint(fmt.Sprintf("event ids (%d, each fresh in a fresh event):", len(d.EventIDs))), EventIDList(d.EventIDs))
		}
		for _, e := range d.Effect {
			fmt.Fprintf(b, "  %s %s: %s\n", p.Faint("effect of the first copy:"), safe(e.Probe), deltaText(e))
		}
		for j := range d.Phases {
			writeTextPhase(b, p, &d.Phases[j], width, seen)
		}
		writeTextEffects(b, p, d.Phases)
	}
	if c.Order != nil {
		fmt.Fprintln(b)
		fmt.Fprintln(b, p.Bold("all deliveries, in different orders"))
		seen.delivery()
		writeTextPhase(b, p, c.Order, width, seen)
		writeTextEffects(b, p, []PhaseResult{*c.Order})
	}

	if l := c.Latency; l != nil {
		fmt.Fprintln(b)
		s := fmt.Sprintf("latency: first answer %s, p50 %s, max %s", Duration(l.First), Duration(l.P50), Duration(l.Max))
		if l.ProviderTimeout > 0 {
			s += fmt.Sprintf(" (provider timeout %s)", Duration(l.ProviderTimeout))
		}
		fmt.Fprintln(b, s)
	}
	if len(c.Notes) > 0 {
		fmt.Fprintln(b)
		for _, n := range c.Notes {
			fmt.Fprintf(b, "%s %s\n", p.Faint("note:"), safe(n))
		}
	}

	if len(c.Warnings) > 0 {
		fmt.Fprintln(b)
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "%s %s\n", phaseStatus(p, Warn, "! warning:"), safe(w))
		}
	}

	fmt.Fprintln(b)
	fmt.Fprintf(b, "%s  %s\n", verdictText(p, c.Verdict), c.summary(c.Verdict))
	fmt.Fprintf(b, "%s\n", p.Faint(fmt.Sprintf("exit %d: %s", c.ExitCode(), c.exitMeaning())))
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

// writeTextPhase writes ph's line, its warnings, violations and fix hints;
// seen (nil: none) shows each warning and hint once per delivery.
func writeTextPhase(b *bufio.Writer, p Painter, ph *PhaseResult, width int, seen *once) {
	name := fmt.Sprintf("%-*s", width, safe(ph.Phase))
	line := fmt.Sprintf("  %s %s  %s", phaseStatus(p, ph.Status, symbol(ph.Status)), phaseStatus(p, ph.Status, name), safe(ph.Message))
	if ph.Status == NotJudged && !strings.Contains(ph.Message, "not judged") {
		line += p.Faint(" (not judged)")
	}
	if facts := phaseFacts(ph); facts != "" {
		line += "  " + p.Faint("("+facts+")")
	}
	fmt.Fprintln(b, strings.TrimRight(line, " "))
	indent := strings.Repeat(" ", width+5)
	for _, wn := range ph.Warnings {
		fmt.Fprintf(b, "%s%s %s\n", indent, phaseStatus(p, Warn, "!"), safe(seen.text(ph.Phase, wn)))
	}
	if h := warnHint(ph); h != "" {
		fmt.Fprintf(b, "%s  %s %s\n", indent, p.Paint(ToneInfo, "fix:"), seen.text(ph.Phase, h))
	}
	for i, v := range ph.Violations {
		if i == maxViolationsShown {
			fmt.Fprintf(b, "%s%s … and %d more (all are in --report json)\n", indent, phaseStatus(p, Fail, "✗"), len(ph.Violations)-i)
			if h := ph.Violations[len(ph.Violations)-1].Hint; h != "" && !showHint(ph.Violations, i-1) {
				fmt.Fprintf(b, "%s  %s %s\n", indent, p.Paint(ToneInfo, "fix:"), safe(h))
			}
			break
		}
		where := violationWhere(v)
		msg := safe(v.Message)
		if where != "" {
			msg = where + ": " + msg
		}
		fmt.Fprintf(b, "%s%s %s\n", indent, phaseStatus(p, Fail, "✗"), msg)
		if vals := violationValues(v); vals != "" {
			fmt.Fprintf(b, "%s  %s\n", indent, vals)
		}
		if v.Status != 0 {
			fmt.Fprintf(b, "%s  answered %d\n", indent, v.Status)
		}
		if showHint(ph.Violations, i) {
			fmt.Fprintf(b, "%s  %s %s\n", indent, p.Paint(ToneInfo, "fix:"), safe(seen.text(ph.Phase, v.Hint)))
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
		f = append(f, "spread "+Duration(ph.BurstSpread))
	}
	if ph.Duration > 0 {
		d := Duration(ph.Duration)
		if t := ph.Timing; t != nil {
			d += fmt.Sprintf(": sending %s, settling %s, %s %s", Duration(t.Sending), Duration(t.Settling), plural(t.Reads, "probe reading", "probe readings"), Duration(t.ProbeReads))
		}
		f = append(f, d)
	}
	return strings.Join(f, ", ")
}

func writeTextEffects(b *bufio.Writer, p Painter, phases []PhaseResult) {
	writeTextEmails(b, p, phases)
	total := 0
	for _, ph := range phases {
		total += countKind(ph.Effects, "")
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "  %s\n", p.Faint(fmt.Sprintf("the sink saw %s:", plural(total, "call", "calls"))))
	for _, ph := range phases {
		i := 0
		for _, e := range ph.Effects {
			if e.Kind != "" {
				continue
			}
			if i == maxEffectsShown {
				fmt.Fprintf(b, "    %-8s … and %d more\n", safe(ph.Phase), countKind(ph.Effects, "")-maxEffectsShown)
				break
			}
			i++
			line := fmt.Sprintf("    %-8s %s %s", safe(ph.Phase), safe(e.Method), safe(e.Path))
			if e.Body != "" {
				line += "  " + truncate(safe(e.Body), 80)
			}
			fmt.Fprintln(b, line)
		}
	}
}

// writeTextEmails lists the emails the SMTP sink accepted, per phase,
// grouped: `dups     "Your receipt" to alice@example.com ×3`.
func writeTextEmails(b *bufio.Writer, p Painter, phases []PhaseResult) {
	total := 0
	for _, ph := range phases {
		total += countKind(ph.Effects, EffectEmail)
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "  %s\n", p.Faint(fmt.Sprintf("the smtp sink accepted %s:", plural(total, "email", "emails"))))
	for _, ph := range phases {
		if s := EmailSummary(ph.Effects); s != "" {
			fmt.Fprintf(b, "    %-8s %s\n", safe(ph.Phase), s)
		}
	}
}

// countKind counts the effects of kind ("" sink calls, EffectEmail emails).
func countKind(effects []Effect, kind string) int {
	n := 0
	for _, e := range effects {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
