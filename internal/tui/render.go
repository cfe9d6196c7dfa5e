package tui

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
)

// maxShown bounds the bytes of a body, of indented JSON or of the wire bytes
// the delivery view lays out. Capture stores bodies up to 10 MiB: laid out
// whole, a binary one froze the view for seconds on every tab switch and
// resize and took hundreds of MB. The rest is a command away (more).
const maxShown = 256 << 10

// head is b cut to maxShown bytes (at a UTF-8 character boundary when b is
// text), and whether it was cut.
func head(b []byte) ([]byte, bool) {
	if len(b) <= maxShown {
		return b, false
	}
	n := maxShown
	for i := 0; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(b[n]); i++ {
		n--
	}
	return b[:n], true
}

// more is the line after a cut: how much there is and where it all is.
func more(st *Styles, all int, rest string) string {
	return st.Warn.Render(fmt.Sprintf("… only the first %s are shown (%s in all); %s", report.Size(maxShown), report.Size(all), rest))
}

// renderBody shows a body for reading: JSON indented with syntax colour, a
// form's fields decoded one per line, text as is (escaped), and anything else
// as a hex dump. Past maxShown it stops and says rest (the command that
// writes all of it).
func renderBody(st *Styles, contentType string, body []byte, rest string) string {
	if len(body) == 0 {
		return st.Faint.Render("(empty body)")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		var out bytes.Buffer
		if json.Indent(&out, trimmed, "", "  ") == nil {
			b, cut := head(out.Bytes())
			if !cut {
				return colourJSON(st, out.String())
			}
			if i := bytes.LastIndexByte(b, '\n'); i > 0 {
				b = b[:i]
			}
			return colourJSON(st, string(b)) + "\n" + more(st, len(body), rest)
		}
	}
	b, cut := head(body)
	tail := ""
	if cut {
		tail = "\n" + more(st, len(body), rest)
	}
	mt, params, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" && !cut && utf8.Valid(body) {
		if s, ok := renderForm(st, string(body)); ok {
			return s
		}
	}
	if textual(b) {
		return escapeText(string(b)) + tail
	}
	if latin1(params["charset"]) {
		// Text its sender says is ISO-8859-1: a byte is a character.
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		if t := string(rs); textual([]byte(t)) {
			return st.Faint.Render(fmt.Sprintf("%d bytes of %s, decoded as ISO-8859-1 (3 raw shows the bytes):", len(body), contentType)) +
				"\n" + escapeText(t) + tail
		}
	}
	return st.Faint.Render(fmt.Sprintf("%d bytes of %s, as hex:", len(body), orDefault(contentType, "binary data"))) +
		"\n" + strings.TrimRight(hex.Dump(b), "\n") + tail
}

// renderForm lists a form body's fields in their order, decoded.
func renderForm(st *Styles, body string) (string, bool) {
	var b strings.Builder
	b.WriteString(st.Faint.Render("form fields (decoded):") + "\n")
	for _, pair := range strings.Split(body, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return "", false
		}
		b.WriteString(st.HeaderKey.Render(pr(dk)) + " = " + pr(dv) + "\n")
	}
	return strings.TrimRight(b.String(), "\n"), true
}

// colourJSON paints indented JSON: keys, strings, numbers and literals. The
// input is valid JSON from json.Indent; control characters in strings are
// already escaped by JSON itself.
func colourJSON(st *Styles, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			tok := pr(s[i:j])
			k := j
			for k < len(s) && s[k] == ' ' {
				k++
			}
			if k < len(s) && s[k] == ':' {
				b.WriteString(st.JSONKey.Render(tok))
			} else {
				b.WriteString(st.JSONStr.Render(tok))
			}
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				j++
			}
			b.WriteString(st.JSONNum.Render(s[i:j]))
			i = j
		case c == 't' || c == 'f' || c == 'n':
			j := i
			for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
				j++
			}
			b.WriteString(st.JSONLit.Render(s[i:j]))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// renderRaw shows wire bytes exactly, in lines of at most width columns:
