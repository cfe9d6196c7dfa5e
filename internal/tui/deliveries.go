package tui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// The deliveries view holds a window of at most pageSize summaries around the
// cursor; moving within edgeMargin of its end loads the next window. Bodies
// are never read here, so a store of any size opens and scrolls alike.
const (
	pageSize   = 120
	edgeMargin = 40
)

type anchorKind int

const (
	anchorTop    anchorKind = iota // the newest rows
	anchorBottom                   // the oldest rows
	anchorID                       // rows around one delivery
)

// windowMsg is a loaded window: rows[0] is the start-th newest match of total.
type windowMsg struct {
	gen    int
	kind   anchorKind
	rows   []store.DeliverySummary
	start  int
	total  int
	err    error
	silent bool // a live reload: errors go to the status bar quietly
	newer  int  // matches newer than the newest row the user has seen
	known  bool // total, start and newer were not counted: keep newer
}

// windowReq is the window loadWindow loads.
type windowReq struct {
	gen  int
	kind anchorKind
	id   int64 // anchorID: the delivery to load around
	seen int64 // the newest delivery the user had on screen (0: none)
	// known: at is id's index among the total matches. A move in a store
	// that did not change knows both; counting them again took a scan of
	// the rows past id (300 ms a window near the end of 100k deliveries)
	// and, under a body-text filter, of every body.
	known     bool
	at, total int
}

// loadWindow loads a window of the matches of f; newer counts those after
// the newest the user saw.
func loadWindow(ctx context.Context, st *store.Store, f store.Filter, r windowReq) tea.Cmd {
	return func() tea.Msg {
		m := windowMsg{gen: r.gen, kind: r.kind, total: r.total, known: r.known}
		kind, id := r.kind, r.id
		if !r.known {
			if m.total, m.err = st.CountDeliveries(ctx, f); m.err != nil {
				return m
			}
			if r.seen > 0 && kind == anchorID {
				if m.newer, m.err = st.CountBefore(ctx, f, r.seen); m.err != nil {
					return m
				}
			}
		}
		switch kind {
		case anchorTop:
			m.rows, m.err = st.ListSummaries(ctx, f, store.Page{Limit: pageSize})
		case anchorBottom:
			m.rows, m.err = st.ListSummaries(ctx, f, store.Page{Oldest: true, Limit: pageSize})
			m.start = max(0, m.total-len(m.rows))
		case anchorID:
			var above, below []store.DeliverySummary
			var pos int
			if above, m.err = st.ListSummaries(ctx, f, store.Page{After: id, Limit: pageSize / 2}); m.err != nil {
				return m
			}
			if below, m.err = st.ListSummaries(ctx, f, store.Page{Before: id + 1, Limit: pageSize / 2}); m.err != nil {
				return m
			}
			pos = r.at
			if !r.known {
				if pos, m.err = st.CountBefore(ctx, f, id); m.err != nil {
					return m
				}
			}
			m.rows = append(above, below...)
			m.start = max(0, pos-len(above))
		}
		return m
	}
}

// cursorStatic: text inputs draw a steady cursor (a blinking one would keep
// a timer running for nothing).
const cursorStatic = cursor.CursorStatic

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

// load starts loading a window (cancelling the one in flight); its answer
// is the only one applied.
func (m *deliveriesModel) load(kind anchorKind, id int64) tea.Cmd {
	return m.loadReq(windowReq{kind: kind, id: id})
}

func (m *deliveriesModel) loadReq(r windowReq) tea.Cmd {
	kind := r.kind
	if m.stopLoad != nil {
		m.stopLoad()
	}
	var ctx context.Context
	ctx, m.stopLoad = context.WithCancel(context.Background())
	m.gen++
	m.busy, m.stale = true, false
	m.loading = kind
	if kind != anchorID {
		m.pending = 0 // a jump or a new filter: earlier moves are moot
	}
	r.gen, r.seen = m.gen, m.seen
	return loadWindow(ctx, m.env.st, m.filter, r)
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
	return []key.Binding{k.Open, k.Filter, k.Replay, k.Check, k.Help, k.Quit, k.Runs, k.Mark, k.Copy, k.Export, k.Delete}
}

// Status is the status bar's text when nothing else is to be said.
func (m *deliveriesModel) Status() string {
	if !m.loaded {
		return "loading " + m.env.dbPath
	}
	s := fmt.Sprintf("%d/%d", min(m.cursor+1, m.total), m.total)
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
	case changedMsg:
		return m.reload()
	case deletedMsg:
		if msg.err != nil {
			return failed(msg.err)
		}
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
			return copyCurl(m.env, id)
		}
	case key.Matches(msg, k.Export):
		if ids := m.selection(); len(ids) > 0 {
			return exportJSONL(m.env, ids)
		}
	case key.Matches(msg, k.Replay):
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

