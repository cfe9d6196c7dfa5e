package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkEventMsg is one call of the check's Observer, as a message: a
// check.PhaseStart, store.Attempt, check.Reading, check.Step, check.PhaseEnd
// or check.Note.
type checkEventMsg struct {
	seq int
	ev  any
}

// errStopped is a check stopped with esc.
var errStopped = errors.New("stopped")

// checkDoneMsg ends a check run.
type checkDoneMsg struct {
	seq int
	c   *report.Check
	err error
}

// observer bridges the check engine to the TUI: each call becomes a message
// on a channel a tea.Cmd listens to. The engine waits while the channel is
// full, so the view keeps up or the check slows down; nothing is dropped.
type observer struct {
	e   *env
	ch  chan<- tea.Msg
	seq int
}

var _ check.Observer = observer{}

func (o observer) send(ev any)                     { o.e.deliver(o.ch, checkEventMsg{seq: o.seq, ev: ev}) }
func (o observer) PhaseStarted(p check.PhaseStart) { o.send(p) }
func (o observer) Attempt(a store.Attempt)         { o.send(a) }
func (o observer) Reading(r check.Reading)         { o.send(r) }
func (o observer) Step(s check.Step)               { o.send(s) }
func (o observer) PhaseDone(p check.PhaseEnd)      { o.send(p) }
func (o observer) Note(n check.Note)               { o.send(n) }

// phaseRow is one phase of one delivery as the check view lists it.
type phaseRow struct {
	phase    string
	delivery int64
	status   report.Status // "" while running
	attempts int
	last     string // the latest step, or the result's message
}

// checkModel runs a check on the selected deliveries and shows its phases as
// they run, then the full report.
type checkModel struct {
	env    *env
	seq    int
	ids    []int64
	width  int
	height int

	rows    []phaseRow
	notes   []string
	running bool
	done    bool
	stop    context.CancelFunc
	ch      chan tea.Msg
	spin    spinner.Model
	started time.Time
	c       *report.Check
	err     error
	vp      viewport.Model
	// tl is the finished run's timelines, under its report.
	tl  timelinePicker
	ran bool // a check was started (by the flags' check or the form's)
	// form sets the check up in place (c without check flags); nil once
	// the check runs, or when tui was given check flags.
	form *checkForm
}

var checkSeq int

func newCheck(e *env, ids []int64) *checkModel {
	checkSeq++
	m := &checkModel{env: e, seq: checkSeq, ids: ids, spin: spinner.New(spinner.WithSpinner(spinner.Line)), vp: viewport.New(0, 0)}
	if e.check == nil && e.newCheck != nil {
		m.form = newCheckForm()
	}
	return m
}

func (m *checkModel) Init() tea.Cmd {
	if m.form != nil {
		return loadCheckForm(m.env, m.seq, m.ids[0])
	}
	if m.env.check == nil {
		return nil
	}
	return m.run(m.env.check)
}

// run starts the check.
func (m *checkModel) run(check CheckFunc) tea.Cmd {
	if m.env.busy() {
		m.err = fmt.Errorf("a replay or check is already running; wait for it or stop it (esc in its view)")
		m.done = true
		return failed(m.err)
	}
	m.running, m.started, m.ran = true, m.env.now(), true
	m.ch = make(chan tea.Msg, 1024)
	e, ch, seq, ids, run := m.env, m.ch, m.seq, m.ids, check
	m.stop = e.start(func(ctx context.Context) {
		c, err := run(ctx, ids, observer{e: e, ch: ch, seq: seq})
		e.deliver(ch, checkDoneMsg{seq: seq, c: c, err: err})
	})
	return tea.Batch(listen(e, ch), m.spin.Tick)
}

func (m *checkModel) Title() string   { return "check " + describeIDs(m.ids) }
func (m *checkModel) Capturing() bool { return m.form != nil }

func (m *checkModel) Keys() []key.Binding {
	k := m.env.keys
	if m.form != nil {
		return []key.Binding{key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab/↓", "next field")),
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "check")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")), key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))}
	}
	if m.running {
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop")), k.Quit}
	}
	if m.c != nil {
		if len(m.tl.ids) > 0 {
			return append([]key.Binding{k.Up, k.Down}, append(pickerKeys, k.Save, k.Back, k.Quit)...)
		}
		return []key.Binding{k.Up, k.Down, k.PageDown, k.Save, k.Back, k.Quit}
	}
	return []key.Binding{k.Back, k.Quit}
}

