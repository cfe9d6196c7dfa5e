package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// helpLines is the help overlay's text, inner lines of at most w columns:
// the keys in columns side by side when they fit, else one under the other.
func (m *model) helpLines(w int) []string {
	h := m.help
	h.ShowAll = true
	h.FullSeparator = "  "
	h.Width = 0
	groups := m.env.keys.FullHelp()
	keys := h.FullHelpView(groups)
	if lipgloss.Width(keys) > w {
		// Too narrow for the columns side by side: one column, every key
		// still there (help.Model would cut all but the first).
		var all []key.Binding
		for _, g := range groups {
			all = append(all, g...)
		}
		keys = h.FullHelpView([][]key.Binding{all})
	}
	st := m.env.styles
	lines := []string{st.Bold.Render("keys"), ""}
	for _, l := range strings.Split(keys, "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	lines = append(lines, "")
	for _, l := range strings.Split(wrap("filter: "+filterHelp+"\nany key closes this help", w), "\n") {
		lines = append(lines, st.Faint.Render(l))
	}
	if len(lines) > m.helpRoom() {
		lines[0] = st.Bold.Render("keys") + st.Faint.Render(" · ↓/↑ scroll · other keys close")
	}
	return lines
}

// helpRoom is how many lines of help fit inside the overlay's border.
func (m *model) helpRoom() int { return max(1, m.bodyHeight()-2) }

// helpOverlay draws the help in a box, from helpTop when it is longer than
// the window.
func (m *model) helpOverlay() string {
	w := max(10, m.width-4)
	lines := m.helpLines(w)
	room := m.helpRoom()
	if len(lines) > room {
		m.helpTop = min(max(0, m.helpTop), len(lines)-room)
		lines = lines[m.helpTop : m.helpTop+room]
	}
	return m.env.styles.Overlay.Width(w + 2).Render(strings.Join(lines, "\n"))
}

// scrollHelp scrolls a help longer than the window by msg and reports
// whether msg was such a scroll (any other key closes the help).
func (m *model) scrollHelp(msg tea.KeyMsg) bool {
	room := m.helpRoom()
	n := len(m.helpLines(max(10, m.width-4)))
	if n <= room {
		return false
	}
	k := m.env.keys
	switch {
	case key.Matches(msg, k.Down):
		m.helpTop++
	case key.Matches(msg, k.Up):
		m.helpTop--
	case key.Matches(msg, k.PageDown):
		m.helpTop += room - 1
	case key.Matches(msg, k.PageUp):
		m.helpTop -= room - 1
	default:
		return false
	}
	m.helpTop = min(max(0, m.helpTop), n-room)
	return true
}
