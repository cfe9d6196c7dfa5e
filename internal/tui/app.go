package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// view is one screen: the root routes keys to the top view and every other
// message to all open views (each ignores what is not its own).
type view interface {
	Init() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	Title() string
	// Status is the status bar's text when there is no note or error.
	Status() string
	// Keys are the bindings the footer shows.
	Keys() []key.Binding
	// Capturing is true while the view takes typed text (a filter, a form):
	// q and ? are then text, not commands.
	Capturing() bool
}

// model is the root: a stack of views over the deliveries view, the status
// bar, the help overlay and the window size.
type model struct {
	env    *env
	views  []view
	width  int
	height int

	note     string
	err      error
	showHelp bool
	helpTop  int // the first line of a help too long for the window
	help     help.Model
	version  int64
	// copying is the delivery y asked about: the next key says what to
	// copy (0: not asking).
	copying int64
	// watchErr: m.err is the watcher's (cleared once it reads again).
	watchErr bool
	quitting bool
}

func newModel(e *env) *model {
	h := help.New()
	h.ShortSeparator = " · "
	// Every style is set: help's defaults are adaptive colours, and resolving
	// one asks the terminal for its background (OSC 11) while Bubble Tea
	// reads the same input — the answer would arrive as stray key presses.
	h.Styles = help.Styles{ShortKey: e.styles.Bold, ShortDesc: e.styles.Faint, ShortSeparator: e.styles.Faint,
		Ellipsis: e.styles.Faint, FullKey: e.styles.Bold, FullDesc: e.styles.Faint, FullSeparator: e.styles.Faint}
	m := &model{env: e, help: h, width: 80, height: 24}
	m.views = []view{newDeliveries(e)}
	return m
}

func (m *model) top() view { return m.views[len(m.views)-1] }

// init loads the deliveries and starts watching the store.
func (m *model) init() tea.Cmd {
	cmds := []tea.Cmd{m.views[0].Init()}
	if m.env.watcher != nil {
		cmds = append(cmds, readVersion(m.env.watcher))
	}
	if m.env.notes != nil {
		cmds = append(cmds, m.nextNote())
	}
	m.note = m.env.banner
	return tea.Batch(cmds...)
}

// bodyHeight is the lines left for a view: the window minus the title, status
// and help lines.
func (m *model) bodyHeight() int { return max(1, m.height-3) }

func (m *model) push(v view) tea.Cmd {
	v.SetSize(m.width, m.bodyHeight())
	m.views = append(m.views, v)
	return v.Init()
}

// update routes msg, then makes the view changes it asked for.
func (m *model) update(msg tea.Msg) tea.Cmd {
	return tea.Batch(m.route(msg), m.navigate())
}

// navigate makes the view changes asked for so far (nav).
func (m *model) navigate() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.env.navs) > 0 {
		next := m.env.navs[0]
		m.env.navs = m.env.navs[1:]
		cmds = append(cmds, m.route(next))
	}
	return tea.Batch(cmds...)
}

func (m *model) route(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		for _, v := range m.views {
			v.SetSize(m.width, m.bodyHeight())
		}
		return nil
	case statusMsg:
		m.note, m.err = msg.text, msg.err
		return nil
	case noteMsg:
		m.note, m.err = string(msg), nil
		return m.nextNote()
	case pollMsg:
		if m.env.watcher == nil {
			return nil
		}
		return readVersion(m.env.watcher)
	case versionMsg:
		if msg.err != nil {
			m.err, m.watchErr = msg.err, true
			return tick(m.env.poll) // then read the version again
		}
		if m.watchErr {
			m.err, m.watchErr = nil, false
		}
		changed := m.version != 0 && msg.v != m.version
		m.version = msg.v
		var next tea.Cmd
		if m.env.poll > 0 {
			next = m.env.waitChange(m.env.watcher, msg.v)
		}
		if changed {
			return tea.Batch(next, m.broadcast(changedMsg{}))
		}
		if m.version != 0 {
			return tea.Batch(next, m.broadcast(quietMsg{}))
		}
		return next
	case openDeliveryMsg:
		return m.push(newDelivery(m.env, msg.id))
	case openRunsMsg:
		return m.push(newRuns(m.env))
	case openRunMsg:
		return m.push(newRun(m.env, msg.id))
	case openAttemptMsg:
		return m.push(newAttempt(m.env, msg.a))
	case openReplayMsg:
		return m.openReplay(msg)
	case quickReplayMsg:
		return m.quickReplay(msg)
	case openCheckMsg:
		return m.openCheck(msg)
	case openEditMsg:
		return m.push(newEdit(m.env, msg.id))
	case copyAskMsg:
		m.copying = msg.id
		return nil
	case backMsg:
		if len(m.views) > 1 {
			m.views = m.views[:len(m.views)-1]
		}
		return nil
	case tea.KeyMsg:
		return m.key(msg)
	case tea.MouseMsg:
		return m.top().Update(msg)
	}
	return m.broadcast(msg)
}

