package report

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"sync"
	"time"
)

// The HTML report is one self-contained file: its CSS, its script and its
// SVG timelines are inline, and its Content-Security-Policy (default-src
// 'none', the script allowed by its hash) makes any request to the network
// impossible, so it opens the same from a CI artifact, an email attachment
// or a disk with no network. Every text in it went through html/template's
// contextual escaping: what came from a handler or a sender is text, never
// markup.

//go:embed html/report.html.tmpl
var htmlTemplateText string

//go:embed html/report.js
var htmlScript string

//go:embed html/report.css
var htmlStyle string

var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"mark":        htmlMark,
		"plotLeft":    func() int { return plotLeft },
		"plus":        func(a float64, b px) px { return px(a) + b },
		"probeHeight": func(n int) int { return n * probeH },
	}).Parse(htmlTemplateText))
})

// htmlPage is what the template renders.
type htmlPage struct {
	Title    string
	Verdict  string
	Tone     Tone
	Summary  string
	Text     string // the text report, as `check` prints it
	Sections []htmlSection
	Script   template.JS
	Style    template.CSS
	CSP      string
	// Empty says why there is no timeline (a run read from a report
	// without the store's records).
	Empty string
}

// HTML writes check run c as a self-contained HTML page: the text
// report and, for each delivery and phase, tl's timeline as SVG. tl nil
// leaves the timelines out (and says so).
func HTML(w io.Writer, c *Check, tl *Timeline) error {
	c = normalized(c)
	var text bytes.Buffer
	if err := Text(&text, c, false); err != nil {
		return err
	}
	p := htmlPage{Title: runTitle("hookreplay check", c.RunID), Verdict: c.Verdict, Tone: VerdictTone(c.Verdict),
		Summary: safe(c.Target), Text: text.String()}
	return writeHTML(w, p, tl)
}

// KeyCheckHTML writes keycheck run k as HTML page, as HTML does a check.
func KeyCheckHTML(w io.Writer, k *KeyCheck, tl *Timeline) error {
	var text bytes.Buffer
	if err := KeyCheckText(&text, k, false); err != nil {
		return err
	}
	p := htmlPage{Title: runTitle("hookreplay keycheck", k.RunID), Verdict: k.Verdict, Tone: VerdictTone(k.Verdict),
		Summary: safe(k.Method + " " + k.Target + " · profile " + k.Profile), Text: text.String()}
	return writeHTML(w, p, tl)
}

// runTitle is a page's title: what ran and, when it was recorded, its
// run id. A report that no run recorded (report merge's) has id 0 and no
// "run 0" to look up, as the text and Markdown reports leave it out.
func runTitle(what string, id int64) string {
	if id == 0 {
		return what
	}
	return fmt.Sprintf("%s · run %d", what, id)
}

