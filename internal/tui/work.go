package tui

import tea "github.com/charmbracelet/bubbletea"

// openReplayMsg asks the root to open the replay form for ids.
type openReplayMsg struct{ ids []int64 }

// openCheckMsg asks the root to check ids.
type openCheckMsg struct{ ids []int64 }

func (m *model) openReplay(msg openReplayMsg) tea.Cmd { return m.push(newReplay(m.env, msg.ids)) }

func (m *model) openCheck(msg openCheckMsg) tea.Cmd { return m.push(newCheck(m.env, msg.ids)) }

// quickReplay replays at once to the target found for r, or opens the form
// when none was.
func (m *model) quickReplay(msg quickReplayMsg) tea.Cmd {
	r := newReplay(m.env, msg.ids)
	if msg.target.url == "" {
		r.why = "no target known for " + describeIDs(msg.ids) + " (never replayed, no --to): type the handler's URL"
		return m.push(r)
	}
	r.fields[fieldTarget].SetValue(msg.target.url)
	r.auto, r.why = true, msg.target.from
	return m.push(r)
}