// noteMsg is a note from Options.Notes.
type noteMsg string

func (m *model) nextNote() tea.Cmd {
	notes, done := m.env.notes, m.env.done
	return func() tea.Msg {
		select {
		case n, ok := <-notes:
			if !ok {
				return nil
			}
			return noteMsg(n)
		case <-done:
			return nil
		}
	}
}

func (m *model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, v := range m.views {
		cmds = append(cmds, v.Update(msg))
	}
	return tea.Batch(cmds...)
}

func (m *model) key(msg tea.KeyMsg) tea.Cmd {
	// Keys typed faster than they are read (over ssh, from tmux) arrive as
	// one message of several runes: "/provider" must still open the filter.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
			// A view a rune opens gets the runes after it ("r8080": the
			// replay form, then its target).
			cmds = append(cmds, m.navigate())
		}
		return tea.Batch(cmds...)
	}
	k := m.env.keys
	m.note, m.err = "", nil
	if msg.Type == tea.KeyCtrlC {
		return m.quit()
	}
	if id := m.copying; id != 0 {
		m.copying = 0
		if kind, ok := copyWhat(msg.String()); ok {
			return copyDelivery(m.env, id, kind)
		}
		m.note = "nothing copied"
		return nil
	}
	if m.showHelp {
		if m.scrollHelp(msg) {
			return nil
		}
		// Any key closes the help, as it says, q too: a q meant to close it
		// quit the TUI (ctrl+c still quits, above).
		m.showHelp = false
		return nil
	}
	if !m.top().Capturing() {
		switch {
		case key.Matches(msg, k.Quit):
			return m.quit()
		case key.Matches(msg, k.Help):
			m.showHelp, m.helpTop = true, 0
			return nil
		case key.Matches(msg, k.Runs):
			if _, ok := m.top().(*runsModel); !ok {
				return m.env.nav(openRunsMsg{})
			}
		}
	}
	return m.top().Update(msg)
}

// quit ends the program; Run then stops running work and waits for it, so
// what was sent stays stored.
func (m *model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// view draws the title line, the top view, the status bar and the footer.
func (m *model) view() string {
	if m.quitting {
		return ""
	}
	st := m.env.styles
	var crumbs []string
	for _, v := range m.views {
		crumbs = append(crumbs, v.Title())
	}
	title := st.Title.Render("hookreplay") + st.Faint.Render(" · "+strings.Join(crumbs, " › "))
	body := m.top().View()
	if m.showHelp {
		body = m.helpOverlay()
	}
	body = lipgloss.NewStyle().Height(m.bodyHeight()).MaxHeight(m.bodyHeight()).MaxWidth(m.width).Render(body)
	var bar string
	switch {
	case m.copying != 0:
		bar = st.Warn.Render(fmt.Sprintf(copyPrompt, m.copying))
	case m.err != nil:
		bar = st.StatusErr.Render("error: " + oneLineText(m.err.Error()))
	case m.note != "":
		bar = st.Info.Render(oneLineText(m.note))
	default:
		bar = st.Status.Render(m.top().Status())
	}
	bar = lipgloss.NewStyle().MaxWidth(m.width).Render(bar)
	footer := lipgloss.NewStyle().MaxWidth(m.width).Render(m.help.ShortHelpView(m.top().Keys()))
	// Sender text is escaped where it is laid out (pr); text the report
	// package wrote (a replay's answers, a check report) is made steady here,
	// so no frame can hold a character that would shift the screen.
	return steady(title + "\n" + body + "\n" + bar + "\n" + footer)
}

func oneLineText(s string) string {
	return pr(strings.ReplaceAll(s, "\n", " "))
}
