package tui

import tea "github.com/charmbracelet/bubbletea"

// openReplayMsg asks the root to open the replay form for ids.
type openReplayMsg struct{ ids []int64 }

// openCheckMsg asks the root to check ids.
type openCheckMsg struct{ ids []int64 }

func (m *model) openReplay(openReplayMsg) tea.Cmd {
	return status("replay from the TUI is not built yet")
}

func (m *model) openCheck(openCheckMsg) tea.Cmd { return status("check from the TUI is not built yet") }
