package tui

import (
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/lipgloss"
)

// palette is the handful of colours every view draws with (ANSI colours, so
// the terminal's own theme decides the exact shades).
var palette = struct {
	OK, Fail, Warn, Info, Accent, Faint lipgloss.Color
}{
	OK: "2", Fail: "1", Warn: "3", Info: "6", Accent: "5", Faint: "8",
}

// Styles holds every style the TUI renders with. They come from one renderer,
// so NO_COLOR (an Ascii profile) turns all of them plain at once.
type Styles struct {
	Title     lipgloss.Style
	Faint     lipgloss.Style
	Bold      lipgloss.Style
	OK        lipgloss.Style
	Fail      lipgloss.Style
	Warn      lipgloss.Style
	Info      lipgloss.Style
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
	s := r.NewStyle
	return &Styles{
		Title:     s().Bold(true),
		Faint:     s().Foreground(palette.Faint),
		Bold:      s().Bold(true),
		OK:        s().Foreground(palette.OK),
		Fail:      s().Foreground(palette.Fail),
		Warn:      s().Foreground(palette.Warn),
		Info:      s().Foreground(palette.Info),
		HeaderKey: s().Foreground(palette.Info),
		Tab:       s().Padding(0, 1),
		ActiveTab: s().Padding(0, 1).Bold(true).Reverse(true),
		Status:    s(),
		StatusErr: s().Foreground(palette.Fail).Bold(true),
		Overlay:   s().Border(lipgloss.NormalBorder()).Padding(0, 1),
		Table: table.Styles{
			Header:   s().Bold(true).PaddingRight(1),
			Cell:     s().PaddingRight(1),
			Selected: s().Reverse(true),
		},
		JSONKey: s().Foreground(palette.Info),
		JSONStr: s().Foreground(palette.OK),
		JSONNum: s().Foreground(palette.Accent),
		JSONLit: s().Foreground(palette.Warn),
	}
}

// status paints an HTTP status by class: 2xx green, 3xx cyan, 4xx yellow,
// 5xx and no answer red.
func (st *Styles) status(code int, text string) string {
	switch {
	case code >= 200 && code < 300:
		return st.OK.Render(text)
	case code >= 300 && code < 400:
		return st.Info.Render(text)
	case code >= 400 && code < 500:
		return st.Warn.Render(text)
	}
	return st.Fail.Render(text)
}
