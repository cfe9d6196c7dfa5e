package tui

import tea "github.com/charmbracelet/bubbletea"

// openReplayMsg asks the root to open the replay form for ids.
type openReplayMsg struct{ ids []int64 }

// openCheckMsg asks the root to check ids.
type openCheckMsg struct{ ids []int64 }

func (m *model) openReplay(msg openReplayMsg) tea.Cmd { return m.push(newReplay(m.env, msg.ids)) }

func (m *model) openCheck(msg openCheckMsg) tea.Cmd { return m.push(newCheck(m.env, msg.ids)) }