func writeHTML(w io.Writer, p htmlPage, tl *Timeline) error {
	p.Script, p.Style = template.JS(htmlScript), template.CSS(htmlStyle)
	sum := sha256.Sum256([]byte(htmlScript))
	p.CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	switch {
	case tl == nil:
		p.Empty = "no timeline: timelines are drawn from a run's records in the store (check, keycheck, runs show ID --report html=FILE), and this report was not rendered from them"
	case len(tl.Sections) == 0:
		p.Empty = "no timeline: the run sent nothing and read no probe"
	default:
		for i := range tl.Sections {
			h := layoutSection(&tl.Sections[i], i, 0)
			for j, z := range zooms(&tl.Sections[i]) {
				zh := layoutSection(&z, j, i+1)
				zh.ID, zh.Label = "", z.Title
				h.Zooms = append(h.Zooms, zh)
			}
			p.Sections = append(p.Sections, h)
		}
	}
	var buf bytes.Buffer
	if err := htmlTemplate().Execute(&buf, p); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// The SVG's coordinates: a timeline is drawn in a viewBox svgWidth wide,
// labels left of plotLeft, time from plotLeft to plotRight.
const (
	svgWidth  = 1000
	plotLeft  = 150
	plotRight = 985
	axisY     = 22
	probeH    = 64
)

type htmlSection struct {
	ID         string
	Label      string
	Phase      string
	Status     Status
	Message    string
	Height     int
	Ticks      []svgTick
	Rows       []svgCopy
	Bursts     []svgLine
	Marks      []svgLine
	Settles    []svgSettle
	Probes     []svgProbe
	Violations []TimelineViolation
	CopiesTop  int
	CopiesBot  int
	ProbesTop  int
	Span       string
	// Zooms draw short stretches of a long section closer: each burst
	// round, each kill to the handler's restart.
	Zooms []htmlSection
}

// px is an SVG coordinate, printed with one decimal: the page of a big run
// stays small.
type px float64

func (p px) String() string { return strconv.FormatFloat(float64(p), 'f', 1, 64) }

type svgTick struct {
	X     px
	Label string
}

type svgCopy struct {
	Y, X, W, LastX px
	Outcome        string
	Violating      bool
	Label          string
	Tip            string
	// ID names the copy's row in its section; a zoom's row has no tip of
	// its own but Ref, the ID of the row whose tip it shows.
	ID, Ref string
}

type svgLine struct {
	X     px
	Label string
	Kind  string
	Tip   string
}

type svgSettle struct {
	X, W, ChangedX px
	Changed        bool
	Tip            string
}

type svgProbe struct {
	Name      string
	Top       px
	Path      string
	Dots      []svgDot
	Changes   []svgChange
	WantY     px
	Want      string
	HasWant   bool
	LabelY    px
	FirstText string
}

type svgDot struct {
	X, Y px
	Tip  string
}

type svgChange struct {
	X, Y, LabelY, DX px
	Label            string
	Anchor           string
	Extra            bool
}

// layoutSection places s, the i0-th section, on the SVG: times to x,
// copies to rows, values to y. zoomOf, when not 0, is the number of the
// section s is a zoom of (its rows show that section's tips).
func layoutSection(s *TimelineSection, i0, zoomOf int) htmlSection {
	i := i0
	span := s.End.Sub(s.Start)
	if span <= 0 {
		span = time.Millisecond
	}
	x := func(t time.Time) px {
		if t.IsZero() {
			t = s.Start
		}
		return px(plotLeft + float64(t.Sub(s.Start))/float64(span)*(plotRight-plotLeft))
	}
	h := htmlSection{ID: fmt.Sprintf("s%d", i+1), Label: s.Label(), Phase: s.Phase, Status: s.Status, Message: s.Message,
		Violations: s.Violations, Span: Duration(span)}
	for _, t := range ticks(span) {
		h.Ticks = append(h.Ticks, svgTick{X: x(s.Start.Add(t)), Label: "+" + Duration(t)})
	}
	rowH := 14.0
	if len(s.Copies) > 40 {
		rowH = 8
	}
	y := float64(axisY + 10)
	h.CopiesTop = int(y)
	for i, c := range s.Copies {
		x0, x1 := x(c.Start), x(c.End)
		r := svgCopy{Y: px(y), X: x0, W: max(x1-x0, 2), LastX: x(c.LastByte), Outcome: outcomeClass(c.Outcome),
			Violating: c.Violating, ID: fmt.Sprintf("s%dc%d", i0+1, c.Copy)}
		if zoomOf > 0 {
			r.ID, r.Ref = "", fmt.Sprintf("s%dc%d", zoomOf, c.Copy)
		} else {
			r.Tip = copyTip(s, c)
		}
		// Thin rows are labelled every fifth (and where they violate).
		if rowH >= 14 || i%5 == 0 || c.Violating {
			r.Label = fmt.Sprintf("copy %d", c.Copy)
		}
		h.Rows = append(h.Rows, r)
		y += rowH
	}
	h.CopiesBot = int(y)
	for n, b := range s.Bursts {
		label := "last bytes"
		if len(s.Bursts) > 1 {
			label = fmt.Sprintf("round %d: last bytes", n+1)
		}
		h.Bursts = append(h.Bursts, svgLine{X: x(b), Label: label, Tip: "every copy of the round had written its last byte " + b.Format("15:04:05.000000")})
	}
	for _, m := range s.Marks {
		l := svgLine{X: x(m.At), Kind: m.Kind}
		switch m.Kind {
		case "kill":
			l.Label, l.Tip = "kill", fmt.Sprintf("SIGKILL to the handler while it had copy %d", m.Copy)
		default:
			l.Label, l.Tip = "restarted", "the handler listened again after its restart"
		}
		h.Marks = append(h.Marks, l)
	}
	y += 8
	h.ProbesTop = int(y)
	for _, p := range s.Probes {
		h.Probes = append(h.Probes, layoutProbe(p, y, x))
		y += probeH
	}
	for _, w := range s.Settles {
		st := svgSettle{X: x(w.From), W: max(x(w.At)-x(w.From), 1), Tip: fmt.Sprintf("settle window of the reading %q: waited %s for the probes to hold still", w.Point, Duration(w.At.Sub(w.From)))}
		if !w.Changed.IsZero() {
			st.Changed, st.ChangedX = true, x(w.Changed)
			st.Tip += fmt.Sprintf("; a probe last moved %s before it", Duration(w.At.Sub(w.Changed)))
		}
		h.Settles = append(h.Settles, st)
	}
	h.Height = int(y) + 6
	return h
}

func layoutProbe(p TimelineProbe, top float64, x func(time.Time) px) svgProbe {
	sp := svgProbe{Name: p.Name, Top: px(top), LabelY: px(top + probeH/2)}
	if len(p.Steps) == 0 {
		return sp
	}
	// Values to levels: numbers by value, text in order of appearance.
	numeric := true
	for _, st := range p.Steps {
		if st.Num == nil {
			numeric = false
		}
	}
	var want float64
	wantNum := false
	if p.Want != "" {
		if _, err := fmt.Sscan(p.Want, &want); err == nil {
			wantNum = true
		}
	}
	lo, hi := 0.0, 0.0
	levels := map[string]int{}
	for i, st := range p.Steps {
		if numeric {
			if i == 0 || *st.Num < lo {
				lo = *st.Num
			}
			if i == 0 || *st.Num > hi {
				hi = *st.Num
			}
		} else if _, ok := levels[st.Value]; !ok {
			levels[st.Value] = len(levels)
		}
	}
	if numeric && wantNum {
		lo, hi = min(lo, want), max(hi, want)
	}
	yTop, yBot := top+12, top+probeH-12
	yOf := func(st TimelineStep) px {
		if numeric {
			if hi == lo {
				return px((yTop + yBot) / 2)
			}
			return px(yBot - (*st.Num-lo)/(hi-lo)*(yBot-yTop))
		}
		if len(levels) < 2 {
			return px((yTop + yBot) / 2)
		}
		return px(yBot - float64(levels[st.Value])/float64(len(levels)-1)*(yBot-yTop))
	}
	var path bytes.Buffer
	for i, st := range p.Steps {
		cx, py := x(st.At), yOf(st)
		if i == 0 {
			fmt.Fprintf(&path, "M%s %s", cx, py)
		} else {
			fmt.Fprintf(&path, "H%sV%s", cx, py)
		}
		sp.Dots = append(sp.Dots, svgDot{X: cx, Y: py, Tip: fmt.Sprintf("%s: %s", st.Point, st.Value)})
	}
	fmt.Fprintf(&path, "H%d", plotRight)
	sp.Path = path.String()
	sp.FirstText = p.Steps[0].Value
	if numeric && wantNum {
		sp.HasWant, sp.Want, sp.WantY = true, p.Want, yOf(TimelineStep{Num: &want})
	}
	for i, ch := range p.Changes {
		st := TimelineStep{Num: nil, Value: ch.To}
		for _, s := range p.Steps {
			if s.At.Equal(ch.At) {
				st = s
			}
		}
		cy := yOf(st)
		ly := cy - 5
		if i%2 == 1 {
			ly = cy + 12
		}
		sc := svgChange{X: x(ch.At), Y: cy, LabelY: ly, Label: ch.Label(), Extra: ch.Extra}
		if sc.X > plotRight-200 {
			sc.Anchor, sc.DX = "end", -7
		} else {
			sc.Anchor, sc.DX = "start", 7
		}
		sp.Changes = append(sp.Changes, sc)
	}
	return sp
}

// ticks are the axis's marks: at most seven, at round offsets (1, 2 or 5
// times a power of ten nanoseconds).
func ticks(span time.Duration) []time.Duration {
	var step time.Duration
	for k := time.Duration(1); step == 0; k *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if span/(k*m) <= 6 {
				step = k * m
				break
			}
		}
	}
	var out []time.Duration
	for t := time.Duration(0); t <= span; t += step {
		out = append(out, t)
	}
	return out
}

