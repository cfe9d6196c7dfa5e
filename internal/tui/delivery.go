package tui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// The delivery view's tabs, in order.
var deliveryTabs = []string{"headers", "body", "raw", "response", "signature", "attempts"}

const (
	tabHeaders = iota
	tabBody
	tabRaw
	tabResponse
	tabSignature
	tabAttempts
)

// maxAttemptsShown bounds the past attempts the delivery view reads.
const maxAttemptsShown = 500

// deliveryMsg is a loaded delivery with its past attempts.
type deliveryMsg struct {
	id       int64
	d        *store.Delivery
	attempts []*store.Attempt
	verified string // the signature checked now with the TUI's --secret ("" without one)
	err      error
}

func loadDelivery(e *env, id int64) tea.Cmd {
	st, secret := e.st, e.secret
	return func() tea.Msg {
		ctx := context.Background()
		m := deliveryMsg{id: id}
		if m.d, m.err = st.GetDelivery(ctx, id); m.err != nil {
			return m
		}
		if m.attempts, m.err = st.DeliveryAttempts(ctx, id, maxAttemptsShown); m.err != nil {
			return m
		}
		if secret != "" {
			m.verified = verifyNow(m.d, secret)
		}
		return m
	}
}

// verifyNow checks d's signature with secret, judged at the time it was received.
func verifyNow(d *store.Delivery, secret string) string {
	s := verify.Lookup(d.Provider)
	if !verify.Known(s) {
		return "unverified: no provider signature scheme recognised in the headers"
	}
	opt := verify.Options{Now: d.ReceivedAt}
	res, err := verify.VerifyWith(s, d.Request(), secret, opt)
	if err != nil {
		return "unverified: " + err.Error()
	}
	if !res.Valid && res.Reason == "" {
		res.Reason = "signature mismatch"
	}
	if !res.Valid && res.Reason == "signature mismatch" {
		// Why, worded as verify words it (one place: verify.WhyMismatch).
		return res.String() + ": " + verify.WhyMismatch(s, d.Request(), secret, "tui --secret", opt)
	}
	return res.String()
}

// deliveryModel shows one delivery, a tab at a time.
type deliveryModel struct {
	env    *env
	id     int64
	width  int
	height int

	d        *store.Delivery
	attempts []*store.Attempt
	verified string
	err      error
	tab      int
	vp       viewport.Model
}

func newDelivery(e *env, id int64) *deliveryModel {
	return &deliveryModel{env: e, id: id, vp: viewport.New(0, 0)}
}

func (m *deliveryModel) Init() tea.Cmd { return loadDelivery(m.env, m.id) }

func (m *deliveryModel) Title() string { return fmt.Sprintf("delivery %d", m.id) }

func (m *deliveryModel) Capturing() bool { return false }

func (m *deliveryModel) Keys() []key.Binding {
	k := m.env.keys
	return []key.Binding{k.NextTab, k.Back, k.Replay, k.Check, k.Help, k.Quit, k.ReplayForm, k.Copy, k.PrevTab, k.Up, k.Down}
}

func (m *deliveryModel) Status() string {
	if m.d == nil {
		return "loading delivery " + fmt.Sprint(m.id)
	}
	return fmt.Sprintf("delivery %d · %s · %d%% · %s", m.id, deliveryTabs[m.tab], int(m.vp.ScrollPercent()*100), m.env.dbPath)
}

// SetSize lays the tab out again at the new size, keeping the place read
// (a rewrapped line count left it far above or at the end).
func (m *deliveryModel) SetSize(w, h int) {
	bottom, at := m.vp.AtBottom() && m.vp.YOffset > 0, 0.0
	if n := m.vp.TotalLineCount(); n > 0 {
		at = float64(m.vp.YOffset) / float64(n)
	}
	m.width, m.height = w, h
	m.vp.Width, m.vp.Height = w, max(1, h-2)
	m.refresh()
	if bottom {
		m.vp.GotoBottom()
	} else {
		m.vp.SetYOffset(int(at * float64(m.vp.TotalLineCount())))
	}
}

