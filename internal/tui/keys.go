package tui

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
)

// keyMap is every key the TUI answers to; the help overlay lists them all and
// each view's footer shows the ones it uses.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open, Back, NextTab, PrevTab            key.Binding
	Filter, Mark                            key.Binding
	Replay, ReplayForm, Check, Runs         key.Binding
	Copy, Export, Edit                      key.Binding
	Delete, Save, Help, Quit                key.Binding
	Confirm, Cancel                         key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "newest/top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "oldest/bottom")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:     key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		NextTab:  key.NewBinding(key.WithKeys("tab", "right", "l"), key.WithHelp("tab", "next tab")),
		PrevTab:  key.NewBinding(key.WithKeys("shift+tab", "left", "h"), key.WithHelp("shift+tab", "previous tab")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Mark:     key.NewBinding(key.WithKeys("m", "insert"), key.WithHelp("m", "mark")),
		Replay:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "replay")),
		// o: "options"; R is runs, and e, f and p are taken or read as
		// export, filter and page elsewhere.
		ReplayForm: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "replay form")),
		Check:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "check")),
		Runs:       key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "runs")),
		Copy:       key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy as…")),
		Export:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export JSONL")),
		Edit:       key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "edit, replay")),
		Delete:     key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "delete")),
		Save:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save report")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Confirm:    key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")),
		Cancel:     key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n", "no")),
	}
}

// ShortHelp is the footer of the deliveries view.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Filter, k.Replay, k.Check, k.Runs, k.Help, k.Quit}
}

// FullHelp is the help overlay: every key, by column.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Back, k.NextTab, k.PrevTab, k.Filter, k.Mark},
		{k.Replay, k.ReplayForm, k.Edit, k.Check, k.Runs, k.Copy},
		{k.Export, k.Delete, k.Save, k.Help, k.Quit},
	}
}

// scroll moves a text view by a key: the viewport's own keys, and g and G
// (home, end) to its top and bottom as everywhere else.
func scroll(vp *viewport.Model, k keyMap, msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, k.Top):
		vp.GotoTop()
		return nil
	case key.Matches(msg, k.Bottom):
		vp.GotoBottom()
		return nil
	}
	var cmd tea.Cmd
	*vp, cmd = vp.Update(msg)
	return cmd
}
