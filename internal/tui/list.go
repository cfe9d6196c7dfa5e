package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

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
		typ, eventID = m.split(flex)
	}
	return []table.Column{
		{Title: " ", Width: 1}, {Title: "ID", Width: 7}, {Title: "RECEIVED", Width: received},
		{Title: "PROVIDER", Width: provider}, {Title: "EVENT TYPE", Width: typ}, {Title: "EVENT ID", Width: eventID},
		{Title: "SIG", Width: 3}, {Title: "STATUS", Width: 6}, {Title: "SIZE", Width: size},
	}
}

// split shares flex columns between EVENT TYPE and EVENT ID by what the
// loaded rows hold: the type whole first (it is what a row is read by; at 100
// columns an even split cut "charge.dispute.created" with columns to spare
// beside short ids), the id at least a third (or whole when shorter), and
// columns neither needs to the type.
func (m *deliveriesModel) split(flex int) (typ, id int) {
	const minEventID = 10
	needT, needI := len("EVENT TYPE"), len("EVENT ID")
	for _, d := range m.rows {
		needT = max(needT, ansi.StringWidth(eventWhat(d)))
		needI = max(needI, ansi.StringWidth(idsCell(d.EventID, d.Identity)))
	}
	if needT+needI <= flex {
		return flex - needI, needI
	}
	// A type that would take nearly all (an escaped one, a long path)
	// leaves the id a third.
	id = min(needI, max(minEventID, flex/3))
	typ = min(needT, flex-id)
	return typ, flex - typ
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
	return table.Row{mark, fmt.Sprint(d.ID), d.ReceivedAt.Local().Format(m.receivedFormat()),
		pr(d.Provider), eventWhat(d), idsCell(d.EventID, d.Identity), sigMark(d.Verification), status, report.Size(d.BodySize)}
}

// eventWhat is what the EVENT TYPE column shows: the event type or, for a
// sender without event types (a generic one), the path it posted to, as
// 'list' shows it.
func eventWhat(d store.DeliverySummary) string {
	if d.EventType == "" {
		return dash(pr(d.Target))
	}
	return pr(d.EventType)
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