func (m *deliveryModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case deliveryMsg:
		if msg.id != m.id {
			return nil
		}
		if errors.Is(msg.err, store.ErrNotFound) {
			// Deleted here or by another process while shown.
			msg.err = fmt.Errorf("delivery %d was deleted (esc goes back)", m.id)
		}
		if msg.err != nil {
			m.err = msg.err
			return failed(msg.err)
		}
		m.d, m.attempts, m.verified = msg.d, msg.attempts, msg.verified
		m.refresh()
	case changedMsg:
		return loadDelivery(m.env, m.id)
	case tea.MouseMsg:
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		return cmd
	case tea.KeyMsg:
		k := m.env.keys
		switch {
		case key.Matches(msg, k.NextTab):
			m.setTab((m.tab + 1) % len(deliveryTabs))
		case key.Matches(msg, k.PrevTab):
			m.setTab((m.tab + len(deliveryTabs) - 1) % len(deliveryTabs))
		case msg.String() >= "1" && msg.String() <= fmt.Sprint(len(deliveryTabs)) && len(msg.String()) == 1:
			m.setTab(int(msg.String()[0] - '1'))
		case key.Matches(msg, k.Back):
			return m.env.nav(backMsg{})
		case key.Matches(msg, k.Replay):
			return quickReplay(m.env, []int64{m.id})
		case key.Matches(msg, k.Edit):
			return m.env.nav(openEditMsg{id: m.id})
		case key.Matches(msg, k.ReplayForm):
			return m.env.nav(openReplayMsg{ids: []int64{m.id}})
		case key.Matches(msg, k.Check):
			return m.env.nav(openCheckMsg{ids: []int64{m.id}})
		case key.Matches(msg, k.Copy):
			return m.env.nav(copyAskMsg{id: m.id})
		case key.Matches(msg, k.Export):
			return exportJSONL(m.env, []int64{m.id})
		default:
			return scroll(&m.vp, k, msg)
		}
	}
	return nil
}

func (m *deliveryModel) setTab(t int) {
	m.tab = t
	m.refresh()
	m.vp.GotoTop()
}

func (m *deliveryModel) refresh() {
	if m.d == nil {
		return
	}
	// Long lines wrap instead of being cut; headers break exactly at the
	// edge, so every byte stays where it was; raw bytes come laid out.
	if m.tab == tabRaw {
		m.vp.SetContent(m.content())
		return
	}
	if m.tab == tabHeaders {
		m.vp.SetContent(ansi.Hardwrap(m.content(), max(10, m.width), true))
		return
	}
	m.vp.SetContent(wrap(m.content(), max(10, m.width)))
}

func (m *deliveryModel) View() string {
	st := m.env.styles
	if m.d == nil {
		msg := "loading…"
		if m.err != nil {
			msg = oneLineText(m.err.Error())
		}
		return st.Faint.Render(msg)
	}
	d := m.d
	title := fmt.Sprintf("delivery %d  %s", d.ID, pr(d.Provider))
	if d.EventType != "" {
		title += "  " + pr(d.EventType)
	}
	if d.EventID != "" {
		title += "  " + pr(d.EventID) + idsMore(d.EventID, d.Identity)
	}
	title = lipgloss.NewStyle().MaxWidth(m.width).Render(st.Title.Render(title))
	var tabs []string
	for i, t := range deliveryTabs {
		label := fmt.Sprintf("%d %s", i+1, t)
		if t == "attempts" {
			label += fmt.Sprintf(" (%d)", len(m.attempts))
		}
		if i == m.tab {
			tabs = append(tabs, st.ActiveTab.Render("["+label+"]"))
		} else {
			tabs = append(tabs, st.Tab.Render(" "+label+" "))
		}
	}
	bar := lipgloss.NewStyle().MaxWidth(m.width).Render(strings.Join(tabs, ""))
	return title + "\n" + bar + "\n" + m.vp.View()
}

func (m *deliveryModel) content() string {
	st, d := m.env.styles, m.d
	switch m.tab {
	case tabHeaders:
		return st.Bold.Render(pr(d.Method)+" "+pr(d.Target)+" "+pr(d.Proto)) + "\n" + renderHeaders(st, d.Headers)
	case tabBody:
		return renderBody(st, d.Headers.Get("Content-Type"), d.Body, fmt.Sprintf("'hookreplay show %d --body' writes all of it", d.ID))
	case tabRaw:
		w := max(10, m.width)
		return wrap(st.Faint.Render(fmt.Sprintf("%d bytes from the wire; \\r \\n \\t shown, \\\\ is a backslash, other bytes \\xNN", len(d.Raw))), w) +
			"\n" + renderRaw(st, d.Raw, w, fmt.Sprintf("'hookreplay show %d --raw' writes all of them", d.ID))
	case tabResponse:
		return m.response()
	case tabSignature:
		return m.signature()
	default:
		return m.attemptsView()
	}
}