// reset loads the newest matches of a new filter.
func (m *deliveriesModel) reset() tea.Cmd {
	m.cursor, m.top = 0, 0
	return m.load(anchorTop, 0)
}

// reload re-reads the window after the store changed. On the newest row the
// view follows new deliveries (like tail -f); elsewhere it keeps the selected
// one under the cursor.
func (m *deliveriesModel) reload() tea.Cmd {
	if m.busy {
		// Restarting would starve a slow body-text scan while a capture
		// keeps writing: reload once the load in flight is applied.
		m.stale = true
		return nil
	}
	if m.cursor == 0 || m.selected() == 0 {
		return m.load(anchorTop, 0)
	}
	return m.load(anchorID, m.selected())
}

// jump loads the newest or the oldest rows; the count of matches is known
// (counting again scanned every body under a text filter).
func (m *deliveriesModel) jump(kind anchorKind) tea.Cmd {
	return m.loadReq(windowReq{kind: kind, known: m.loaded, total: m.total})
}

func (m *deliveriesModel) applyWindow(w windowMsg) tea.Cmd {
	if w.gen != m.gen {
		return nil // a newer load is on its way
	}
	m.busy = false
	if w.err != nil {
		return failed(w.err)
	}
	sel, offset := m.selected(), m.cursor-m.top
	m.rows, m.start, m.total, m.loaded = w.rows, w.start, w.total, true
	if !w.known {
		m.newer = w.newer
	}
	switch w.kind {
	case anchorTop:
		m.cursor, m.top = 0, 0
	case anchorBottom:
		m.cursor = max(0, m.total-1)
		m.top = max(0, m.total-m.visible())
	case anchorID:
		i := sort.Search(len(m.rows), func(i int) bool { return m.rows[i].ID <= sel })
		m.cursor = m.start + min(i, max(0, len(m.rows)-1))
		m.top = m.cursor - offset
	}
	m.scrollTo(m.cursor)
	if m.stale {
		m.stale = false
		return m.reload()
	}
	if p := m.pending; p != 0 {
		m.pending = 0
		return m.move(p)
	}
	return m.extend()
}

// move moves the cursor by delta rows; what lies beyond the loaded window
// is kept in pending for when the next window is in.
func (m *deliveriesModel) move(delta int) tea.Cmd {
	if m.busy && m.loading != anchorID {
		// After g, G or a new filter, moves count from where it lands.
		m.pending += delta
		return nil
	}
	if len(m.rows) == 0 {
		return nil
	}
	want := min(max(m.cursor+m.pending+delta, 0), max(0, m.total-1))
	m.scrollTo(want)
	m.pending = want - m.cursor
	return m.extend()
}

// scrollTo puts the cursor on row i (clamped to the loaded rows) and scrolls
// so it is visible.
func (m *deliveriesModel) scrollTo(i int) {
	if len(m.rows) == 0 {
		m.cursor, m.top = 0, 0
		return
	}
	m.cursor = min(max(i, m.start), m.start+len(m.rows)-1)
	v := m.visible()
	m.top = min(m.top, m.cursor)
	if m.cursor >= m.top+v {
		m.top = m.cursor - v + 1
	}
	m.top = max(0, min(m.top, m.total-v))
	if m.top == 0 && m.start == 0 && m.rows[0].ID > m.seen {
		m.seen, m.newer = m.rows[0].ID, 0
	}
}

// extend loads a window around the cursor when it came near an end of the
// loaded rows and more rows lie beyond.
func (m *deliveriesModel) extend() tea.Cmd {
	if m.busy || len(m.rows) == 0 {
		return nil
	}
	end := m.start + len(m.rows)
	if (m.cursor-m.start < edgeMargin && m.start > 0) || (end-1-m.cursor < edgeMargin && end < m.total) {
		// Nothing changed since the last window (a change reloads it):
		// the selected row's index and the total are known.
		return m.loadReq(windowReq{kind: anchorID, id: m.selected(), known: true, at: m.cursor, total: m.total})
	}
	return nil
}

// narrow is below the width where every column but PROVIDER fits: the
// list drops EVENT ID and SIZE and shows times without the date, so ID,
// EVENT TYPE and STATUS stay readable (at 40 columns STATUS was cut off).
const narrow = 60

// receivedFormat is how RECEIVED is written at the view's width.
func (m *deliveriesModel) receivedFormat() string {
	if m.width < narrow {
		return "15:04:05"
	}
	return "01-02 15:04:05"
}

