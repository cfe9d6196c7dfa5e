package message

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, line, text string }{
		{"evt_1 café", "evt_1 café", "evt_1 café"},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"a\nb\r\nc\rd\te", `a\nb\r\nc\rd\te`, "a\nb\r\nc\\rd\te"},
		{"csi \u009b31m osc \u009d0;x\u009c", `csi \u009b31m osc \u009d0;x\u009c`, `csi \u009b31m osc \u009d0;x\u009c`},
		{"raw \x9b byte", `raw \x9b byte`, `raw \x9b byte`},
		{"del \x7f", `del \x7f`, `del \x7f`},
		{"amount: 1\u202e0001", `amount: 1\u202e0001`, `amount: 1\u202e0001`},
		{"\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d`, `\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`, `bad \xff\xfe utf-8`},
		{"NEL \u0085 and nbsp \u00a0", `NEL \u0085 and nbsp ` + "\u00a0", `NEL \u0085 and nbsp ` + "\u00a0"},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.line {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if got := PrintableText(tt.in); got != tt.text {
			t.Errorf("PrintableText(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if safe := TerminalSafe([]byte(tt.in)); safe != (tt.in == tt.text) {
			t.Errorf("TerminalSafe(%q) = %v", tt.in, safe)
		}
	}
	// Invisible characters are shown escaped (Printable, PrintableText)
	// but the terminal does not act on them: exact bytes may go to it.
	for in, want := range map[string]string{
		"invoice.pa​id":                     `invoice.pa\u200bid`,
		"\ufeff{\"a\":1}":                   `\ufeff{"a":1}`,
		"soft\u00adhyphen word\u2060joiner": `soft\u00adhyphen word\u2060joiner`,
		"👩\u200d💻 zwnj\u200c":               `👩\u200d💻 zwnj\u200c`,
		"tags \U000e0041\U000e0042":         `tags \U000e0041\U000e0042`,
		"line\u2028para\u2029":              `line\u2028para\u2029`,
		"arabic \u0600 mongolian \u180e":    `arabic \u0600 mongolian \u180e`,
		"plain é ü ж א 中文 한국어 \u00a0":       "plain é ü ж א 中文 한국어 \u00a0",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
		if got := PrintableText(in); got != want {
			t.Errorf("PrintableText(%q) = %q, want %q", in, got, want)
		}
		if !TerminalSafe([]byte(in)) {
			t.Errorf("TerminalSafe(%q) = false: nothing in it acts on a terminal", in)
		}
		if got := string(EscapeJSON([]byte(in))); got != in {
			t.Errorf("EscapeJSON(%q) = %q: JSON keeps invisible characters", in, got)
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	in := map[string]string{"v": "a\u009b31m\u009d\u0085\x7f\u202e\u2066 é <>"}
	b, _ := json.Marshal(in)
	got := string(EscapeJSON(b))
	want := `{"v":"a\u009b31m\u009d\u0085\u007f\u202e\u2066 é \u003c\u003e"}`
	if got != want {
		t.Fatalf("EscapeJSON = %s, want %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["v"] != in["v"] {
		t.Fatalf("decodes to %q, %v", back["v"], err)
	}
}

// FuzzPrintable: whatever the input, the escaped text holds no character
// a terminal acts on, escaping twice changes nothing more, text without
// such characters is left as it is, and escaped JSON decodes to the value
// encoding/json wrote.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;aGk=\x07", "\u009b2J\u009d0;t\u009c", "\x9b\x9d", "\x7f",
		"a\u202eb\u2066c\u200fd\u061c", "line\r\nnext\rover\n\ttab", "\xe2\x80", "\xc2\x9b", "é\u00a0\u2028", "a\u200bb\ufeff\U000e0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Printable": Printable(s), "PrintableText": PrintableText(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not UTF-8", name, s, out)
			}
			for _, r := range out {
				if foreign(r) && !(name == "PrintableText" && (r == '\n' || r == '\t' || r == '\r')) {
					t.Fatalf("%s(%q) = %q keeps %U", name, s, out, r)
				}
			}
		}
		if again := Printable(Printable(s)); again != Printable(s) {
			t.Fatalf("Printable is not idempotent on %q", s)
		}
		if !TerminalSafe([]byte(PrintableText(s))) {
			t.Fatalf("PrintableText(%q) is not terminal-safe", s)
		}
		if !strings.ContainsFunc(s, foreign) && utf8.ValidString(s) && Printable(s) != s {
			t.Fatalf("Printable changed clean %q", s)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal(EscapeJSON(b), &back); err != nil {
			t.Fatalf("EscapeJSON(%s) is not JSON: %v", b, err)
		}
		var want string
		json.Unmarshal(b, &want)
		if back != want {
			t.Fatalf("EscapeJSON changed the value: %q, want %q", back, want)
		}
		for _, r := range string(EscapeJSON(b)) {
			if r >= 0x20 && acts(r) {
				t.Fatalf("EscapeJSON(%s) keeps %U", b, r)
			}
		}
	})
}