func (m *checkModel) Status() string {
	switch {
	case m.running:
		return fmt.Sprintf("checking %s · %s", describeIDs(m.ids), report.Duration(m.env.now().Sub(m.started).Round(time.Second)))
	case m.c != nil:
		return fmt.Sprintf("check %s: %s · run %d · s saves the report", describeIDs(m.ids), m.c.Verdict, m.c.RunID)
	}
	return "check " + describeIDs(m.ids)
}

func (m *checkModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.vp.Width, m.vp.Height = w, h
	m.refresh()
}

func (m *checkModel) Update(msg tea.Msg) tea.Cmd {
	if m.form != nil {
		return m.formUpdate(msg)
	}
	switch msg := msg.(type) {
	case checkEventMsg:
		if msg.seq != m.seq {
			return nil
		}
		m.event(msg.ev)
		return listen(m.env, m.ch)
	case checkDoneMsg:
		if msg.seq != m.seq {
			return nil
		}
		m.running, m.done = false, true
		m.c, m.err = msg.c, msg.err
		if errors.Is(msg.err, context.Canceled) {
			// Stopped on purpose (esc): not an error, and not in Go's words.
			m.err = errStopped
			m.refresh()
			return tea.Batch(status("check stopped; what it sent is stored (R lists runs)"), send(changedMsg{}))
		}
		m.refresh()
		m.vp.GotoTop()
		var tl tea.Cmd
		if m.c != nil && m.c.RunID != 0 && m.env.st != nil {
			tl = loadTimeline(m.env.st, m.c.RunID, m.c, nil)
		}
		if msg.err != nil {
			return tea.Batch(failed(msg.err), send(changedMsg{}), tl)
		}
		return tea.Batch(status(fmt.Sprintf("check %s: verdict %s (run %d)", describeIDs(m.ids), msg.c.Verdict, msg.c.RunID)), send(changedMsg{}), tl)
	case timelineMsg:
		if m.c == nil || msg.run != m.c.RunID || msg.err != nil {
			return nil
		}
		m.tl.set(msg)
		m.refresh()
	case spinner.TickMsg:
		if !m.running {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	case tea.MouseMsg:
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		return cmd
	case tea.KeyMsg:
		k := m.env.keys
		switch {
		case m.running && msg.Type == tea.KeyEsc:
			m.stop()
			return status("stopping the check; what was sent is stored")
		case m.running:
			return nil
		case key.Matches(msg, k.Back):
			return m.env.nav(backMsg{})
		case key.Matches(msg, k.Save) && m.c != nil:
			c := *m.c
			c.Timeline = m.tl.tl
			return saveReports(m.env, &c)
		default:
			if cmd, ok := m.tl.key(m.env, msg, &m.vp, m.refresh); ok {
				return cmd
			}
			return scroll(&m.vp, k, msg)
		}
	}
	return nil
}

// event applies one Observer call to the phase list.
func (m *checkModel) event(ev any) {
	cur := func() *phaseRow {
		if len(m.rows) == 0 {
			return nil
		}
		return &m.rows[len(m.rows)-1]
	}
	switch ev := ev.(type) {
	case check.PhaseStart:
		m.rows = append(m.rows, phaseRow{phase: ev.Phase, delivery: ev.DeliveryID})
	case store.Attempt:
		if r := cur(); r != nil && r.status == "" {
			r.attempts++
		}
	case check.Step:
		if r := cur(); r != nil && r.status == "" {
			r.last = stepText(ev)
		}
	case check.PhaseEnd:
		res := ev.Result
		var row *phaseRow
		for i := len(m.rows) - 1; i >= 0; i-- {
			if m.rows[i].phase == res.Phase && m.rows[i].delivery == ev.DeliveryID && m.rows[i].status == "" {
				row = &m.rows[i]
				break
			}
		}
		if row == nil {
			m.rows = append(m.rows, phaseRow{phase: res.Phase, delivery: ev.DeliveryID})
			row = &m.rows[len(m.rows)-1]
		}
		row.status, row.last = res.Status, res.Message
		if res.Attempts > row.attempts {
			row.attempts = res.Attempts
		}
	case check.Note:
		if ev.Text != "" {
			m.notes = append(m.notes, ev.Text)
		}
	}
	m.refresh()
}

func stepText(s check.Step) string {
	var parts []string
	if s.N > 0 {
		parts = append(parts, fmt.Sprintf("#%d", s.N))
	}
	if s.What != "" {
		parts = append(parts, s.What)
	}
	if len(s.Attempts) > 0 {
		parts = append(parts, check.StatusCounts(s.Attempts...))
	}
	if len(s.Effect) > 0 {
		parts = append(parts, check.EffectText(s.Effect))
	}
	return strings.Join(parts, " · ")
}

func (m *checkModel) refresh() {
	w := max(10, m.width)
	text := wrapReport(m.content(), w)
	if m.c != nil {
		if tl := m.tl.render(report.Colors(m.env.color), w, strings.Count(text, "\n")+2); tl != "" {
			text += "\n\n" + tl
		}
	}
	m.vp.SetContent(text)
	if m.running {
		m.vp.GotoBottom()
	}
}

func (m *checkModel) content() string {
	st := m.env.styles
	if m.env.check == nil && !m.ran {
		return st.Bold.Render("check is not set up") + "\n\n" + m.env.checkSetup
	}
	var b strings.Builder
	if m.c != nil {
		var out bytes.Buffer
		if err := report.Text(&out, m.c, m.env.color); err == nil {
			if m.err != nil && m.err != errStopped {
				// A check that failed part way: its partial report, then why.
				out.WriteString("\n" + st.Fail.Render("check stopped: "+oneLineText(m.err.Error())) + "\n")
			}
			return strings.TrimRight(out.String(), "\n")
		}
	}
	head := "checking " + describeIDs(m.ids)
	switch {
	case m.running:
		head = m.spin.View() + " " + head
	case m.done:
		head = "check of " + describeIDs(m.ids) + " stopped"
	}
	b.WriteString(st.Bold.Render(head) + "\n\n")
	multi := len(m.ids) > 1
	for _, r := range m.rows {
		mark, last := m.spin.View(), r.last
		style := st.Info
		switch {
		case r.status != "":
			mark = report.Symbol(r.status)
			style = st.tone(report.PhaseTone(r.status))
		case !m.running:
			// The check stopped inside this phase: no spinner frozen
			// mid-turn, as if it still ran.
			mark, style = "■", st.Fail
			last = strings.TrimPrefix(last+" · stopped", " · ")
		}
		name := r.phase
		if multi && r.delivery != 0 {
			name = fmt.Sprintf("#%d %s", r.delivery, r.phase)
		}
		line := fmt.Sprintf("%s %-10s %3d sent  %s", style.Render(mark), name, r.attempts, pr(last))
		b.WriteString(line + "\n")
	}
	for _, n := range m.notes {
		b.WriteString(st.Faint.Render("note: "+pr(n)) + "\n")
	}
	switch {
	case m.err == errStopped:
		b.WriteString("\n" + st.Warn.Render("check stopped with esc; what it sent is stored (R lists runs)") + "\n")
	case m.err != nil:
		b.WriteString("\n" + st.Fail.Render("check stopped: "+oneLineText(m.err.Error())) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *checkModel) View() string {
	if m.form != nil {
		return m.formView()
	}
	return m.vp.View()
}

func (m *checkModel) formUpdate(msg tea.Msg) tea.Cmd {
	f := m.form
	switch msg := msg.(type) {
	case checkFormLoadedMsg:
		if msg.seq != m.seq {
			return nil
		}
		if r := msg.form; r != nil {
			for i, v := range r.Values {
				if v != "" {
					f.fields[i].SetValue(v)
				}
			}
			f.probes = r.Probes
		}
		if msg.target != "" && (msg.form == nil || msg.form.Values[cfTarget] == "") {
			f.fields[cfTarget].SetValue(msg.target)
		}
	case tea.KeyMsg:
		switch msg.Type {
		case tea.KeyEsc:
			return m.env.nav(backMsg{})
		case tea.KeyTab, tea.KeyDown:
			f.setFocus(f.focus+1, 1)
			return nil
		case tea.KeyShiftTab, tea.KeyUp:
			f.setFocus(f.focus-1, -1)
			return nil
		case tea.KeyEnter:
			return m.submit()
		case tea.KeyCtrlA:
			if err := f.addProbe(); err != nil {
				return failed(fmt.Errorf("check form: %v", err))
			}
			f.setFocus(cfProbe, 1)
			return status(fmt.Sprintf("%s added; type another, or enter checks", plural(len(f.probes), "probe", "probes")))
		case tea.KeyCtrlD:
			if n := len(f.probes); n > 0 {
				f.probes = f.probes[:n-1]
			}
			return nil
		}
		if f.focus == cfKind && (msg.Type == tea.KeySpace || msg.Type == tea.KeyLeft || msg.Type == tea.KeyRight) {
			f.fields[cfKind].SetValue(nextChoice(probeKinds, f.value(cfKind), msg.Type == tea.KeyLeft))
			return nil
		}
		var cmd tea.Cmd
		f.fields[f.focus], cmd = f.fields[f.focus].Update(msg)
		return cmd
	}
	return nil
}

// submit validates the form, remembers it (and saves it when named), and
// runs the check it describes. A form whose check cannot start is
// remembered too (not saved): the next c opens it as it was left, so
// quitting to fix what it names (a secret's variable the TUI was started
// without) does not lose what was typed.
func (m *checkModel) submit() tea.Cmd {
	f := m.form
	remembered := rememberedForm{Values: f.values(), Probes: f.probes}
	c, err := f.check(m.ids)
	if err != nil {
		return tea.Batch(rememberCheckForm(m.env, remembered, nil, ""), failed(fmt.Errorf("check form: %v", err)))
	}
	run, err := m.env.newCheck(c)
	if err != nil {
		return tea.Batch(rememberCheckForm(m.env, remembered, nil, ""), failed(fmt.Errorf("check form: %v", err)))
	}
	m.form = nil
	m.refresh()
	return tea.Batch(rememberCheckForm(m.env, remembered, c, f.value(cfSaveAs)), m.run(run))
}

func (m *checkModel) formView() string {
	st, f := m.env.styles, m.form
	var b strings.Builder
	b.WriteString(st.Bold.Render("check "+describeIDs(m.ids)) + "\n\n")
	for i := range f.fields {
		if i == cfDSN && f.value(cfKind) != "sql" {
			continue
		}
		if i == cfKind {
			for _, p := range f.probes {
				b.WriteString("  " + st.Faint.Render(fmt.Sprintf("%-16s ", "probe "+p.Name)) + pr(probeText(p)) + "\n")
			}
		}
		cur := "  "
		if i == f.focus {
			cur = "> "
		}
		fmt.Fprintf(&b, "%s%-16s %s\n", cur, cfLabels[i], f.fields[i].View())
	}
	hint := "enter checks · tab/↓ next field · space cycles the probe kind · ctrl+a adds the probe and takes another (ctrl+d drops the last) · remembered for this database; " +
		"a name in 'save as check' adds it to " + m.env.configPath + " · more options: hookreplay.yaml or tui's check flags"
	b.WriteString("\n" + st.Faint.Render(wrap(hint, max(10, m.width))))
	return b.String()
}

// saveReports writes the check's report as Markdown, JUnit and JSON beside
// the exports.
func saveReports(e *env, c *report.Check) tea.Cmd {
	dir := e.exportDir
	return func() tea.Msg {
		base := filepath.Join(dir, fmt.Sprintf("hookreplay-check-%d", c.RunID))
		var paths []string
		for _, f := range []struct {
			format report.Format
			ext    string
		}{{report.FormatMarkdown, ".md"}, {report.FormatJUnit, ".xml"}, {report.FormatJSON, ".json"}, {report.FormatHTML, ".html"}} {
			if err := report.WriteFile(f.format, base+f.ext, c); err != nil {
				return statusMsg{err: err}
			}
			paths = append(paths, base+f.ext)
		}
		return statusMsg{text: "saved the report as " + strings.Join(paths, ", ")}
	}
}

// probeText is a probe as the form lists it.
func probeText(p config.Probe) string {
	switch {
	case p.SQL != "":
		return p.SQL + " (" + p.DSN + ")"
	case p.Cmd != "":
		return p.Cmd
	case p.HTTP != "":
		return p.HTTP
	case p.Redis != "":
		return p.Redis
	case p.Sink != "":
		return p.Sink
	}
	return p.SMTP
}
