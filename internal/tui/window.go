package tui

import (
	"context"
	"math"
	"sort"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/store"
)

// The deliveries view holds a window of at most pageSize summaries around the
// cursor; moving within edgeMargin of its end loads the next window. Bodies
// are never read here, so a store of any size opens and scrolls alike.
const (
	pageSize   = 120
	edgeMargin = 40
)

// recount is how often at most the deliveries view counts every match of
// its filter while the store keeps changing. Between two such counts a
// change counts only the matches newer than the newest counted (a range of
// the primary key) and adds them: on a team store of 1M deliveries a whole
// count took 0.4-0.5 s of the Postgres server's time, and every open TUI
// counted again on every delivery any capture wrote (one TUI kept a third
// of a server core busy under 10 deliveries a second). A delivery deleted
// meanwhile by another process is off the count until the next whole one,
// which also runs once the store has been quiet for a watch span.
const recount = 10 * time.Second

// tally is the count of a filter's matches: total, the newest delivery it
// counted and when every match was last counted. partial: the store changed
// since, and only the newer matches were added (a delivery deleted
// meanwhile is still in total: a whole count is due once the store is
// quiet).
type tally struct {
	ok      bool
	total   int
	newest  int64
	at      time.Time
	partial bool
}

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
	// uncounted: a first window of the newest rows, drawn before the
	// matches are counted (a count of 1M rows takes longer than the first
	// screen may); total is len(rows) until a countMsg brings the count.
	uncounted bool
	tally     tally // the count this window's total came from, when counted
}

// countMsg is the count of matches a first window was drawn without.
type countMsg struct {
	gen    int
	total  int
	newest int64
	at     time.Time
	err    error
}

// countMatches counts the matches of f for the window of generation gen.
func countMatches(ctx context.Context, st *store.Store, f store.Filter, gen int, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		at := now()
		n, newest, err := st.CountNewer(ctx, f, 0)
		return countMsg{gen: gen, total: n, newest: newest, at: at, err: err}
	}
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
	// base: a count of the matches to add the newer ones to instead of
	// counting all (not ok: count them all); now reads the clock.
	base tally
	now  func() time.Time
}

// loadWindow loads a window of the matches of f; newer counts those after
// the newest the user saw.
func loadWindow(ctx context.Context, st *store.Store, f store.Filter, r windowReq) tea.Cmd {
	return func() tea.Msg {
		m := windowMsg{gen: r.gen, kind: r.kind, total: r.total, known: r.known}
		kind, id := r.kind, r.id
		counted := r.known
		if !counted && r.base.ok {
			// What came since the last count, added to it.
			n, newest, err := st.CountNewer(ctx, f, r.base.newest)
			if m.err = err; err != nil {
				return m
			}
			m.total = r.base.total + n
			m.tally = tally{ok: true, total: m.total, newest: newest, at: r.base.at, partial: true}
			counted = true
		}
		if !counted && kind == anchorTop {
			// The newest rows need no count: draw them now, count after.
			m.rows, m.err = st.ListSummaries(ctx, f, store.Page{Limit: pageSize})
			m.total = len(m.rows)
			m.uncounted = len(m.rows) == pageSize // fewer: that is all of them
			if !m.uncounted && m.err == nil {
				m.tally = tally{ok: true, total: m.total, at: r.now()}
				if len(m.rows) > 0 {
					m.tally.newest = m.rows[0].ID
				}
			}
			return m
		}
		if !counted {
			at := r.now()
			n, newest, err := st.CountNewer(ctx, f, 0)
			if m.err = err; err != nil {
				return m
			}
			m.total, m.tally = n, tally{ok: true, total: n, newest: newest, at: at}
		}
		if !r.known {
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
			if len(below) < pageSize/2 {
				m.total = m.start + len(m.rows) // see below
			}
		}
		// A window that reaches the oldest match ends the list there: a
		// count that was only added to since the last whole one (recount)
		// may still hold deliveries another process deleted, and a total
		// past the last row would keep loading the window after it.
		if kind == anchorTop && m.err == nil && len(m.rows) < pageSize {
			m.total = len(m.rows)
		}
		return m
	}
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
	m.loadCtx = ctx
	m.gen++
	m.busy, m.stale = true, false
	m.loading = kind
	if kind != anchorID {
		m.pending = 0 // a jump or a new filter: earlier moves are moot
	}
	r.gen, r.seen, r.now = m.gen, m.seen, m.env.now
	if !r.known && m.tally.ok && m.env.now().Sub(m.tally.at) < recount {
		r.base = m.tally
	}
	return loadWindow(ctx, m.env.st, m.filter, r)
}

// reset loads the newest matches of a new filter.
func (m *deliveriesModel) reset() tea.Cmd {
	m.cursor, m.top = 0, 0
	m.tally = tally{}
	return m.load(anchorTop, 0)
}

// reload re-reads the window after the store changed. On the newest row the
// view follows new deliveries (like tail -f); elsewhere it keeps the selected
// one under the cursor.
func (m *deliveriesModel) reload() tea.Cmd {
	if m.busy || m.counting {
		// Restarting would starve a slow body-text scan (or count) while a
		// capture keeps writing: reload once the one in flight is applied.
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
	return m.loadReq(windowReq{kind: kind, known: m.loaded && !m.counting, total: m.total})
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
	m.counting = w.uncounted
	if w.tally.ok {
		m.tally = w.tally
	}
	if !w.known {
		m.newer = w.newer
	}
	var count tea.Cmd
	if w.uncounted {
		count = countMatches(m.loadCtx, m.env.st, m.filter, m.gen, m.env.now)
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
		return tea.Batch(count, m.move(p))
	}
	return tea.Batch(count, m.extend())
}

// applyCount sets the total a first window was drawn without; moves past
// its rows, held until now, load the next window.
func (m *deliveriesModel) applyCount(c countMsg) tea.Cmd {
	if c.gen != m.gen || !m.counting {
		return nil // a newer load is on its way or counted already
	}
	if c.err != nil {
		return failed(c.err)
	}
	m.counting = false
	m.total = max(c.total, m.start+len(m.rows))
	m.tally = tally{ok: true, total: c.total, newest: c.newest, at: c.at}
	if m.stale {
		m.stale = false
		return m.reload()
	}
	if p := m.pending; p != 0 && !m.busy {
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
	last := max(0, m.total-1)
	if m.counting {
		last = math.MaxInt // the count decides once it is in
	}
	want := min(max(m.cursor+m.pending+delta, 0), last)
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
