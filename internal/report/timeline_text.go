package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// TimelineLine is one line of a section drawn in block characters; a
// copy's line names its attempt (AttemptID), so a view can select it.
type TimelineLine struct {
	Text      string
	AttemptID int64
}

// Block-character timelines (the TUI's): a label column, the plot, and the
// answer's status on the right.
const (
	blockLabel  = 11
	blockStatus = 7
)

// Blocks draws s width columns wide: a heading, a line per copy (a bar from
// its first byte to its answer, ✗ on the copies a violation is attributed
// to, ▶ on the copy whose attempt is selected), a line of moments (a burst's
// last bytes ╎, kills ✕, restarts ↑), each probe's value as a sparkline with
// its settle windows (░) under it, and its changes. Times are the section's
// own axis.
func (s *TimelineSection) Blocks(p Painter, width int, selected int64) []TimelineLine {
	plotW := max(10, width-blockLabel-blockStatus-2)
	span := s.End.Sub(s.Start)
	if span <= 0 {
		span = time.Millisecond
	}
	col := func(t time.Time) int {
		if t.IsZero() || t.Before(s.Start) {
			return 0
		}
		c := int(float64(t.Sub(s.Start)) / float64(span) * float64(plotW))
		return min(c, plotW-1)
	}
	var out []TimelineLine
	add := func(text string, id int64) {
		out = append(out, TimelineLine{Text: ansi.Truncate(text, width, "…"), AttemptID: id})
	}
	head := fmt.Sprintf("%s %s  %s", p.Paint(PhaseTone(s.Status), Symbol(s.Status)), p.Bold(s.Label()), p.Faint(Duration(span)))
	add(head, 0)
	for _, v := range s.Violations {
		who := v.Who()
		if who != "" {
			who += ": "
		}
		add("  "+p.Paint(ToneFail, "✗ "+who+v.Message), 0)
	}
	for _, c := range s.Copies {
		label := fmt.Sprintf("copy %d", c.Copy)
		mark := " "
		if c.Violating {
			mark = "✗"
		}
		lead := "  "
		if selected != 0 && c.AttemptID == selected {
			lead = "▶ "
		}
		name := fmt.Sprintf("%s%-*s%s", lead, blockLabel-3, label, mark)
		if c.Violating {
			name = p.Paint(ToneFail, name)
		}
		row := []rune(strings.Repeat("·", plotW))
		a, b := col(c.Start), col(c.End)
		for i := a; i <= b; i++ {
			row[i] = '█'
		}
		bar := p.Faint(string(row[:a])) + p.Paint(outcomeTone(c), string(row[a:b+1])) + p.Faint(string(row[b+1:]))
		status := mermaidOutcome(c)
		add(fmt.Sprintf("%s %s %s", name, bar, p.Paint(outcomeTone(c), fmt.Sprintf("%*s", blockStatus-1, status))), c.AttemptID)
	}
	if len(s.Bursts) > 0 || len(s.Marks) > 0 {
		row := []rune(strings.Repeat(" ", plotW))
		for _, t := range s.Bursts {
			row[col(t)] = '╎'
		}
		for _, m := range s.Marks {
			if m.Kind == "kill" {
				row[col(m.At)] = '✕'
			} else {
				row[col(m.At)] = '↑'
			}
		}
		var legend []string
		if len(s.Bursts) > 0 {
			legend = append(legend, "╎ last bytes")
		}
		if len(s.Marks) > 0 {
			legend = append(legend, "✕ kill ↑ restarted")
		}
		add(fmt.Sprintf("  %-*s %s", blockLabel-2, "moments", string(row)), 0)
		add(fmt.Sprintf("  %-*s %s", blockLabel-2, "", p.Faint(strings.Join(legend, ", "))), 0)
	}
	for _, pr := range s.Probes {
		add(fmt.Sprintf("  %-*s %s", blockLabel-2, truncate(pr.Name, blockLabel-2), sparkline(pr, plotW, col)), 0)
		if len(s.Settles) > 0 {
			row := []rune(strings.Repeat(" ", plotW))
			for _, w := range s.Settles {
				for i := col(w.From); i <= col(w.At); i++ {
					row[i] = '░'
				}
			}
			add(fmt.Sprintf("  %-*s %s", blockLabel-2, "settle", p.Faint(string(row))), 0)
		}
		for _, ch := range pr.Changes {
			line := fmt.Sprintf("  %*s +%s: %s", blockLabel-2, "", Duration(ch.At.Sub(s.Start)), ch.Label())
			if ch.Extra {
				line = p.Paint(ToneFail, line+" ✗ extra")
			}
			add(line, 0)
		}
	}
	return out
}

