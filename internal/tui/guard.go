package tui

import (
	tea "github.com/charmbracelet/bubbletea"
)

// A panic in the TUI — in a command's goroutine (a store read, the
// watcher's, which Wait raises), in Update or View, or in a replay or
// check it started — ends the session as it would end a command: the
// terminal restored, the runs stopped and what they sent stored, then one
// line and exit 2 (internal/panics). Bubble Tea's own recovery would print
// the stack over the restored terminal. env.trap holds the first panic; Run
// returns it once the program has ended.

// panicMsg tells the root a panic was held: it quits.
type panicMsg struct{}

// guard wraps cmd so that its panic is held and ends the program; the
// commands of a batch it returns are wrapped too.
func (e *env) guard(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		msg, err := e.call(cmd)
		if err != nil {
			return panicMsg{}
		}
		if b, ok := msg.(tea.BatchMsg); ok {
			for i := range b {
				b[i] = e.guard(b[i])
			}
		}
		return msg
	}
}

func (e *env) call(cmd tea.Cmd) (msg tea.Msg, err error) {
	defer e.trap.Catch(&err)
	return cmd(), nil
}

// Update is the root's update, guarded.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(panicMsg); ok {
		return m, m.quit()
	}
	cmd, err := m.updateCaught(msg)
	if err != nil {
		return m, m.quit()
	}
	return m, m.env.guard(cmd)
}

func (m *model) updateCaught(msg tea.Msg) (cmd tea.Cmd, err error) {
	defer m.env.trap.Catch(&err)
	return m.update(msg), nil
}

// View is the root's view, guarded: after a panic it draws nothing and the
// program is asked to quit (off the event loop, which is drawing).
func (m *model) View() string {
	s, err := m.viewCaught()
	if err != nil {
		m.quitting = true
		if q := m.env.quitProgram; q != nil {
			go q()
		}
		return ""
	}
	return s
}

func (m *model) viewCaught() (s string, err error) {
	defer m.env.trap.Catch(&err)
	return m.view(), nil
}

// Init is the root's init, guarded as its commands are.
func (m *model) Init() tea.Cmd {
	cmd, err := m.initCaught()
	if err != nil {
		return func() tea.Msg { return panicMsg{} }
	}
	return m.env.guard(cmd)
}

func (m *model) initCaught() (cmd tea.Cmd, err error) {
	defer m.env.trap.Catch(&err)
	return m.init(), nil
}