func (m *deliveriesModel) columns() []table.Column {
	provider, received, eventID, size := 9, 14, 1, 9 // SIZE fits "999.9 KiB"
	switch {
	case m.width < narrow:
		provider, received, eventID, size = 0, 8, 0, 0
	case m.width < 100:
		provider = 0
	}
	// Each shown column takes one more for the space after it.
	used := 2 + 8 + received + 1 + 4 + 7
	if provider > 0 {
		used += provider + 1
	}
	if size > 0 {
		used += size + 1
	}
	flex := max(m.width-used-2, 10)
	typ := flex
	if eventID > 0 {
		flex = max(flex-2, 10)
		typ = flex / 2
		eventID = flex - typ
	}
	return []table.Column{
		{Title: " ", Width: 1}, {Title: "ID", Width: 7}, {Title: "RECEIVED", Width: received},
		{Title: "PROVIDER", Width: provider}, {Title: "EVENT TYPE", Width: typ}, {Title: "EVENT ID", Width: eventID},
		{Title: "SIG", Width: 3}, {Title: "STATUS", Width: 6}, {Title: "SIZE", Width: size},
	}
}

func (m *deliveriesModel) View() string {
	st := m.env.styles
	v := m.visible()
	var rows []table.Row
	for i := m.top; i < m.top+v && i < m.total; i++ {
		j := i - m.start
		if j < 0 || j >= len(m.rows) {
			rows = append(rows, table.Row{" ", "…"})
			continue
		}
		rows = append(rows, m.row(m.rows[j], i == m.cursor))
	}
	for len(rows) < v {
		rows = append(rows, table.Row{})
	}
	m.table.SetColumns(m.columns())
	m.table.SetHeight(v + 1)
	m.table.SetWidth(m.width)
	m.table.SetRows(rows)
	m.table.SetCursor(m.cursor - m.top)
	body := m.table.View()
	if m.loaded && m.total == 0 {
		empty := "no deliveries yet: run 'hookreplay capture' (they appear here as they arrive) or 'hookreplay import'"
		switch {
		case m.query != "":
			empty = "no delivery matches " + pr(m.query) + " (esc clears the filter)"
		case m.env.banner != "":
			empty = "no deliveries yet: " + m.env.banner + "; they appear here as they arrive"
		}
		lines := strings.Split(body, "\n")
		for i, l := range strings.Split(wrap(empty, max(10, m.width)), "\n") {
			if i+1 < len(lines) {
				lines[i+1] = st.Faint.Render(l)
			}
		}
		body = strings.Join(lines, "\n")
	}
	var line string
	switch {
	case m.filtering:
		line = m.input.View()
	case m.confirm != nil:
		line = st.Warn.Render(fmt.Sprintf("delete %s? y/n", describeIDs(m.confirm)))
	case m.query != "":
		line = st.Faint.Render("filter: " + m.query + " (/ to change, esc to clear)")
	}
	return body + "\n" + line
}

func (m *deliveriesModel) row(d store.DeliverySummary, cur bool) table.Row {
	mark := " "
	switch {
	case cur:
		mark = ">"
	case m.marked[d.ID]:
		mark = "*"
	}
	if cur && m.marked[d.ID] {
		mark = "»"
	}
	status := "–"
	if d.ResponseStatus != 0 {
		status = fmt.Sprint(d.ResponseStatus)
	}
	// A sender without event types (a generic one) is told apart by the
	// path it posted to, as 'list' shows it.
	what := pr(d.EventType)
	if what == "" {
		what = pr(d.Target)
	}
	return table.Row{mark, fmt.Sprint(d.ID), d.ReceivedAt.Local().Format(m.receivedFormat()),
		pr(d.Provider), dash(what), dash(pr(d.EventID)), sigMark(d.Verification), status, report.Size(d.BodySize)}
}

// sigMark is ✓ for a signature verified at capture, ✗ for one that failed and
// – when capture had no secret.
func sigMark(v string) string {
	switch {
	case strings.HasPrefix(v, "valid"):
		return "✓"
	case strings.HasPrefix(v, "invalid"):
		return "✗"
	}
	return "–"
}

func describeIDs(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("delivery %d", ids[0])
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(s) > 6 {
		s = append(s[:5], "…")
	}
	return fmt.Sprintf("%d deliveries (%s)", len(ids), strings.Join(s, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// pr makes sender-controlled text safe for the terminal: control bytes
// escaped (message.Printable) and every character terminals disagree on the
// width of escaped too (steady).
func pr(s string) string { return steady(message.Printable(s)) }

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
