package tui

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// The edit view (E) is mitmproxy's e and ngrok's "replay with
// modifications": change a delivery's request — all of it or its body in
// $EDITOR, a header's value in place or in $EDITOR — then r stores the edited
// copy as a new delivery marked as derived from the original and replays it
// at once, where r would send the original, re-signed when the secret is
// known (the replay engine re-signs, as for every replay).

// openEditMsg asks the root to open the edit view of delivery id.
type openEditMsg struct{ id int64 }

// editLoadedMsg is the delivery to edit.
type editLoadedMsg struct {
	id  int64
	d   *store.Delivery
	err error
}

// editorDoneMsg is the editor's exit: the session holds the edited text.
type editorDoneMsg struct {
	id  int64
	row int
	ses *replay.EditorSession
	err error
}

// editStoredMsg is the edited copy, stored.
type editStoredMsg struct {
	orig, id int64
	desc     string
	err      error
}

// The edit view's first rows; headers follow, one row each.
const (
	editRequest = iota
	editBody
	editHeaders
)

// editModel edits a working copy of one delivery's request.
type editModel struct {
	env    *env
	id     int64
	width  int
	height int

	d       *store.Delivery
	req     *message.Request // the working copy
	cursor  int
	field   textinput.Model
	inPlace bool // editing the selected header's value in the field
	storing bool
}

func newEdit(e *env, id int64) *editModel {
	in := textinput.New()
	in.Prompt = ""
	in.Cursor.SetMode(cursorStatic)
	return &editModel{env: e, id: id, field: in}
}

func (m *editModel) Init() tea.Cmd {
	st, id := m.env.st, m.id
	return func() tea.Msg {
		d, err := st.GetDelivery(context.Background(), id)
		return editLoadedMsg{id: id, d: d, err: err}
	}
}

func (m *editModel) Title() string   { return fmt.Sprintf("edit delivery %d", m.id) }
func (m *editModel) Capturing() bool { return m.inPlace }

func (m *editModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.field.Width = max(10, w-4)
}

func (m *editModel) Keys() []key.Binding {
	k := m.env.keys
	if m.inPlace {
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	}
	return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "edit")),
		key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "in $EDITOR")),
		key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "replay the edited copy")), k.Back, k.Help, k.Quit}
}

func (m *editModel) Status() string {
	if m.req == nil {
		return "loading delivery " + fmt.Sprint(m.id)
	}
	if c := m.change(); c != "" {
		return "changed: " + pr(c)
	}
	return "unchanged · " + m.env.dbPath
}

// change describes how the working copy differs from the delivery.
func (m *editModel) change() string {
	if m.req == nil {
		return ""
	}
	return replay.DescribeChange(m.d.Request(), m.req)
}

func (m *editModel) rows() int { return editHeaders + len(m.req.Headers) }

func (m *editModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case editLoadedMsg:
		if msg.id != m.id {
			return nil
		}
		if msg.err != nil {
			return failed(msg.err)
		}
		m.d, m.req = msg.d, msg.d.Request()
	case editorDoneMsg:
		if msg.id != m.id {
			return nil
		}
		return m.edited(msg)
	case editStoredMsg:
		if msg.orig != m.id {
			return nil
		}
		m.storing = false
		if msg.err != nil {
			return failed(msg.err)
		}
		return tea.Batch(quickReplay(m.env, []int64{msg.id}), send(changedMsg{}))
	case tea.KeyMsg:
		if m.req == nil {
			if key.Matches(msg, m.env.keys.Back) {
				return m.env.nav(backMsg{})
			}
			return nil
		}
		return m.key(msg)
	}
	return nil
}

func (m *editModel) key(msg tea.KeyMsg) tea.Cmd {
	k := m.env.keys
	if m.inPlace {
		switch msg.Type {
		case tea.KeyEnter:
			m.req.Headers[m.cursor-editHeaders].Value = m.field.Value()
			fallthrough
		case tea.KeyEsc:
			m.inPlace = false
			m.field.Blur()
			return nil
		}
		var cmd tea.Cmd
		m.field, cmd = m.field.Update(msg)
		return cmd
	}
	switch {
	case key.Matches(msg, k.Up):
		m.cursor = max(0, m.cursor-1)
	case key.Matches(msg, k.Down):
		m.cursor = min(m.rows()-1, m.cursor+1)
	case key.Matches(msg, k.Back):
		return m.env.nav(backMsg{})
	case msg.String() == "e":
		return m.editor(m.cursor)
	case key.Matches(msg, k.Open):
		if m.cursor < editHeaders {
			return m.editor(m.cursor)
		}
		m.inPlace = true
		m.field.SetValue(m.req.Headers[m.cursor-editHeaders].Value)
		m.field.CursorEnd()
		return m.field.Focus()
	case key.Matches(msg, k.Replay):
		if m.storing {
			return nil
		}
		if m.change() == "" {
			return status("nothing changed yet: enter edits the selected part; r on the list replays the delivery as it is")
		}
		m.storing = true
		return storeEdited(m.env, m.d, m.req.Clone())
	}
	return nil
}

