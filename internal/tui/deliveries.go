package tui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/store"
)

// deletedMsg reports a finished delete.
type deletedMsg struct {
	n   int64
	err error
}

// deliveriesModel is the start view: every captured delivery, newest first.
type deliveriesModel struct {
	env    *env
	width  int
	height int

	filter store.Filter
	query  string
	gen    int
	busy   bool // a window load is in flight
	// loading is the kind of that load.
	loading anchorKind
	// stopLoad cancels the load in flight: a body-text filter scans every
	// body, and a newer filter makes its answer useless.
	stopLoad context.CancelFunc
	stale    bool // the store changed while a load was in flight
	loaded   bool
	// loadCtx is the context of the last load (cancelled by the next one);
	// counting: the matches of the window shown are still being counted.
	loadCtx  context.Context
	counting bool
	// tally is the last count of the filter's matches (window.go's recount).
	tally tally

	rows   []store.DeliverySummary
	start  int // absolute index of rows[0]
	total  int
	cursor int // absolute index of the selected row
	top    int // absolute index of the first visible row
	// pending is the part of a move that went past the loaded rows: it is
	// made once the next window is in, so keys pressed faster than windows
	// load (pgdn held down on a large store) all count.
	pending int
	marked  map[int64]bool
	// seen is the newest delivery the user has had on screen and newer how
	// many matches came after it: away from the top, new deliveries arrive
	// out of sight, and the status bar says so.
	seen  int64
	newer int

	table     table.Model
	input     textinput.Model
	filtering bool
	confirm   []int64 // ids awaiting a delete confirmation
}

func newDeliveries(e *env) *deliveriesModel {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = filterHelp
	in.Cursor.SetMode(cursorStatic)
	t := table.New(table.WithStyles(e.styles.Table), table.WithFocused(true))
	return &deliveriesModel{env: e, marked: map[int64]bool{}, input: in, table: t}
}

func (m *deliveriesModel) Init() tea.Cmd { return m.load(anchorTop, 0) }

// setFilter filters the view by f, written as query (before Init).
func (m *deliveriesModel) setFilter(f store.Filter, query string) {
	m.filter, m.query = f, strings.TrimSpace(query)
	m.input.SetValue(m.query)
}

func (m *deliveriesModel) Title() string { return "deliveries" }

// visible is how many rows fit: the body minus the table header and the
// filter line.
func (m *deliveriesModel) visible() int { return max(1, m.height-2) }

func (m *deliveriesModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.input.Width = max(10, w-2)
	m.scrollTo(m.cursor)
}

func (m *deliveriesModel) Capturing() bool { return m.filtering || m.confirm != nil }

func (m *deliveriesModel) Keys() []key.Binding {
	k := m.env.keys
	if m.filtering {
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	}
	if m.confirm != nil {
		return []key.Binding{k.Confirm, k.Cancel}
	}
	// ? and q come early: at 80 columns the footer is cut after seven or so,
	// and a first-time user needs those two most.
	return []key.Binding{k.Open, k.Filter, k.Replay, k.Check, k.Help, k.Quit, k.ReplayForm, k.Edit, k.Runs, k.Mark, k.Copy, k.Export, k.Delete}
}

// Status is the status bar's text when nothing else is to be said.
func (m *deliveriesModel) Status() string {
	if !m.loaded {
		return "loading " + m.env.dbPath
	}
	s := fmt.Sprintf("%d/%d", min(m.cursor+1, m.total), m.total)
	if m.counting {
		s = fmt.Sprintf("%d/%d+", min(m.cursor+1, m.total), m.total)
	}
	if m.total == 0 {
		s = "0"
	}
	s += " deliveries"
	if m.query != "" {
		s += " matching " + m.query
	}
	if n := len(m.marked); n > 0 {
		s += fmt.Sprintf(" · %d marked", n)
	}
	if m.newer > 0 && m.top > 0 {
		s += fmt.Sprintf(" · %d new above (g)", m.newer)
	}
	if m.busy {
		s += " · loading…"
	}
	if m.env.banner != "" {
		// capture --tui: where to send deliveries stays in sight after the
		// first key clears the banner's note.
		s += " · " + m.env.banner
	}
	return s + " · " + m.env.dbPath
}

// selected is the id under the cursor (0 when the list is empty).
func (m *deliveriesModel) selected() int64 {
	i := m.cursor - m.start
	if i < 0 || i >= len(m.rows) {
		return 0
	}
	return m.rows[i].ID
}

