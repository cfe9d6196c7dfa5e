package message

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the one place that decides which text from outside (a
// sender's body, headers and path, a stored or imported field, a handler's
// output, a file name) may reach a terminal as it is. Everything printed
// for a person goes through Printable or PrintableText; the JSON hookreplay
// writes goes through EscapeJSON; TerminalSafe says whether bytes asked for
// exactly (show --raw, --body) can go to a terminal untouched.

// foreign reports whether r must not be shown as it is: a character a
// terminal acts on (acts) or one it shows as nothing (hidden).
func foreign(r rune) bool { return acts(r) || hidden(r) }

// Escaped reports whether Printable escapes r: other writers of text meant
// to be read (a shell script's quoting) escape the same characters.
func Escaped(r rune) bool { return foreign(r) }

// hidden reports whether r is an invisible format character (Unicode Cf:
// zero-width space, joiners, word joiner, BOM, soft hyphen, the tag
// characters U+E0020-U+E007F that spell hidden ASCII) or a line or
// paragraph separator: shown as it is, "invoice.paid" and
// "invoice.pa<U+200B>id" look the same, and a body can carry text no one
// reading it sees. They change nothing on the terminal, so bytes asked for
// exactly (TerminalSafe) and JSON (EscapeJSON) keep them.
func hidden(r rune) bool {
	switch {
	case r < 0xad, r > 0xad && r < 0x600, r > 0x206f && r < 0xfeff:
		return false // Latin, Greek, Cyrillic, Hebrew, CJK, Hangul: none there
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// acts reports whether a terminal acts on r: C0 controls (ESC starts every
// escape sequence), DEL, C1 controls (U+009B is a one-character CSI, U+009D
// an OSC on terminals that read C1 from UTF-8) and the bidirectional
// controls that make a terminal show text in another order than it is
// stored (U+202E shows "gpj.exe" as "exe.jpg").
func acts(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, // ALM, LRM, RLM
		r >= 0x202a && r <= 0x202e, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	}
	return false
}

// Printable returns s safe to print on a terminal: every foreign character
// (C0, DEL, C1, bidi controls, invisible format characters) and every byte
// that is not UTF-8 is written as a Go escape (\x1b, \r, \n, \t, \x9b for
// a raw byte, \u009b, \u202e, \u200b, \U000e0041) so that text from a
// sender cannot move the cursor, clear the screen, set the title, write the
// clipboard, reorder what is shown or hide in it. Other text, including
// non-ASCII letters, is unchanged.
func Printable(s string) string { return escape(s, false) }

// PrintableText is Printable for text shown over several lines (a body, a
// handler's output): line feeds, tabs and the carriage return of a CRLF
// stay, every other foreign character or invalid byte is escaped. A lone
// carriage return is escaped too: it would let the rest of a line overwrite
// what came before it.
func PrintableText(s string) string { return escape(s, true) }

// TerminalSafe reports whether b can be written to a terminal as it is:
// PrintableText would leave it unchanged but for invisible characters
// (hidden), which the terminal does not act on.
func TerminalSafe(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || acts(r) && !kept(r, b[i+n:], true) {
			return false
		}
		i += n
	}
	return true
}

// kept reports whether text mode keeps foreign r, given what follows it.
func kept(r rune, rest []byte, text bool) bool {
	switch {
	case !text:
		return false
	case r == '\n', r == '\t':
		return true
	case r == '\r':
		return len(rest) > 0 && rest[0] == '\n'
	}
	return false
}

func escape(s string, text bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || foreign(r) && !kept(r, []byte(s[i+n:min(i+n+1, len(s))]), text) {
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
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !foreign(r) || kept(r, []byte(s[i+n:min(i+n+1, len(s))]), text):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// EscapeJSON returns JSON text js with every C1 control, DEL and bidi
// control written as a \u escape (\u009b, \u202e). encoding/json escapes
// only C0 (and U+2028, U+2029): the others would reach a terminal that
// shows the JSON, or a tool that prints a field, as they are. The document
// decodes to the same value. js must be whole UTF-8 characters; in valid
// JSON such characters occur only inside strings, so replacing them
// anywhere is safe.
func EscapeJSON(js []byte) []byte {
	i := 0
	for i < len(js) && (js[i] < utf8.RuneSelf && js[i] != 0x7f) {
		i++
	}
	if i == len(js) || !bytes.ContainsFunc(js[i:], acts) {
		return js
	}
	out := make([]byte, 0, len(js)+32)
	out = append(out, js[:i]...)
	for i < len(js) {
		r, n := utf8.DecodeRune(js[i:])
		if r >= 0x20 && acts(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, js[i:i+n]...)
		}
		i += n
	}
	return out
}