func outcomeClass(o string) string {
	switch o {
	case "2xx", "3xx", "4xx", "5xx", OutcomeLost, OutcomeKilled, OutcomeRefused:
		return "o" + o
	}
	return "oerror"
}

// copyTip is what hovering or tapping a copy shows: what was sent, when,
// what came back.
func copyTip(s *TimelineSection, c TimelineCopy) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "copy %d", c.Copy)
	if s.DeliveryID == 0 && c.DeliveryID != 0 {
		fmt.Fprintf(&b, " of delivery %d", c.DeliveryID)
	}
	if c.Request != "" {
		fmt.Fprintf(&b, " · %s", c.Request)
	}
	fmt.Fprintf(&b, "\nsent +%s, last byte +%s", Duration(c.Start.Sub(s.Start)), Duration(c.LastByte.Sub(s.Start)))
	switch c.Outcome {
	case OutcomeLost:
		b.WriteString("\nanswer deliberately not read (lost)")
	case OutcomeKilled:
		fmt.Fprintf(&b, "\nno answer: the handler was killed %s after the last byte", Duration(c.End.Sub(c.LastByte)))
	case OutcomeRefused:
		b.WriteString("\nconnection refused")
	case OutcomeError:
		b.WriteString("\nno answer")
	default:
		fmt.Fprintf(&b, "\nanswered %d after %s", c.Status, Duration(c.End.Sub(c.LastByte)))
	}
	if c.Note != "" {
		fmt.Fprintf(&b, "\n%s", c.Note)
	}
	if c.Body != "" {
		fmt.Fprintf(&b, "\nbody: %s", c.Body)
	}
	if c.Violating {
		b.WriteString("\n✗ a violation of this phase is attributed to this copy")
	}
	return b.String()
}