func (m *deliveryModel) response() string {
	st, d := m.env.styles, m.d
	if d.ResponseStatus == 0 {
		s := "no response recorded (the handler had not answered when capture stopped)"
		if d.ForwardError != "" {
			s += "\n" + pr(d.ForwardError)
		}
		return st.Faint.Render(s)
	}
	line := st.status(d.ResponseStatus, fmt.Sprintf("%d %s", d.ResponseStatus, http.StatusText(d.ResponseStatus)))
	switch {
	case d.ForwardError != "":
		line += "  " + st.Fail.Render(pr(d.ForwardError))
	case d.Latency > 0:
		line += " from the handler in " + report.Duration(d.Latency)
	default:
		line += st.Faint.Render(" answered by capture itself (no --forward)")
	}
	return line + "\n" + renderHeaders(st, d.ResponseHeaders) + "\n\n" +
		renderBody(st, d.ResponseHeaders.Get("Content-Type"), d.ResponseBody, fmt.Sprintf("'hookreplay show %d --json' has all of it", d.ID))
}

func (m *deliveryModel) signature() string {
	st, d := m.env.styles, m.d
	var b strings.Builder
	verdict := func(label, v string) {
		fmt.Fprintf(&b, "%-18s %s\n", label, st.tone(report.VerificationTone(v)).Render(pr(v)))
	}
	if d.Verification != "" {
		verdict("at capture", d.Verification)
	} else {
		fmt.Fprintf(&b, "%-18s %s\n", "at capture", st.Faint.Render("not verified (capture had no --secret)"))
	}
	if m.verified != "" {
		verdict("with tui --secret", m.verified)
	} else if m.env.secret == "" {
		fmt.Fprintf(&b, "%-18s %s\n", "now", st.Faint.Render("start 'hookreplay tui --secret-env NAME' to verify here"))
	}
	b.WriteString("\n")
	row := func(k, v string) { fmt.Fprintf(&b, "%-18s %s\n", k, dash(pr(v))) }
	row("provider", d.Provider)
	row("event id", d.EventID)
	row("event type", d.EventType)
	keys := make([]string, 0, len(d.Identity))
	for k := range d.Identity {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row(strings.ReplaceAll(k, "_", " "), d.Identity[k])
	}
	row("received", d.ReceivedAt.Local().Format("2006-01-02 15:04:05.000000000 MST"))
	row("from", d.RemoteAddr)
	row("source", d.Source)
	if d.DerivedFrom != 0 {
		row("edited from", fmt.Sprintf("delivery %d (E)", d.DerivedFrom))
	}
	row("size", fmt.Sprintf("%d bytes on the wire, body %d bytes", len(d.Raw), len(d.Body)))
	return strings.TrimRight(b.String(), "\n")
}

func (m *deliveryModel) attemptsView() string {
	st := m.env.styles
	if len(m.attempts) == 0 {
		return st.Faint.Render("never replayed or checked (r replays it, c checks it)")
	}
	var b strings.Builder
	b.WriteString(st.Bold.Render(fmt.Sprintf("%-6s %-8s %-5s %-14s %-7s %-9s %s", "RUN", "PHASE", "COPY", "SENT", "STATUS", "LATENCY", "NOTE")) + "\n")
	for _, a := range m.attempts {
		// Classified as every summary and 'runs show' classify attempts.
		label, tone := report.AttemptStatus(*a)
		status := st.tone(tone).Render(fmt.Sprintf("%-7s", dash(label)))
		note := a.Err
		if a.Lost {
			note = strings.TrimSpace("answer lost on purpose " + note)
		}
		if a.Edit != "" {
			note = strings.TrimSpace(note + " edited: " + a.Edit)
		}
		fmt.Fprintf(&b, "%-6d %-8s %-5d %-14s %s %-9s %s\n", a.RunID, pr(a.Phase), a.Copy, a.SentAt.Local().Format("01-02 15:04:05"),
			status, latency(a.Latency), pr(note))
	}
	if len(m.attempts) == maxAttemptsShown {
		b.WriteString(st.Faint.Render(fmt.Sprintf("(the newest %d; 'hookreplay runs' lists them all)", maxAttemptsShown)))
	}
	return strings.TrimRight(b.String(), "\n")
}

func latency(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	return report.Duration(d)
}
