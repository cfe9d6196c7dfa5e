package tui

// A check or keycheck run's timelines in block characters (report's
// Blocks, one model with the HTML and Markdown reports), under its report
// in the check and run views: tab and shift+tab select a copy, enter opens
// its attempt.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// timelineMsg is run's timeline, built from the store's records of it.
type timelineMsg struct {
	run      int64
	tl       *report.Timeline
	attempts map[int64]*store.Attempt
	err      error
}

// loadTimeline reads run id's records and builds its timeline: a check's
// from c, a keycheck's from k (the other nil); with both nil, from the
// run's stored report.
func loadTimeline(st *store.Store, id int64, c *report.Check, k *report.KeyCheck) tea.Cmd {
	return func() tea.Msg {
		ctx := context.Background()
		msg := timelineMsg{run: id}
		run, err := st.GetRun(ctx, id)
		if err != nil {
			msg.err = err
			return msg
		}
		if c == nil && k == nil {
			switch run.Kind {
			case "check":
				c = &report.Check{}
				if json.Unmarshal(run.Summary, c) != nil {
					c = nil
				}
			case "keycheck":
				k = &report.KeyCheck{}
				if json.Unmarshal(run.Summary, k) != nil {
					k = nil
				}
			}
			if c == nil && k == nil {
				return msg
			}
		}
		as, err := st.ListAttempts(ctx, id)
		if err != nil {
			msg.err = err
			return msg
		}
		rds, err := st.ListProbeReadings(ctx, id)
		if err != nil {
			msg.err = err
			return msg
		}
		rec := report.TimelineRecords{Run: run, Attempts: as, Readings: rds}
		if c != nil {
			msg.tl = report.NewTimeline(c, rec)
		} else {
			msg.tl = report.NewKeyCheckTimeline(k, rec)
		}
		msg.attempts = make(map[int64]*store.Attempt, len(as))
		for _, a := range as {
			msg.attempts[a.ID] = a
		}
		return msg
	}
}

// timelinePicker draws a run's timelines and keeps the copy selected in them.
type timelinePicker struct {
	tl       *report.Timeline
	attempts map[int64]*store.Attempt
	// ids are the copies' attempts in drawing order; sel indexes them (-1: none).
	ids []int64
	sel int
	// top is the viewport line the timelines start at; line the line of
	// each drawn copy, from there.
	top  int
	line map[int64]int
}

func (t *timelinePicker) set(msg timelineMsg) {
	t.tl, t.attempts, t.sel = msg.tl, msg.attempts, -1
	t.ids = nil
	if t.tl == nil {
		return
	}
	for _, s := range t.tl.Sections {
		for _, c := range s.Copies {
			t.ids = append(t.ids, c.AttemptID)
		}
	}
}

func (t *timelinePicker) selected() int64 {
	if t.sel < 0 || t.sel >= len(t.ids) {
		return 0
	}
	return t.ids[t.sel]
}

// render draws the timelines width columns wide, starting at viewport line top.
func (t *timelinePicker) render(p report.Painter, width, top int) string {
	if t.tl == nil || len(t.tl.Sections) == 0 {
		return ""
	}
	t.top, t.line = top, map[int64]int{}
	var b strings.Builder
	b.WriteString(p.Bold("timeline") + p.Faint(" · tab/shift+tab select a copy, enter opens it") + "\n")
	n := 1
	for i := range t.tl.Sections {
		b.WriteString("\n")
		n++
		for _, l := range t.tl.Sections[i].Blocks(p, width, t.selected()) {
			if l.AttemptID != 0 {
				t.line[l.AttemptID] = n
			}
			b.WriteString(l.Text + "\n")
			n++
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// key moves the selection (tab, shift+tab) or opens the selected copy
// (enter); handled is false for any other key. vp is scrolled to keep
// the selection in sight once redraw has drawn it again.
func (t *timelinePicker) key(e *env, msg tea.KeyMsg, vp *viewport.Model, redraw func()) (tea.Cmd, bool) {
	if len(t.ids) == 0 {
		return nil, false
	}
	switch {
	case msg.String() == "tab":
		t.sel = (t.sel + 1) % len(t.ids)
	case msg.String() == "shift+tab":
		if t.sel <= 0 {
			t.sel = len(t.ids)
		}
		t.sel--
	case key.Matches(msg, e.keys.Open) && t.sel >= 0:
		if a := t.attempts[t.selected()]; a != nil {
			return e.nav(openAttemptMsg{a: a}), true
		}
		return nil, true
	default:
		return nil, false
	}
	redraw()
	if l, ok := t.line[t.selected()]; ok {
		at := t.top + l
		if at < vp.YOffset || at >= vp.YOffset+vp.Height {
			vp.SetYOffset(max(0, at-vp.Height/2))
		}
	}
	return nil, true
}

// pickerKeys are the footer's keys while a timeline is shown.
var pickerKeys = []key.Binding{
	key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "select copy")),
	key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open copy")),
}

// openAttemptMsg asks the root to show one attempt.
type openAttemptMsg struct{ a *store.Attempt }

// attemptModel shows one attempt opened from a timeline.
type attemptModel struct {
	env *env
	a   *store.Attempt
	vp  viewport.Model
}

func newAttempt(e *env, a *store.Attempt) *attemptModel {
	return &attemptModel{env: e, a: a, vp: viewport.New(0, 0)}
}

func (m *attemptModel) Init() tea.Cmd   { return nil }
func (m *attemptModel) Title() string   { return fmt.Sprintf("attempt %d", m.a.ID) }
func (m *attemptModel) Capturing() bool { return false }
func (m *attemptModel) Keys() []key.Binding {
	k := m.env.keys
	return []key.Binding{k.Up, k.Down, k.PageDown, k.Back, k.Help, k.Quit}
}
func (m *attemptModel) Status() string {
	return fmt.Sprintf("run %d · %s copy %d · %s", m.a.RunID, m.a.Phase, m.a.Copy, m.env.dbPath)
}

func (m *attemptModel) SetSize(w, h int) {
	m.vp.Width, m.vp.Height = w, h
	var b bytes.Buffer
	_ = report.AttemptDetail(&b, report.Colors(m.env.color), m.a)
	m.vp.SetContent(wrapReport(strings.TrimRight(b.String(), "\n"), max(10, w)))
}

func (m *attemptModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if key.Matches(msg, m.env.keys.Back) {
			return m.env.nav(backMsg{})
		}
		return scroll(&m.vp, m.env.keys, msg)
	case tea.MouseMsg:
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		return cmd
	}
	return nil
}

func (m *attemptModel) View() string { return m.vp.View() }
