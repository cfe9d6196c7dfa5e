package report

import (
	"strconv"

	"github.com/fatih/color"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Tone is what a coloured piece of output says. Every view colours by tone,
// never by a colour of its own, so one meaning has one colour everywhere.
type Tone string

// The tones of hookreplay's output.
const (
	TonePass         Tone = "pass"         // a passed phase or run, a 2xx answer, a valid signature
	ToneFail         Tone = "fail"         // a failed phase or run, a 5xx answer, a send error, an invalid signature
	ToneWarn         Tone = "warn"         // a warning, a 4xx answer, an interrupted run, an unverified signature
	ToneInconclusive Tone = "inconclusive" // an inconclusive phase or run: nothing was proven
	ToneLost         Tone = "lost"         // an answer deliberately not read
	ToneInfo         Tone = "info"         // a 3xx answer, header names, fix hints
	ToneMuted        Tone = "muted"        // secondary text: notes, skipped phases, labels
	ToneStrong       Tone = "strong"       // headings and titles
)

// Style is how a tone looks. Color is an ANSI colour number as lipgloss.Color
// takes it ("1" red, "2" green, "3" yellow, "5" magenta, "6" cyan; "" the
// terminal's own colour).
type Style struct {
	Color string
	Bold  bool
	Faint bool
}

// Palette is the one palette: each tone's style. The text views paint with it
// through Painter; the TUI builds its lipgloss styles from the same data.
var Palette = map[Tone]Style{
	TonePass:         {Color: "2"},
	ToneFail:         {Color: "1"},
	ToneWarn:         {Color: "3"},
	ToneInconclusive: {Color: "5"},
	ToneLost:         {Color: "5"},
	ToneInfo:         {Color: "6"},
	ToneMuted:        {Faint: true},
	ToneStrong:       {Bold: true},
}

// StatusTone is the tone of an HTTP status: 2xx pass, 3xx info, 4xx warn,
// anything else (5xx, no status) fail.
func StatusTone(status int) Tone {
	switch {
	case status >= 200 && status < 300:
		return TonePass
	case status >= 300 && status < 400:
		return ToneInfo
	case status >= 400 && status < 500:
		return ToneWarn
	}
	return ToneFail
}

// Painter paints text with the palette, or leaves it alone when colour is
// off. Whether colour is on is the caller's decision (iostreams: a terminal
// and no NO_COLOR, unless --no-color); the zero Painter paints nothing.
type Painter struct{ on bool }

// Colors returns a Painter that paints when on is true.
func Colors(on bool) Painter { return Painter{on: on} }

// On reports whether p paints.
func (p Painter) On() bool { return p.on }

// Paint renders s in tone t.
func (p Painter) Paint(t Tone, s string) string { return p.paint(Palette[t], s) }

// Emphasis renders s in tone t, bold (a verdict, a failed phase).
func (p Painter) Emphasis(t Tone, s string) string {
	st := Palette[t]
	st.Bold = true
	return p.paint(st, s)
}

// Bold renders s as a heading.
func (p Painter) Bold(s string) string { return p.Paint(ToneStrong, s) }

// Faint renders s as secondary text.
func (p Painter) Faint(s string) string { return p.Paint(ToneMuted, s) }

// Status renders s in the tone of an HTTP status (StatusTone).
func (p Painter) Status(status int, s string) string { return p.Paint(StatusTone(status), s) }

// AttemptStatus is how every view labels an attempt's outcome
// (replay.Outcome) and the tone it is painted in: its status code, ERR (no
// answer), lost (the answer left unread on purpose), or "" (not sent).
func AttemptStatus(a store.Attempt) (string, Tone) {
	switch replay.Outcome(a) {
	case "":
		return "", ToneMuted
	case replay.OutcomeError:
		return "ERR", ToneFail
	case replay.OutcomeLost:
		return "lost", ToneLost
	}
	return strconv.Itoa(a.Status), StatusTone(a.Status)
}

func (p Painter) paint(st Style, s string) string {
	if !p.on || s == "" {
		return s
	}
	var attrs []color.Attribute
	if n, err := strconv.Atoi(st.Color); err == nil && n >= 0 && n < 8 {
		attrs = append(attrs, color.FgBlack+color.Attribute(n))
	}
	if st.Bold {
		attrs = append(attrs, color.Bold)
	}
	if st.Faint {
		attrs = append(attrs, color.Faint)
	}
	if len(attrs) == 0 {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor()
	return c.Sprint(s)
}
