package report

import (
	"fmt"
	"strings"
	"time"
)

// The Markdown report draws a failed phase's timeline as a Mermaid gantt
// chart, which GitHub renders in a step summary, a pull-request comment or
// an issue, so the failure is seen without downloading the HTML report; as
// plain text it is still a list of the copies and changes with their times.
// Times are milliseconds from the phase's start (a gantt's unit; a burst's
// copies that left within microseconds overlap, as they did).

// mermaidMaxCopies bounds the copies drawn one by one: the rest are one bar.
const mermaidMaxCopies = 24

// Section returns the section of delivery id's phase (0: the order phase,
// or a keycheck's check), or nil.
func (tl *Timeline) Section(id int64, phase string) *TimelineSection {
	if tl == nil {
		return nil
	}
	for i := range tl.Sections {
		if tl.Sections[i].DeliveryID == id && tl.Sections[i].Phase == phase {
			return &tl.Sections[i]
		}
	}
	return nil
}

// Mermaid writes s as a Mermaid gantt chart in a fenced block.
func (s *TimelineSection) Mermaid() string {
	if s == nil || len(s.Copies) == 0 {
		return ""
	}
	ms := func(t time.Time) int64 {
		if t.IsZero() || t.Before(s.Start) {
			return 0
		}
		return t.Sub(s.Start).Milliseconds()
	}
	bar := func(from, to time.Time) string {
		a, b := ms(from), ms(to)
		if b <= a {
			b = a + 1
		}
		return fmt.Sprintf("%d, %d", a, b)
	}
	var b strings.Builder
	b.WriteString("```mermaid\ngantt\n")
	title := s.Phase
	if s.Title != "" {
		title += " — " + s.Title
	}
	fmt.Fprintf(&b, "    title %s (ms from the phase's start)\n", truncate(mermaidText(title), 140))
	b.WriteString("    dateFormat x\n")
	// The axis reads the times as a clock from 0: each format shows the
	// units that do not wrap within the phase (%S wraps at a minute).
	switch d := s.End.Sub(s.Start); {
	case d < time.Second:
		b.WriteString("    axisFormat %L ms\n")
	case d < time.Minute:
		b.WriteString("    axisFormat %S.%L s\n")
	default:
		b.WriteString("    axisFormat %M:%S min\n")
	}
	b.WriteString("    section copies\n")
	for i, c := range s.Copies {
		if i == mermaidMaxCopies-1 && len(s.Copies) > mermaidMaxCopies {
			rest := s.Copies[i:]
			first, last := rest[0], rest[0]
			viol := false
			for _, r := range rest {
				if r.Start.Before(first.Start) {
					first = r
				}
				if r.End.After(last.End) {
					last = r
				}
				viol = viol || r.Violating
			}
			fmt.Fprintf(&b, "    %s :%s%s\n", mermaidName(fmt.Sprintf("copies %d–%d", rest[0].Copy, rest[len(rest)-1].Copy), mermaidMark(viol)), mermaidTag(viol, ""), bar(first.Start, last.End))
			break
		}
		fmt.Fprintf(&b, "    %s :%s%s\n", mermaidName(fmt.Sprintf("copy %d", c.Copy), mermaidOutcome(c), mermaidMark(c.Violating)), mermaidTag(c.Violating, c.Outcome), bar(c.Start, c.End))
	}
	if len(s.Bursts) > 0 || len(s.Marks) > 0 {
		b.WriteString("    section moments\n")
		for i, t := range s.Bursts {
			fmt.Fprintf(&b, "    round %d last bytes :milestone, %s\n", i+1, bar(t, t))
		}
		for _, m := range s.Marks {
			what := "handler killed"
			if m.Kind == "restart" {
				what = "handler restarted"
			}
			fmt.Fprintf(&b, "    %s (copy %d) :milestone, %s\n", what, m.Copy, bar(m.At, m.At))
		}
	}
	for _, p := range s.Probes {
		if len(p.Changes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    section %s\n", mermaidText(p.Name))
		for _, ch := range p.Changes {
			tag := "milestone, "
			if ch.Extra {
				tag = "crit, milestone, "
			}
			fmt.Fprintf(&b, "    %s :%s%s\n", mermaidName(mermaidText(ch.Label()), mermaidMark(ch.Extra)), tag, bar(ch.At, ch.At))
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// mermaidName joins a task's words, leaving out empty ones.
func mermaidName(words ...string) string {
	return strings.Join(strings.Fields(strings.Join(words, " ")), " ")
}

func mermaidOutcome(c TimelineCopy) string {
	if c.Status != 0 && c.Outcome != OutcomeKilled {
		return fmt.Sprint(c.Status)
	}
	return c.Outcome
}

func mermaidMark(bad bool) string {
	if bad {
		return "✗"
	}
	return ""
}

// mermaidTag colours a bar: crit (red) for a violating copy, active for
// one with no answer, done (grey) for the others.
func mermaidTag(violating bool, outcome string) string {
	switch {
	case violating:
		return "crit, "
	case outcome == OutcomeLost || outcome == OutcomeKilled || outcome == OutcomeRefused || outcome == OutcomeError:
		return "active, "
	}
	return "done, "
}

// mermaidText keeps text a gantt line can hold: no colon, semicolon, hash
// or backquote (Mermaid's separators and comments, Markdown's fence), no
// line breaks, at most 140 characters.
func mermaidText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ':', ';', '#', '`', '\n', '\r', '%', '{', '}', '<', '>':
			return ' '
		}
		return r
	}, safe(s))
	return truncate(strings.Join(strings.Fields(s), " "), 140)
}