// editor opens row's text in $EDITOR: the whole request (request line,
// headers, body, as replay --edit shows it), the body alone, or one header's
// value.
func (m *editModel) editor(row int) tea.Cmd {
	var text []byte
	switch {
	case row == editRequest:
		text = replay.EditorText(m.req)
	case row == editBody:
		text = m.req.Body
	default:
		text = []byte(m.req.Headers[row-editHeaders].Value + "\n")
	}
	ses, err := replay.NewEditorSession(text)
	if err != nil {
		return failed(err)
	}
	id := m.id
	return m.env.exec(ses.Cmd(), func(err error) tea.Msg {
		return editorDoneMsg{id: id, row: row, ses: ses, err: ses.Done(err)}
	})
}

// edited applies what the editor left in the file to the working copy.
func (m *editModel) edited(msg editorDoneMsg) tea.Cmd {
	defer msg.ses.Close()
	if msg.err != nil {
		return failed(msg.err)
	}
	text, err := msg.ses.Text()
	if err != nil {
		return failed(err)
	}
	switch {
	case msg.row == editRequest:
		r, err := replay.ParseEditorText(text, m.req)
		if err != nil {
			return failed(err)
		}
		m.req = r
		m.cursor = min(m.cursor, m.rows()-1)
	case msg.row == editBody:
		if !bytes.HasSuffix(m.req.Body, []byte("\n")) {
			// An editor ends the file with a newline the body did not have.
			text = bytes.TrimSuffix(bytes.TrimSuffix(text, []byte("\n")), []byte("\r"))
		}
		m.req.Body = text
	default:
		m.req.Headers[msg.row-editHeaders].Value = strings.TrimRight(string(text), "\r\n")
	}
	return nil
}

// storeEdited stores req as a new delivery derived from d: d's provider,
// identity and source, req's request line, headers and body, and the wire
// bytes they encode to (framing recomputed, Host kept).
func storeEdited(e *env, d *store.Delivery, req *message.Request) tea.Cmd {
	st, now := e.st, e.now
	return func() tea.Msg {
		desc := replay.DescribeChange(d.Request(), req)
		nd := &store.Delivery{ReceivedAt: now(), Source: d.Source, Provider: d.Provider, EventID: d.EventID,
			EventType: d.EventType, Identity: d.Identity, Method: req.Method, Target: req.Target, Proto: req.Proto,
			Headers: req.Headers, Body: req.Body, Raw: req.Encode(req.Headers.Get("Host"), req.Target), DerivedFrom: d.ID}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := st.InsertDelivery(ctx, nd); err != nil {
			return editStoredMsg{orig: d.ID, err: err}
		}
		return editStoredMsg{orig: d.ID, id: nd.ID, desc: desc}
	}
}

func (m *editModel) View() string {
	st := m.env.styles
	if m.req == nil {
		return st.Faint.Render("loading…")
	}
	var b strings.Builder
	b.WriteString(st.Bold.Render(fmt.Sprintf("edit a copy of delivery %d", m.id)) + "\n\n")
	line := func(row int, label, value string) {
		mark := "  "
		if row == m.cursor {
			mark = "> "
		}
		b.WriteString(lineCut(mark+label+value, m.width) + "\n")
	}
	line(editRequest, "request  ", pr(m.req.Method+" "+m.req.Target)+st.Faint.Render(" (all of it in $EDITOR)"))
	line(editBody, "body     ", st.Faint.Render(fmt.Sprintf("%d bytes (in $EDITOR)", len(m.req.Body))))
	for i, h := range m.req.Headers {
		row := editHeaders + i
		if m.inPlace && row == m.cursor {
			b.WriteString("> " + st.HeaderKey.Render(pr(h.Name)) + ": " + m.field.View() + "\n")
			continue
		}
		line(row, st.HeaderKey.Render(pr(h.Name))+": ", pr(h.Value))
	}
	hint := "enter edits the selected part (a header's value here), e opens it in $EDITOR; r stores the edited copy as a new delivery and replays it"
	if m.env.secret != "" {
		hint += ", re-signed with the TUI's secret"
	} else {
		hint += " with the captured signature (start 'hookreplay tui --secret-env NAME' to re-sign it)"
	}
	b.WriteString("\n" + st.Faint.Render(wrap(hint, max(10, m.width))))
	return b.String()
}

// lineCut cuts a line to width columns.
func lineCut(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// execEditor is how the TUI runs an editor: Bubble Tea releases the
// terminal to it and takes it back after (tests run it directly).
func execEditor(c *exec.Cmd, done func(error) tea.Msg) tea.Cmd {
	return tea.ExecProcess(c, tea.ExecCallback(done))
}
