package exchange

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
)

// shellCommand is one simple command of a shell file: its words after
// quote removal, and the line it starts on.
type shellCommand struct {
	line  int
	words []string
}

// splitShell splits bash source into simple commands the way bash would
// split and unquote them, for the subset a file of curl commands uses:
// blanks, backslash-newline continuations, comments, ';' and '&&' between
// commands, '...' and "..." quoting, $'...' ANSI-C quoting, backslash
// escapes and ${NAME:-default} (which reads as its default, so a file
// means the same on every machine). Anything that would run code or read
// the environment ($VAR, $(...), `...`, pipes, redirections) is refused.
func splitShell(src string) ([]shellCommand, error) {
	var cmds []shellCommand
	var cur shellCommand
	var w strings.Builder
	inWord := false
	line := 1
	endWord := func() {
		if inWord {
			cur.words = append(cur.words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(cur.words) > 0 {
			cmds = append(cmds, cur)
		}
		cur = shellCommand{}
	}
	startWord := func() {
		if !inWord {
			inWord = true
			if len(cur.words) == 0 {
				cur.line = line
			}
		}
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			line++
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			i += 3
			line++
		case c == '\n':
			endCmd()
			i++
			line++
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
			i++
		case c == '#' && !inWord:
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ';':
			endCmd()
			i++
		case c == '&' && i+1 < len(src) && src[i+1] == '&':
			endCmd()
			i += 2
		case c == '|' || c == '&' || c == '<' || c == '>' || c == '`' || c == '(' || c == ')':
			return nil, fmt.Errorf("line %d: %q is not supported (only plain curl commands are read)", line, c)
		case c == '\\':
			startWord()
			if i+1 < len(src) {
				w.WriteByte(src[i+1])
				i += 2
			} else {
				i++
			}
		case c == '\'':
			startWord()
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("line %d: unterminated '", line)
			}
			s := src[i+1 : i+1+j]
			w.WriteString(s)
			line += strings.Count(s, "\n")
			i += j + 2
		case c == '"':
			startWord()
			n, nl, err := doubleQuoted(src[i+1:], &w)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			line += nl
			i += n + 1
		case c == '$' && i+1 < len(src) && src[i+1] == '\'':
			startWord()
			n, err := ansiC(src[i+2:], &w)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			line += strings.Count(src[i+2:i+2+n], "\n")
			i += n + 2
		case c == '$':
			startWord()
			n, err := dollar(src[i:], &w)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			i += n
		default:
			startWord()
			w.WriteByte(c)
			i++
		}
	}
	endCmd()
	return cmds, nil
}

// doubleQuoted reads the inside of "..." from s (after the opening quote),
// writes its value to w and returns the bytes consumed (with the closing
// quote) and the newlines in it.
func doubleQuoted(s string, w *strings.Builder) (int, int, error) {
	nl := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			return i + 1, nl, nil
		case c == '\\' && i+1 < len(s):
			switch s[i+1] {
			case '$', '`', '"', '\\':
				w.WriteByte(s[i+1])
			case '\n':
				nl++
			default:
				w.WriteByte('\\')
				w.WriteByte(s[i+1])
			}
			i += 2
		case c == '`':
			return 0, 0, errors.New("command substitution (`...`) is not supported")
		case c == '$':
			n, err := dollar(s[i:], w)
			if err != nil {
				return 0, 0, err
			}
			i += n
		default:
			if c == '\n' {
				nl++
			}
			w.WriteByte(c)
			i++
		}
	}
	return 0, 0, errors.New(`unterminated "`)
}

// dollar reads an expansion at s[0] == '$': ${NAME:-word} and ${NAME-word}
// give their word; a '$' before anything that cannot start a name is
// literal; any other expansion is refused, since its value would depend on
// the machine the file is read on.
func dollar(s string, w *strings.Builder) (int, error) {
	if len(s) < 2 {
		w.WriteByte('$')
		return 1, nil
	}
	c := s[1]
	switch {
	case c == '{':
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return 0, errors.New("unterminated ${")
		}
		inner := s[2:end]
		j := 0
		for j < len(inner) && (isNameByte(inner[j]) || j > 0 && inner[j] >= '0' && inner[j] <= '9') {
			j++
		}
		name, rest := inner[:j], inner[j:]
		switch {
		case name != "" && strings.HasPrefix(rest, ":-"):
			w.WriteString(rest[2:])
		case name != "" && strings.HasPrefix(rest, "-"):
			w.WriteString(rest[1:])
		default:
			return 0, fmt.Errorf("${%s} is not supported (only ${NAME:-default}, read as its default)", inner)
		}
		return end + 1, nil
	case c == '(':
		return 0, errors.New("command substitution $(...) is not supported")
	case isNameByte(c) || c >= '0' && c <= '9' || strings.IndexByte("@*#?$!-", c) >= 0:
		return 0, fmt.Errorf("shell variable $%c... is not supported (the file must not depend on the environment)", c)
	}
	w.WriteByte('$')
	return 1, nil
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ansiC reads the inside of $'...' (after the opening quote), writes its
// value to w and returns the bytes consumed with the closing quote.
func ansiC(s string, w *strings.Builder) (int, error) {
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\'' {
			return i + 1, nil
		}
		if c != '\\' || i+1 >= len(s) {
			w.WriteByte(c)
			i++
			continue
		}
		e := s[i+1]
		i += 2
		switch e {
		case 'a':
			w.WriteByte('\a')
		case 'b':
			w.WriteByte('\b')
		case 'e', 'E':
			w.WriteByte(0x1b)
		case 'f':
			w.WriteByte('\f')
		case 'n':
			w.WriteByte('\n')
		case 'r':
			w.WriteByte('\r')
		case 't':
			w.WriteByte('\t')
		case 'v':
			w.WriteByte('\v')
		case '\\', '\'', '"', '?':
			w.WriteByte(e)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i
			for j < len(s) && j-i < max && isHex(s[j]) {
				j++
			}
			if j == i {
				w.WriteByte('\\')
				w.WriteByte(e)
				continue
			}
			v, _ := strconv.ParseUint(s[i:j], 16, 32)
			if e == 'x' {
				w.WriteByte(byte(v))
			} else if v <= utf8.MaxRune {
				w.WriteRune(rune(v))
			}
			i = j
		case 'c':
			if i < len(s) {
				w.WriteByte(s[i] & 0x1f)
				i++
			}
		default:
			if e >= '0' && e <= '7' {
				j := i - 1
				for j < len(s) && j-(i-1) < 3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i-1:j], 8, 16)
				w.WriteByte(byte(v))
				i = j
				continue
			}
			w.WriteByte('\\')
			w.WriteByte(e)
		}
	}
	return 0, errors.New("unterminated $'")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// shellQuote quotes s as one bash word that bash reads back as exactly s:
// '...' when s is printable UTF-8 (newlines and tabs included), otherwise
// $'...' with \xHH for every other byte — and for each byte of a C1, bidi
// or invisible character (message.Escaped), so that a script shown by cat,
// less or an editor shows what it sends (U+202E inside '...' would show a
// header reordered; U+009B is a CSI to some terminals). \xHH, not \uHHHH:
// macOS's bash 3.2 reads only the former. s must not hold NUL (no argument
// can).
func shellQuote(s string) string {
	plain := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r >= 0x80 && message.Escaped(r) })
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			plain = false
		}
	}
	if plain {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && message.Escaped(r):
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteString("'")
	return b.String()
}
