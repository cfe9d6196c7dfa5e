package tui

import (
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/lipgloss"

	"github.com/hookreplay/hookreplay/internal/report"
)

// Styles holds every style the TUI renders with, built from report's
// palette (one meaning, one colour, in the CLI and here) by one renderer, so
// NO_COLOR (an Ascii profile) turns all of them plain at once.
type Styles struct {
	Title     lipgloss.Style
	Faint     lipgloss.Style
	Bold      lipgloss.Style
	OK        lipgloss.Style
	Fail      lipgloss.Style
	Warn      lipgloss.Style
	Info      lipgloss.Style
	Lost      lipgloss.Style
	Maybe     lipgloss.Style // inconclusive
	HeaderKey lipgloss.Style
	Tab       lipgloss.Style
	ActiveTab lipgloss.Style
	Status    lipgloss.Style
	StatusErr lipgloss.Style
	Overlay   lipgloss.Style
	Table     table.Styles
	JSONKey   lipgloss.Style
	JSONStr   lipgloss.Style
	JSONNum   lipgloss.Style
	JSONLit   lipgloss.Style
}

// NewStyles builds the styles for r.
func NewStyles(r *lipgloss.Renderer) *Styles {
	tone := func(t report.Tone) lipgloss.Style {
		p := report.Palette[t]
		st := r.NewStyle().Bold(p.Bold).Faint(p.Faint)
		if p.Color != "" {
			st = st.Foreground(lipgloss.Color(p.Color))
		}
		return st
	}
	s := r.NewStyle
	return &Styles{
		Title:     tone(report.ToneStrong),
		Faint:     tone(report.ToneMuted),
		Bold:      tone(report.ToneStrong),
		OK:        tone(report.TonePass),
		Fail:      tone(report.ToneFail),
		Warn:      tone(report.ToneWarn),
		Info:      tone(report.ToneInfo),
		Lost:      tone(report.ToneLost),
		Maybe:     tone(report.ToneInconclusive),
		HeaderKey: tone(report.ToneInfo),
		Tab:       s().Padding(0, 1),
		ActiveTab: s().Padding(0, 1).Bold(true).Reverse(true),
		Status:    s(),
		StatusErr: tone(report.ToneFail).Bold(true),
		Overlay:   s().Border(lipgloss.NormalBorder()).Padding(0, 1),
		Table: table.Styles{
			Header:   tone(report.ToneStrong).PaddingRight(1),
			Cell:     s().PaddingRight(1),
			Selected: s().Reverse(true),
		},
		JSONKey: tone(report.ToneInfo),
		JSONStr: tone(report.TonePass),
		JSONNum: tone(report.ToneInconclusive),
		JSONLit: tone(report.ToneWarn),
	}
}

// tone returns the style of a report tone.
func (st *Styles) tone(t report.Tone) lipgloss.Style {
	switch t {
	case report.TonePass:
		return st.OK
	case report.ToneFail:
		return st.Fail
	case report.ToneWarn:
		return st.Warn
	case report.ToneInfo:
		return st.Info
	case report.ToneLost:
		return st.Lost
	case report.ToneInconclusive:
		return st.Maybe
	case report.ToneMuted:
		return st.Faint
	case report.ToneStrong:
		return st.Bold
	}
	return st.Status
}

// status paints an HTTP status in its tone (report.StatusTone).
func (st *Styles) status(code int, text string) string {
	return st.tone(report.StatusTone(code)).Render(text)
}

// cursorStatic: text inputs draw a steady cursor (a blinking one would keep
// a timer running for nothing).
const cursorStatic = cursor.CursorStatic
