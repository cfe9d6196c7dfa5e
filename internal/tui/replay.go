package tui

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/address"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// The replay form's fields, in order.
const (
	fieldTarget = iota
	fieldCopies
	fieldOrder
	fieldLose
	fieldResign
	fieldCount
)

var fieldLabels = [fieldCount]string{"target URL", "copies", "order", "lose first answers", "re-sign"}

// replayTargetMsg is the target the form is prefilled with (the last run's).
type replayTargetMsg struct {
	seq    int
	target string
}

// replayAttemptMsg is one attempt the engine finished and stored.
type replayAttemptMsg struct {
	seq int
	a   store.Attempt
}

// replayDoneMsg ends a replay run.
type replayDoneMsg struct {
	seq int
	rec *replay.Recorded
	err error
}

// replayModel is the replay view: a form, then the run with its attempts
// streaming in, then the summary (answers compared with the captured ones).
type replayModel struct {
	env    *env
	seq    int
	ids    []int64
	width  int
	height int

	fields  [fieldCount]textinput.Model
	focus   int
	running bool
	done    bool
	stop    context.CancelFunc
	ch      chan tea.Msg
	spin    spinner.Model
	lines   []string
	planned int
	result  string
	vp      viewport.Model
	// auto: replay at once to the target set (r), no form first.
	auto bool
	// why says where the target came from (or why the form opened).
	why string
}

var replaySeq int

func newReplay(e *env, ids []int64) *replayModel {
	replaySeq++
	m := &replayModel{env: e, seq: replaySeq, ids: ids, spin: spinner.New(spinner.WithSpinner(spinner.Line)), vp: viewport.New(0, 0)}
	defaults := [fieldCount]string{e.defaultTarget, "1", "seq", "0", "no"}
	if e.secret != "" {
		defaults[fieldResign] = "yes"
	}
	for i := range m.fields {
		in := textinput.New()
		in.Prompt = ""
		in.Cursor.SetMode(cursorStatic)
		in.SetValue(defaults[i])
		m.fields[i] = in
	}
	m.fields[fieldTarget].Placeholder = "e.g. http://127.0.0.1:3000/webhooks (where the handler listens)"
	m.fields[fieldOrder].Placeholder = "seq, burst, shuffle or reverse"
	m.fields[fieldTarget].Focus()
	return m
}

func (m *replayModel) Init() tea.Cmd {
	if m.auto {
		cmd := m.start()
		if m.running {
			return tea.Batch(cmd, status(fmt.Sprintf("replaying %s to %s (%s); o opens the form", describeIDs(m.ids), m.fields[fieldTarget].Value(), m.why)))
		}
		return cmd
	}
	var note tea.Cmd
	if m.why != "" {
		note = status(m.why)
	}
	if m.fields[fieldTarget].Value() != "" {
		return note
	}
	e, seq, id := m.env, m.seq, m.ids[0]
	return tea.Batch(note, func() tea.Msg {
		// Where r would send it; else the last replay's or check's: the
		// handler is usually the same.
		ctx := context.Background()
		if t, err := resolveTarget(ctx, e, id); err == nil && t.url != "" {
			return replayTargetMsg{seq: seq, target: t.url}
		}
		// A keycheck's target is an API, not a webhook handler.
		runs, err := e.st.ListRuns(ctx, "", 10)
		if err != nil {
			return nil
		}
		for _, r := range runs {
			if r.Kind != "keycheck" {
				return replayTargetMsg{seq: seq, target: r.Target}
			}
		}
		return nil
	})
}

func (m *replayModel) Title() string { return "replay " + describeIDs(m.ids) }

func (m *replayModel) Capturing() bool { return !m.running && !m.done }

func (m *replayModel) Keys() []key.Binding {
	k := m.env.keys
	switch {
	case m.running:
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop")), k.Quit}
	case m.done:
		return []key.Binding{k.Up, k.Down, k.Back, k.Quit}
	}
	return []key.Binding{key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab/↓", "next field")),
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "replay")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")), key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))}
}

func (m *replayModel) Status() string {
	switch {
	case m.running:
		return fmt.Sprintf("replaying %s: %d/%d attempts", describeIDs(m.ids), len(m.lines), m.planned)
	case m.done:
		return "replay done · " + m.env.dbPath
	}
	return "replay " + describeIDs(m.ids) + " · " + m.env.dbPath
}

func (m *replayModel) SetSize(w, h int) {
	m.width, m.height = w, h
	for i := range m.fields {
		m.fields[i].Width = max(10, w-24)
	}
	m.vp.Width, m.vp.Height = w, h
	if m.done {
		m.vp.SetContent(wrapReport(m.result, max(10, w)))
	}
}

