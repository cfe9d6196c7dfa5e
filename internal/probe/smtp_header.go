package probe

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
)

// The SMTP sink keeps a few fields of a message's header section (the
// subject a report names) and nothing else. net/mail parsed the whole
// section into memory: four concurrent messages with 6 MB header sections,
// within the advertised SIZE, took the sink to ~290 MiB, growing with the
// clients. The section is now read as a stream, line by line through a small
// buffer, keeping only the fields asked for, each bounded, and looked at for
// at most MaxMailHeader bytes; the rest of the message is read and discarded
// as the body is.
const (
	// MaxMailHeader bounds the part of a message read as its header
	// section; past it the rest is read as body.
	MaxMailHeader = 256 << 10
	// maxMailField bounds one kept field's raw (still encoded) value.
	maxMailField = 4 << 10
)

// readMailFields reads the header section at the start of r and returns the
// first value of each field named in want (matched without regard to case,
// folded lines unfolded with one space, trimmed, at most maxMailField
// bytes). It stops after the blank line that ends the section, after
// MaxMailHeader bytes, or at the end of r; the rest is left in r.
func readMailFields(r *bufio.Reader, want []string) (map[string]string, error) {
	out := map[string]string{}
	var cur *strings.Builder // the kept field the current line continues, if any
	var curName string
	read, lineStart := 0, true
	keep := func(b []byte) {
		if cur != nil && cur.Len() < maxMailField {
			cur.Write(b[:min(len(b), maxMailField-cur.Len())])
		}
	}
	finish := func() {
		if cur != nil {
			if _, ok := out[curName]; !ok {
				out[curName] = strings.TrimSpace(cur.String())
			}
		}
		cur = nil
	}
	for read < MaxMailHeader {
		line, err := r.ReadSlice('\n')
		read += len(line)
		if len(line) == 0 {
			finish()
			return out, err
		}
		text := bytes.TrimRight(line, "\r\n") // a kept value never holds the line ending
		switch {
		case !lineStart:
			keep(text)
		case len(text) == 0 && err == nil:
			finish()
			return out, nil // the blank line: the body follows
		case line[0] == ' ' || line[0] == '\t': // a folded line continues the field
			if cur != nil && cur.Len() > 0 {
				keep([]byte{' '})
			}
			keep(bytes.TrimLeft(text, " \t"))
		default:
			finish()
			if name, value, ok := bytes.Cut(text, []byte(":")); ok {
				for _, w := range want {
					if strings.EqualFold(string(bytes.TrimSpace(name)), w) {
						cur, curName = &strings.Builder{}, w
						keep(bytes.TrimLeft(value, " \t"))
					}
				}
			}
		}
		lineStart = err == nil
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			finish()
			return out, err
		}
	}
	finish()
	return out, nil
}
