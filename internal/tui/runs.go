package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// maxRuns bounds the runs view.
const maxRuns = 1000

type runsMsg struct {
	runs   []*store.Run
	counts map[int64]int
	err    error
}

func loadRuns(st *store.Store) tea.Cmd {
	return func() tea.Msg {
		ctx := context.Background()
		var m runsMsg
		if m.runs, m.err = st.ListRuns(ctx, "", maxRuns); m.err != nil {
			return m
		}
		m.counts, m.err = st.AttemptCounts(ctx)
		return m
	}
}

// runsModel lists past replay and check runs, newest first.
type runsModel struct {
	env    *env
	width  int
	height int
	runs   []*store.Run
	counts map[int64]int
	loaded bool
	table  table.Model
}

func newRuns(e *env) *runsModel {
	km := table.DefaultKeyMap()
	km.PageDown.SetKeys("pgdown", "ctrl+f", " ")
	km.HalfPageDown.SetEnabled(false) // d is delete elsewhere; keep keys consistent
	km.HalfPageUp.SetEnabled(false)
	return &runsModel{env: e, table: table.New(table.WithStyles(e.styles.Table), table.WithFocused(true), table.WithKeyMap(km))}
}

func (m *runsModel) Init() tea.Cmd   { return loadRuns(m.env.st) }
func (m *runsModel) Title() string   { return "runs" }
func (m *runsModel) Capturing() bool { return false }

func (m *runsModel) Keys() []key.Binding {
	k := m.env.keys
	return []key.Binding{k.Up, k.Down, k.Open, k.Back, k.Help, k.Quit}
}

func (m *runsModel) Status() string {
	if !m.loaded {
		return "loading runs"
	}
	if len(m.runs) == 0 {
		return "0 runs · " + m.env.dbPath
	}
	return fmt.Sprintf("%d/%d runs · %s", m.table.Cursor()+1, len(m.runs), m.env.dbPath)
}

func (m *runsModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.table.SetWidth(w)
	m.table.SetHeight(h)
	m.table.SetColumns(m.columns())
	m.setRows()
}

// targetWidth is what the TARGET column gets: the rest of the window.
func (m *runsModel) targetWidth() int { return max(10, m.width-(1+5+7+14+10+8+14)-8) }

func (m *runsModel) columns() []table.Column {
	// VERDICT fits "– interrupted" and "– inconclusive".
	return []table.Column{{Title: " ", Width: 1}, {Title: "RUN", Width: 5}, {Title: "KIND", Width: 7}, {Title: "STARTED", Width: 14},
		{Title: "TOOK", Width: 10}, {Title: "ATTEMPTS", Width: 8}, {Title: "VERDICT", Width: 14}, {Title: "TARGET", Width: m.targetWidth()}}
}

// setRows fills the table, each target cut in its middle to fit: its end
// (the path) tells runs apart where its start (http://127.0.0.1:) does not.
// The selected row is marked > as in the deliveries list: under NO_COLOR
// the table's reverse video was the only cursor, and terminals without
// attributes showed none.
func (m *runsModel) setRows() {
	rows := make([]table.Row, len(m.runs))
	cur := max(m.table.Cursor(), 0)
	for i, r := range m.runs {
		mark := " "
		if i == cur {
			mark = ">"
		}
		rows[i] = table.Row{mark, fmt.Sprint(r.ID), r.Kind, r.StartedAt.Local().Format("01-02 15:04:05"), runTook(r),
			fmt.Sprint(m.counts[r.ID]), verdictMark(r.Verdict), middle(pr(r.Target), m.targetWidth())}
	}
	m.table.SetRows(rows)
	if m.table.Cursor() < 0 && len(rows) > 0 {
		// table leaves its cursor at -1 once it had no rows: runs that
		// arrive in an empty list could not be selected.
		m.table.SetCursor(0)
	}
}

// middle cuts s to w columns by replacing its middle with "…".
func middle(s string, w int) string {
	if ansi.StringWidth(s) <= w || w < 5 {
		return s
	}
	keep := w - 1
	head := keep * 2 / 5
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-(keep-head), "")
}

func (m *runsModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case runsMsg:
		if msg.err != nil {
			return failed(msg.err)
		}
		m.runs, m.counts, m.loaded = msg.runs, msg.counts, true
		m.setRows()
	case changedMsg:
		return loadRuns(m.env.st)
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			m.table.MoveUp(3)
		case tea.MouseButtonWheelDown:
			m.table.MoveDown(3)
		}
		m.setRows()
	case tea.KeyMsg:
		k := m.env.keys
		switch {
		case key.Matches(msg, k.Back):
			return m.env.nav(backMsg{})
		case key.Matches(msg, k.Open):
			if i := m.table.Cursor(); i >= 0 && i < len(m.runs) {
				return m.env.nav(openRunMsg{id: m.runs[i].ID})
			}
		default:
			var cmd tea.Cmd
			m.table, cmd = m.table.Update(msg)
			m.setRows()
			return cmd
		}
	}
	return nil
}