// one line per \n, the line ending written out (\r\n), a backslash doubled,
// and every byte that is not printable UTF-8 (or that terminals disagree on
// the width of) as \xNN. A line breaks between escapes, never inside one
// (a \x at the end of a line and 1b on the next read as two things). Past
// maxShown it stops and says rest.
func renderRaw(st *Styles, raw []byte, width int, rest string) string {
	if len(raw) == 0 {
		return st.Faint.Render("(no bytes stored)")
	}
	all := len(raw)
	raw, cut := head(raw)
	w := rawWriter{st: st, width: max(width, 4)}
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRune(raw[i:])
		switch {
		case r == '\r':
			w.token(rawFaint, `\r`, 2)
		case r == '\n':
			w.token(rawFaint, `\n`, 2)
			w.newline()
		case r == '\t':
			w.token(rawFaint, `\t`, 2)
		case r == '\\':
			w.token(rawPlain, `\\`, 2)
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, unsteady(r):
			for _, c := range raw[i : i+n] {
				w.token(rawWarn, fmt.Sprintf(`\x%02x`, c), 4)
			}
		case r < utf8.RuneSelf:
			w.token(rawPlain, string(raw[i:i+n]), 1)
		default:
			c := string(raw[i : i+n])
			w.token(rawPlain, c, ansi.StringWidth(c))
		}
		i += n
	}
	w.flush()
	out := strings.TrimRight(w.b.String(), "\n")
	if cut {
		out += "\n" + more(st, all, rest)
	}
	return out
}

// The styles of raw tokens.
const (
	rawPlain = iota
	rawFaint
	rawWarn
)

// rawWriter lays out raw tokens in lines of width columns, styling each run
// of tokens of one style at once (a binary body is mostly escapes: one
// Render a byte took seconds).
type rawWriter struct {
	st       *Styles
	width    int
	b        strings.Builder
	seg      strings.Builder
	segStyle int
	col      int
}

func (w *rawWriter) token(style int, text string, cols int) {
	if w.col > 0 && w.col+cols > w.width {
		w.newline()
	}
	if style != w.segStyle {
		w.flush()
		w.segStyle = style
	}
	w.seg.WriteString(text)
	w.col += cols
}

func (w *rawWriter) newline() {
	w.flush()
	w.b.WriteByte('\n')
	w.col = 0
}

func (w *rawWriter) flush() {
	if w.seg.Len() == 0 {
		return
	}
	switch w.segStyle {
	case rawFaint:
		w.b.WriteString(w.st.Faint.Render(w.seg.String()))
	case rawWarn:
		w.b.WriteString(w.st.Warn.Render(w.seg.String()))
	default:
		w.b.WriteString(w.seg.String())
	}
	w.seg.Reset()
}

func renderHeaders(st *Styles, hs message.Headers) string {
	if len(hs) == 0 {
		return st.Faint.Render("(no headers)")
	}
	var b strings.Builder
	for _, h := range hs {
		b.WriteString(st.HeaderKey.Render(pr(h.Name)) + ": " + pr(h.Value) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// textual reports whether b is UTF-8 text without control characters other
// than line breaks and tabs.
func textual(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r >= 0x7f && r < 0xa0 {
			return false
		}
	}
	return true
}

// escapeText keeps line breaks and escapes every other control character.
func escapeText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = pr(strings.ReplaceAll(l, "\t", "    "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// latin1 reports whether a charset names ISO-8859-1.
func latin1(charset string) bool {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
		return true
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// wrap fits text to width: at spaces where it can, mid-word where a word is
// longer than the line.
func wrap(s string, width int) string { return ansi.Wrap(s, width, "") }

// wrapReport fits report text to width with a hanging indent: a line too long
// is wrapped and its continuation lines start under its own text, two
// columns in ("  ✗ dups   2 of 2 …" continues at column 4), as a reader of
// an indented report expects; at column 0 they read as new entries.
func wrapReport(s string, width int) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		// The whole line is wrapped at the continuation's width: cutting
		// off the first line and wrapping the rest again would split styled
		// text or add a space inside a word broken mid-word.
		plain := ansi.Strip(l)
		hang := min(len(plain)-len(strings.TrimLeft(plain, " "))+2, width/2)
		pad := strings.Repeat(" ", hang)
		for i, c := range strings.Split(ansi.Wrap(l, max(1, width-hang), ""), "\n") {
			if i > 0 {
				c = pad + c
			}
			out = append(out, c)
		}
	}
	return strings.Join(out, "\n")
}