// htmlMark is a phase status's mark, as the text report prints it (emoji
// need a font the reader may not have).
func htmlMark(s Status) string {
	switch s {
	case Pass:
		return "✓"
	case Fail:
		return "✗"
	case Warn, Info:
		return "!"
	case Inconclusive:
		return "?"
	case "":
		return "·"
	}
	return "–"
}

// zooms are the stretches of s too short to see on its axis, each as a
// section of its own on its own axis: a burst round's copies, and a kill
// with the killed copy and what followed until a little after the restart.
// Only a failed phase's are drawn (the story a reader came for; a big
// passing run stays small), and only stretches under a fifth of s's span.
func zooms(s *TimelineSection) []TimelineSection {
	if !s.Failed() {
		return nil
	}
	span := s.End.Sub(s.Start)
	var out []TimelineSection
	window := func(title string, from, to time.Time) {
		if to.Sub(from) <= 0 || to.Sub(from) > span/5 {
			return
		}
		pad := to.Sub(from) / 20
		z := TimelineSection{Title: title, Phase: s.Phase, Status: s.Status, Start: from.Add(-pad), End: to.Add(pad)}
		for _, c := range s.Copies {
			if c.Start.Before(z.End) && !c.End.Before(z.Start) {
				z.Copies = append(z.Copies, c)
			}
		}
		for _, b := range s.Bursts {
			if !b.Before(z.Start) && !b.After(z.End) {
				z.Bursts = append(z.Bursts, b)
			}
		}
		for _, m := range s.Marks {
			if !m.At.Before(z.Start) && !m.At.After(z.End) {
				z.Marks = append(z.Marks, m)
			}
		}
		out = append(out, z)
	}
	for n := range s.Bursts {
		var from, to time.Time
		for _, c := range s.Copies {
			if c.Round != n+1 {
				continue
			}
			if from.IsZero() || c.Start.Before(from) {
				from = c.Start
			}
			if c.End.After(to) {
				to = c.End
			}
		}
		window(fmt.Sprintf("round %d", n+1), from, to)
	}
	for _, m := range s.Marks {
		if m.Kind != "kill" {
			continue
		}
		var from, to time.Time
		for _, c := range s.Copies {
			if c.Copy == m.Copy {
				from = c.Start
			}
		}
		for _, r := range s.Marks {
			if r.Kind == "restart" && r.Copy == m.Copy {
				to = r.At
			}
		}
		if from.IsZero() || to.IsZero() {
			continue
		}
		window(fmt.Sprintf("the kill of copy %d to the restart", m.Copy), from, to.Add(to.Sub(from)/4))
	}
	return out
}
