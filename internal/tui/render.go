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
)

// renderBody shows a body for reading: JSON indented with syntax colour, a
// form's fields decoded one per line, text as is (escaped), and anything else
// as a hex dump.
func renderBody(st *Styles, contentType string, body []byte) string {
	if len(body) == 0 {
		return st.Faint.Render("(empty body)")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		var out bytes.Buffer
		if json.Indent(&out, trimmed, "", "  ") == nil {
			return colourJSON(st, out.String())
		}
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" && utf8.Valid(body) {
		if s, ok := renderForm(st, string(body)); ok {
			return s
		}
	}
	if textual(body) {
		return escapeText(string(body))
	}
	return st.Faint.Render(fmt.Sprintf("%d bytes of %s, as hex:", len(body), orDefault(contentType, "binary data"))) +
		"\n" + strings.TrimRight(hex.Dump(body), "\n")
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

// renderRaw shows wire bytes exactly: one line per \n, the line ending
// written out (\r\n), and every byte that is not printable UTF-8 as \xNN.
func renderRaw(st *Styles, raw []byte) string {
	if len(raw) == 0 {
		return st.Faint.Render("(no bytes stored)")
	}
	var b strings.Builder
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i+1], raw[i+1:]
		} else {
			raw = nil
		}
		for i := 0; i < len(line); {
			r, n := utf8.DecodeRune(line[i:])
			switch {
			case r == '\r':
				b.WriteString(st.Faint.Render(`\r`))
			case r == '\n':
				b.WriteString(st.Faint.Render(`\n`))
			case r == '\t':
				b.WriteString(st.Faint.Render(`\t`))
			case r == '\\':
				b.WriteString(`\\`)
			case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, unsteady(r):
				for _, c := range line[i : i+n] {
					b.WriteString(st.Warn.Render(fmt.Sprintf(`\x%02x`, c)))
				}
			default:
				b.Write(line[i : i+n])
			}
			i += n
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
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

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// wrap fits text to width: at spaces where it can, mid-word where a word is
// longer than the line.
func wrap(s string, width int) string { return ansi.Wrap(s, width, "") }
