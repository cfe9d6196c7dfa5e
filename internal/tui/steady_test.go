package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// checkSteady fails when the view holds a character terminals may draw
// wider or narrower than lipgloss measured, or a line wider than the window:
// either shifts every later frame on a real terminal.
func (h *harness) checkSteady(where string) {
	h.t.Helper()
	v := h.view()
	for _, r := range v {
		if unsteady(r) {
			h.t.Errorf("%s: the view holds %U, which terminals draw at another width than lipgloss measures:\n%s", where, r, v)
			return
		}
	}
	for i, l := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(l); w > h.m.width {
			h.t.Errorf("%s: line %d is %d wide in a %d-wide window: %q", where, i, w, h.m.width, l)
		}
	}
}

// TestUnsteadyCharactersEscaped: soft hyphens, bidi overrides, zero-width
// joiners, skin tones, flags... in an event type, a header or a body are
// shown escaped in every view, so a frame never drifts off the screen.
func TestUnsteadyCharactersEscaped(t *testing.T) {
	h := newHarness(t, storeFrom(t, "testdata/unsteady.jsonl"), 80, 24)
	h.checkSteady("deliveries")
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	h.checkSteady("deliveries at 120")
	h.contains(`shy\u00ad`, `skin👋\U0001f3fd`, `rlo\u202e`)
	for i := 0; i < 10; i++ {
		h.keys("enter")
		for tab := 1; tab <= len(deliveryTabs); tab++ {
			h.keys(string(rune('0' + tab)))
			h.checkSteady(h.m.top().Title() + " " + deliveryTabs[tab-1])
		}
		h.keys("esc", "j")
	}
	h.keys("G", "enter", "3") // raw bytes: the skin tone as the bytes it is
	h.contains(`a👋\xf0\x9f\x8f\xbdb\r\n`)
}

func TestSteady(t *testing.T) {
	for in, want := range map[string]string{
		"plain ascii":              "plain ascii",
		"漢字 👋 é":                   "漢字 👋 é",
		"a\u00adb":                 `a\u00adb`,
		"👩\u200d💻":                 `👩\u200d💻`,
		"\x1b[1mbold\x1b[0m\u202e": "\x1b[1mbold\x1b[0m\\u202e",
		"bad \xff byte 🇺":          "bad \xff byte \\U0001f1fa",
	} {
		if got := steady(in); got != want {
			t.Errorf("steady(%q) = %q, want %q", in, got, want)
		}
	}
}
