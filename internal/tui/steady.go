package tui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bubble Tea redraws a line in place assuming the terminal gives it the
// width lipgloss measured. For some characters terminals disagree with that
// measure and with each other: invisible format characters (soft hyphen,
// U+0600, zero-width space and joiner, bidi overrides), variation selectors,
// emoji skin-tone modifiers, regional indicators (flags), conjoining Hangul
// vowels and finals. One such character in a full-width table row wraps the
// row on the terminal, the screen scrolls, and every later frame is drawn a
// line off (measured in tmux: U+0600 and U+00AD take a column lipgloss does
// not count, 👋🏽 four where lipgloss counts two). They are shown escaped
// instead, as \uXXXX: the text keeps every character, visibly, and each
// line is as wide on every terminal as it was laid out.

// unsteady reports whether terminals may give r another width than lipgloss.
func unsteady(r rune) bool {
	switch {
	case r < 0xa0:
		return false
	case r >= 0x1160 && r <= 0x11ff, r >= 0xd7b0 && r <= 0xd7ff: // conjoining Hangul
		return true
	case r >= 0x1f1e6 && r <= 0x1f1ff: // regional indicators
		return true
	case r >= 0x1f3fb && r <= 0x1f3ff: // skin-tone modifiers
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector)
}

// steady escapes every unsteady character of s as \uXXXX (\UXXXXXXXX above
// the BMP); the rest of s, escape sequences included, is left as it is.
func steady(s string) string {
	i := 0
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsteady(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsteady(r) {
			b.WriteString(escapeRune(r))
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func escapeRune(r rune) string {
	if r > 0xffff {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