func (m *replayModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case replayTargetMsg:
		if msg.seq == m.seq && m.fields[fieldTarget].Value() == "" {
			m.fields[fieldTarget].SetValue(msg.target)
		}
	case replayAttemptMsg:
		if msg.seq != m.seq {
			return nil
		}
		m.lines = append(m.lines, report.AttemptLine(report.Colors(m.env.color), msg.a, len(m.ids) > 1))
		return listen(m.env, m.ch)
	case replayDoneMsg:
		if msg.seq != m.seq {
			return nil
		}
		return m.finish(msg)
	case spinner.TickMsg:
		if !m.running {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	case tea.MouseMsg:
		if m.done {
			var cmd tea.Cmd
			m.vp, cmd = m.vp.Update(msg)
			return cmd
		}
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

func (m *replayModel) key(msg tea.KeyMsg) tea.Cmd {
	switch {
	case m.running:
		if msg.Type == tea.KeyEsc {
			m.stop()
			return status("stopping the replay; what was sent is stored")
		}
		return nil
	case m.done:
		if key.Matches(msg, m.env.keys.Back) {
			return m.env.nav(backMsg{})
		}
		return scroll(&m.vp, m.env.keys, msg)
	}
	switch msg.Type {
	case tea.KeyEsc:
		return m.env.nav(backMsg{})
	case tea.KeyTab, tea.KeyDown:
		m.setFocus((m.focus + 1) % fieldCount)
		return nil
	case tea.KeyShiftTab, tea.KeyUp:
		m.setFocus((m.focus + fieldCount - 1) % fieldCount)
		return nil
	case tea.KeyEnter:
		return m.start()
	}
	if m.focus == fieldResign || m.focus == fieldOrder {
		if msg.Type == tea.KeySpace || msg.Type == tea.KeyLeft || msg.Type == tea.KeyRight {
			m.cycle(m.focus, msg.Type == tea.KeyLeft)
			return nil
		}
	}
	var cmd tea.Cmd
	m.fields[m.focus], cmd = m.fields[m.focus].Update(msg)
	return cmd
}

// cycle steps a choice field to its next (or previous) value.
func (m *replayModel) cycle(f int, back bool) {
	choices := []string{"no", "yes"}
	if f == fieldOrder {
		choices = []string{"seq", "burst", "shuffle", "reverse"}
	}
	m.fields[f].SetValue(nextChoice(choices, m.fields[f].Value(), back))
}

// nextChoice is the choice after cur (before it when back), round; the
// first when cur is none of them. Every form's choice fields cycle so.
func nextChoice(choices []string, cur string, back bool) string {
	i := 0
	for j, c := range choices {
		if c == cur {
			i = j
		}
	}
	step := 1
	if back {
		step = len(choices) - 1
	}
	return choices[(i+step)%len(choices)]
}

func (m *replayModel) setFocus(f int) {
	m.fields[m.focus].Blur()
	m.focus = f
	m.fields[f].Focus()
}

// plan reads the form; errors are worded for the form, not for flags.
func (m *replayModel) plan() (replay.Plan, error) {
	var p replay.Plan
	v := func(f int) string { return strings.TrimSpace(m.fields[f].Value()) }
	u, err := address.Handler(v(fieldTarget))
	if err != nil {
		return p, fmt.Errorf("target URL %q: %v", v(fieldTarget), err)
	}
	copies, err := strconv.Atoi(v(fieldCopies))
	if err != nil || copies < 1 || copies > maxCopies {
		return p, fmt.Errorf("copies %q: want a number from 1 to %d", v(fieldCopies), maxCopies)
	}
	order, err := replay.ParseOrder(v(fieldOrder))
	if err != nil {
		return p, fmt.Errorf("order: %v", err)
	}
	lose, err := strconv.Atoi(v(fieldLose))
	if err != nil || lose < 0 || lose > maxCopies {
		return p, fmt.Errorf("lose first answers %q: want a number from 0 to %d", v(fieldLose), maxCopies)
	}
	p = replay.Plan{Target: replay.Target{URL: u, Timeout: replay.DefaultTimeout}, Copies: copies, Order: order,
		Concurrency: 1, LoseResponse: lose, Speedup: 1}
	switch v(fieldResign) {
	case "yes", "y":
		if m.env.secret == "" {
			return p, fmt.Errorf("re-sign needs the signing secret: start 'hookreplay tui --secret-env NAME'")
		}
		p.Secret = m.env.secret
	case "no", "n", "":
	default:
		return p, fmt.Errorf("re-sign %q: yes or no", v(fieldResign))
	}
	return p, nil
}

// maxCopies bounds the copies a form asks for (as replay's -n is bounded).
const maxCopies = 100000

func (m *replayModel) start() tea.Cmd {
	p, err := m.plan()
	if err != nil {
		return failed(err)
	}
	if m.env.busy() {
		return failed(fmt.Errorf("a replay or check is already running; wait for it or stop it (esc in its view)"))
	}
	m.running = true
	m.ch = make(chan tea.Msg, 256)
	m.planned = p.Copies * len(m.ids)
	e, ch, seq, ids := m.env, m.ch, m.seq, m.ids
	m.stop = e.start(func(ctx context.Context) {
		rec, err := runReplay(ctx, e, ids, p, func(a store.Attempt) { e.deliver(ch, replayAttemptMsg{seq: seq, a: a}) })
		e.deliver(ch, replayDoneMsg{seq: seq, rec: rec, err: err})
	})
	return tea.Batch(listen(e, ch), m.spin.Tick)
}

// runReplay loads the deliveries and runs the plan as a stored run; every
// attempt is stored before seen is called with it.
func runReplay(ctx context.Context, e *env, ids []int64, p replay.Plan, seen func(store.Attempt)) (*replay.Recorded, error) {
	for _, id := range ids {
		d, err := e.st.GetDelivery(ctx, id)
		if err != nil {
			return nil, err
		}
		p.Deliveries = append(p.Deliveries, d)
	}
	job, err := replay.Prepare(p)
	if err != nil {
		return nil, err
	}
	sink := replay.SinkFunc(func(_ context.Context, a *store.Attempt) error {
		seen(*a)
		return nil
	})
	return replay.Execute(ctx, e.st, job, "replay", replay.PlanOptions(job.Plan()), sink)
}

func (m *replayModel) finish(msg replayDoneMsg) tea.Cmd {
	m.running, m.done = false, true
	var b bytes.Buffer
	b.WriteString(strings.Join(m.lines, "\n") + "\n\n")
	if msg.rec != nil {
		report.ReplaySummary(&b, report.Colors(m.env.color), msg.rec.Summary)
		to := pr(m.fields[fieldTarget].Value())
		if m.auto {
			// r chose the target: say which and why, and where the form is.
			to += " (" + m.why + "; o replays with the form)"
		}
		fmt.Fprintf(&b, "  sent to       %s\n", to)
		fmt.Fprintf(&b, "  recorded as run %d (R lists runs)\n", msg.rec.Run.ID)
	}
	if msg.err != nil {
		fmt.Fprintf(&b, "\n%s\n", m.env.styles.Fail.Render("replay stopped: "+oneLineText(msg.err.Error())))
	}
	m.result = b.String()
	m.vp.SetContent(wrapReport(m.result, max(10, m.width)))
	m.vp.GotoBottom()
	cmds := []tea.Cmd{send(changedMsg{})}
	if msg.err != nil {
		cmds = append(cmds, failed(msg.err))
	} else if msg.rec != nil && msg.rec.Summary.Attempts > 0 && msg.rec.Summary.Connected == 0 {
		// As replay says it on the command line: the summary alone read
		// "connect: connection refused" with nothing about what to do.
		cmds = append(cmds, failed(fmt.Errorf("is the handler running? no copy reached %s (o replays elsewhere)", pr(m.fields[fieldTarget].Value()))))
	} else if msg.rec != nil {
		cmds = append(cmds, status(fmt.Sprintf("replay recorded as run %d", msg.rec.Run.ID)))
	}
	return tea.Batch(cmds...)
}

func (m *replayModel) View() string {
	st := m.env.styles
	if m.done {
		return m.vp.View()
	}
	var b strings.Builder
	if m.running {
		fmt.Fprintf(&b, "%s replaying %s → %s\n\n", m.spin.View(), describeIDs(m.ids), pr(m.fields[fieldTarget].Value()))
		lines := m.lines
		if n := m.height - 2; len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		b.WriteString(strings.Join(lines, "\n"))
		return b.String()
	}
	b.WriteString(st.Bold.Render("replay "+describeIDs(m.ids)) + "\n\n")
	for i, f := range m.fields {
		cur := "  "
		if i == m.focus {
			cur = "> "
		}
		fmt.Fprintf(&b, "%s%-20s %s\n", cur, fieldLabels[i], f.View())
	}
	hint := "enter replays · tab/↓ next field · space cycles order and re-sign · every attempt is stored as a run"
	if m.env.secret == "" {
		hint += "\ncopies keep the captured signature; start 'hookreplay tui --secret-env NAME' to re-sign them"
	}
	b.WriteString("\n" + st.Faint.Render(wrap(hint, max(10, m.width))))
	return b.String()
}