// sparkline draws p's value over the section: at each column, the last
// reading taken by then, as ▁…█ (numbers by value, text by the order its
// values appeared).
func sparkline(p TimelineProbe, w int, col func(time.Time) int) string {
	levels := []rune("▁▂▃▄▅▆▇█")
	if len(p.Steps) == 0 {
		return strings.Repeat(" ", w)
	}
	numeric := true
	lo, hi := math.Inf(1), math.Inf(-1)
	seen := map[string]int{}
	for _, st := range p.Steps {
		if st.Num == nil {
			numeric = false
		} else {
			lo, hi = math.Min(lo, *st.Num), math.Max(hi, *st.Num)
		}
		if _, ok := seen[st.Value]; !ok {
			seen[st.Value] = len(seen)
		}
	}
	level := func(st TimelineStep) rune {
		var f float64
		switch {
		case numeric && hi > lo:
			f = (*st.Num - lo) / (hi - lo)
		case !numeric && len(seen) > 1:
			f = float64(seen[st.Value]) / float64(len(seen)-1)
		}
		return levels[int(math.Round(f*float64(len(levels)-1)))]
	}
	row := []rune(strings.Repeat(" ", w))
	steps := append([]TimelineStep(nil), p.Steps...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].At.Before(steps[j].At) })
	for i, st := range steps {
		end := w
		if i+1 < len(steps) {
			end = col(steps[i+1].At)
		}
		for c := col(st.At); c < end && c < w; c++ {
			row[c] = level(st)
		}
	}
	return string(row) + " " + steps[len(steps)-1].Value
}

func outcomeTone(c TimelineCopy) Tone {
	switch c.Outcome {
	case OutcomeLost:
		return ToneLost
	case OutcomeKilled, OutcomeError, OutcomeRefused:
		return ToneFail
	}
	return StatusTone(c.Status)
}

// AttemptDetail writes one attempt as the TUI opens it from a timeline:
// where it was sent in the run, when, what came back, the answer's
// headers and body (printable; the body at most 64 KiB).
func AttemptDetail(w io.Writer, p Painter, a *store.Attempt) error {
	fmt.Fprintf(w, "%s %d · %s copy %d", p.Bold("attempt"), a.ID, safe(a.Phase), a.Copy)
	if a.DeliveryID != 0 {
		fmt.Fprintf(w, " · delivery %d", a.DeliveryID)
	}
	fmt.Fprintln(w)
	if a.EventID != "" {
		fmt.Fprintf(w, "  event      %s\n", safe(a.EventID))
	}
	if r, ok := a.Detail["request"].(string); ok {
		fmt.Fprintf(w, "  request    %s\n", safe(r))
	}
	if !a.SentAt.IsZero() {
		fmt.Fprintf(w, "  sent       %s, last byte +%s\n", a.SentAt.Local().Format("15:04:05.000000"), Duration(a.CompletedAt.Sub(a.SentAt)))
	}
	label, tone := AttemptStatus(*a)
	if label == "" {
		label = "-"
	}
	fmt.Fprintf(w, "  answer     %s", p.Paint(tone, label))
	if a.Latency > 0 {
		fmt.Fprintf(w, " after %s", Duration(a.Latency))
	}
	fmt.Fprintln(w)
	if a.Err != "" {
		fmt.Fprintf(w, "  error      %s\n", safe(a.Err))
	}
	if a.Edit != "" {
		fmt.Fprintf(w, "  note       %s\n", safe(a.Edit))
	}
	for _, k := range []string{store.DetailKilledAt, store.DetailRestartedAt} {
		if s, ok := a.Detail[k].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				fmt.Fprintf(w, "  %-10s %s\n", strings.ReplaceAll(k, "_at", ""), t.Local().Format("15:04:05.000000"))
			}
		}
	}
	if len(a.ResponseHeaders) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.Faint("answer headers"))
		for _, h := range a.ResponseHeaders {
			fmt.Fprintf(w, "  %s: %s\n", safe(h.Name), safe(h.Value))
		}
	}
	if len(a.ResponseBody) > 0 {
		body := a.ResponseBody
		if len(body) > 64<<10 {
			body = body[:64<<10]
		}
		fmt.Fprintf(w, "\n%s (%s bytes)\n%s\n", p.Faint("answer body"), strconv.Itoa(len(a.ResponseBody)), message.PrintableText(string(body)))
	}
	return nil
}