func (m *runsModel) View() string {
	if m.loaded && len(m.runs) == 0 {
		return m.env.styles.Faint.Render("no runs yet: r replays the selected delivery, c checks it")
	}
	return m.table.View()
}

func runTook(r *store.Run) string {
	if r.FinishedAt.IsZero() {
		return "unfinished"
	}
	return report.Duration(r.FinishedAt.Sub(r.StartedAt))
}

// verdictMark is a run's verdict with a symbol that reads without colour.
func verdictMark(v string) string {
	switch v {
	case "ok", "pass":
		return "✓ " + v
	case "fail", "errors", "error":
		return "✗ " + v
	case "":
		return "– running"
	}
	return "– " + v
}

// runMsg is one loaded run.
type runMsg struct {
	id       int64
	run      *store.Run
	attempts []*store.Attempt
	err      error
}

func loadRun(st *store.Store, id int64) tea.Cmd {
	return func() tea.Msg {
		ctx := context.Background()
		m := runMsg{id: id}
		if m.run, m.err = st.GetRun(ctx, id); m.err != nil {
			return m
		}
		m.attempts, m.err = st.ListAttempts(ctx, id)
		return m
	}
}

// runModel shows one stored run: a check's report re-rendered from the store
// (not re-run), or a replay's summary and attempts.
type runModel struct {
	env  *env
	id   int64
	run  *store.Run
	as   []*store.Attempt
	vp   viewport.Model
	text string
	// tl is a check or keycheck run's timelines, under its report.
	tl timelinePicker
}

func newRun(e *env, id int64) *runModel { return &runModel{env: e, id: id, vp: viewport.New(0, 0)} }

func (m *runModel) Init() tea.Cmd {
	return tea.Batch(loadRun(m.env.st, m.id), loadTimeline(m.env.st, m.id, nil, nil))
}
func (m *runModel) Title() string   { return fmt.Sprintf("run %d", m.id) }
func (m *runModel) Capturing() bool { return false }
func (m *runModel) Keys() []key.Binding {
	k := m.env.keys
	if len(m.tl.ids) > 0 {
		return append([]key.Binding{k.Up, k.Down}, append(pickerKeys, k.Back, k.Help, k.Quit)...)
	}
	return []key.Binding{k.Up, k.Down, k.PageDown, k.Back, k.Help, k.Quit}
}

func (m *runModel) Status() string {
	return fmt.Sprintf("run %d · %d%% · %s", m.id, int(m.vp.ScrollPercent()*100), m.env.dbPath)
}

func (m *runModel) SetSize(w, h int) {
	m.vp.Width, m.vp.Height = w, h
	m.setContent()
}

// setContent draws the run, then its timelines (already as wide as the view).
func (m *runModel) setContent() {
	if m.run == nil {
		return
	}
	w := max(10, m.vp.Width)
	text := wrapReport(m.content(), w)
	if tl := m.tl.render(report.Colors(m.env.color), w, strings.Count(text, "\n")+2); tl != "" {
		text += "\n\n" + tl
	}
	m.vp.SetContent(text)
}

func (m *runModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case runMsg:
		if msg.id != m.id {
			return nil
		}
		if msg.err != nil {
			return failed(msg.err)
		}
		m.run, m.as = msg.run, msg.attempts
		m.setContent()
	case timelineMsg:
		if msg.run != m.id || msg.err != nil {
			return nil
		}
		m.tl.set(msg)
		m.setContent()
	case changedMsg:
		if m.run != nil && m.run.FinishedAt.IsZero() {
			return tea.Batch(loadRun(m.env.st, m.id), loadTimeline(m.env.st, m.id, nil, nil))
		}
	case tea.KeyMsg:
		if key.Matches(msg, m.env.keys.Back) {
			return m.env.nav(backMsg{})
		}
		if cmd, ok := m.tl.key(m.env, msg, &m.vp, m.setContent); ok {
			return cmd
		}
		return scroll(&m.vp, m.env.keys, msg)
	case tea.MouseMsg:
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		return cmd
	}
	return nil
}

func (m *runModel) View() string {
	if m.run == nil {
		return m.env.styles.Faint.Render("loading…")
	}
	return m.vp.View()
}

// content is the run as 'runs show' prints it and, for a check, its report
// re-rendered from the stored summary.
func (m *runModel) content() string {
	p := report.Colors(m.env.color)
	var b bytes.Buffer
	if err := report.Run(&b, p, m.run, m.as); err != nil {
		return err.Error()
	}
	if m.run.Kind == "keycheck" && len(m.run.Summary) > 2 {
		var k report.KeyCheck
		if json.Unmarshal(m.run.Summary, &k) == nil && len(k.Checks) > 0 {
			b.WriteString("\n")
			_ = report.KeyCheckText(&b, &k, m.env.color)
		}
	}
	if m.run.Kind == "check" && len(m.run.Summary) > 2 {
		var c report.Check
		if json.Unmarshal(m.run.Summary, &c) == nil && len(c.Deliveries) > 0 {
			b.WriteString("\n")
			_ = report.Text(&b, &c, m.env.color)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