// selection is the marked deliveries, or the selected one, oldest first.
func (m *deliveriesModel) selection() []int64 {
	var ids []int64
	for id := range m.marked {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		if id := m.selected(); id != 0 {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (m *deliveriesModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case windowMsg:
		return m.applyWindow(msg)
	case countMsg:
		return m.applyCount(msg)
	case changedMsg:
		return m.reload()
	case quietMsg:
		// The store stopped changing: count every match again if only the
		// newer ones were counted since the last whole count.
		if m.tally.ok && m.tally.partial && m.env.now().Sub(m.tally.at) >= recount {
			m.tally = tally{}
			return m.reload()
		}
		return nil
	case deletedMsg:
		if msg.err != nil {
			return failed(msg.err)
		}
		m.tally = tally{} // count again what is left
		m.marked = map[int64]bool{}
		return tea.Batch(status(fmt.Sprintf("deleted %s", plural(int(msg.n), "delivery", "deliveries"))), m.reload())
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			return m.move(-3)
		case tea.MouseButtonWheelDown:
			return m.move(3)
		}
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

func (m *deliveriesModel) key(msg tea.KeyMsg) tea.Cmd {
	k := m.env.keys
	if m.filtering {
		switch msg.Type {
		case tea.KeyEnter:
			f, err := parseFilter(m.input.Value(), m.env.now())
			if err != nil {
				return failed(fmt.Errorf("filter: %v", err))
			}
			m.filtering = false
			m.input.Blur()
			m.filter, m.query = f, strings.TrimSpace(m.input.Value())
			return m.reset()
		case tea.KeyEsc:
			m.filtering = false
			m.input.Blur()
			m.input.SetValue(m.query)
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	if m.confirm != nil {
		ids := m.confirm
		m.confirm = nil
		if key.Matches(msg, k.Confirm) {
			st := m.env.st
			return func() tea.Msg {
				n, err := st.DeleteDeliveries(context.Background(), ids...)
				return deletedMsg{n: n, err: err}
			}
		}
		return status("nothing deleted")
	}
	switch {
	case key.Matches(msg, k.Up):
		return m.move(-1)
	case key.Matches(msg, k.Down):
		return m.move(1)
	case key.Matches(msg, k.PageUp):
		return m.move(-m.visible())
	case key.Matches(msg, k.PageDown):
		return m.move(m.visible())
	case key.Matches(msg, k.Top):
		return m.jump(anchorTop)
	case key.Matches(msg, k.Bottom):
		return m.jump(anchorBottom)
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.input.SetValue(m.query)
		m.input.CursorEnd()
		return m.input.Focus()
	case key.Matches(msg, k.Back):
		if m.query != "" {
			m.filter, m.query = store.Filter{}, ""
			m.input.SetValue("")
			return m.reset()
		}
		if len(m.marked) > 0 {
			m.marked = map[int64]bool{}
		}
	case key.Matches(msg, k.Mark):
		if id := m.selected(); id != 0 {
			if m.marked[id] {
				delete(m.marked, id)
			} else {
				m.marked[id] = true
			}
			return m.move(1)
		}
	case key.Matches(msg, k.Open):
		if id := m.selected(); id != 0 {
			return m.env.nav(openDeliveryMsg{id: id})
		}
	case key.Matches(msg, k.Delete):
		if ids := m.selection(); len(ids) > 0 {
			m.confirm = ids
		}
	case key.Matches(msg, k.Copy):
		if id := m.selected(); id != 0 {
			return m.env.nav(copyAskMsg{id: id})
		}
	case key.Matches(msg, k.Export):
		if ids := m.selection(); len(ids) > 0 {
			return exportJSONL(m.env, ids)
		}
	case key.Matches(msg, k.Replay):
		if ids := m.selection(); len(ids) > 0 {
			return quickReplay(m.env, ids)
		}
	case key.Matches(msg, k.Edit):
		if id := m.selected(); id != 0 {
			return m.env.nav(openEditMsg{id: id})
		}
	case key.Matches(msg, k.ReplayForm):
		if ids := m.selection(); len(ids) > 0 {
			return m.env.nav(openReplayMsg{ids: ids})
		}
	case key.Matches(msg, k.Check):
		if ids := m.selection(); len(ids) > 0 {
			return m.env.nav(openCheckMsg{ids: ids})
		}
	}
	return nil
}
