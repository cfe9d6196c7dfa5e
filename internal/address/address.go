// Package address owns the handler addresses people type: --to, --forward
// and --via on the command line, to: in hookreplay.yaml and the TUI's replay
// form all read a handler's address through Handler, so each accepts the
// same forms and refuses a bad one with the same words.
//
// A value with a scheme is a URL and is kept as typed; like 'stripe listen
// --forward-to localhost:3000', a bare port ("3000", ":3000") means
// http://127.0.0.1:PORT and host:port ("localhost:3000") gets http://, each
// with an optional path ("3000/webhooks").
package address

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// Forms names the forms Handler accepts, for errors and help text.
const Forms = "want a URL (http://localhost:3000/webhooks), a port (3000) or host:port with an optional path (localhost:3000/webhooks)"

// Complete returns the URL a handler address stands for: "3000", ":3000"
// and "3000/hook" are on 127.0.0.1; "localhost:3000/hook" gets http://; a
// value with a scheme, an empty one and one that is no address at all are
// returned trimmed but otherwise as typed (Handler says what is wrong).
func Complete(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.Contains(s, "://") {
		return s
	}
	hostPort, rest, _ := strings.Cut(s, "/")
	if rest != "" || strings.HasSuffix(s, "/") {
		rest = "/" + rest
	}
	if isPort(hostPort) {
		return "http://127.0.0.1:" + hostPort + rest
	}
	if p, ok := strings.CutPrefix(hostPort, ":"); ok && isPort(p) {
		return "http://127.0.0.1:" + p + rest
	}
	if i := strings.LastIndex(hostPort, ":"); i > 0 && isPort(hostPort[i+1:]) {
		return "http://" + hostPort + rest
	}
	return s
}

// Handler reads a handler's address in any of the forms Complete knows and
// returns its URL: http or https, with a host and a port from 1 to 65535 if
// one is given. Its error is one line that does not repeat the value (the
// caller names the flag or key and the value before it); an empty value is
// an error too, which callers that make the address optional check first.
func Handler(s string) (*url.URL, error) {
	c := Complete(s)
	if c == "" {
		return nil, errors.New("empty: " + Forms)
	}
	if p := portOf(c); isDigits(p) && !isPort(p) {
		return nil, fmt.Errorf("port %s is out of range (1 to 65535)", p)
	}
	u, err := url.Parse(c)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.Hostname() == "" {
		return nil, errors.New(Forms)
	}
	return u, nil
}

// Shown is s as an error message quotes a value: as typed, or in Go's
// quotes when it is empty or holds a space or a control character.
func Shown(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || !unicode.IsPrint(r) }) {
		return strconv.Quote(s)
	}
	return s
}

// portOf is the port s names, if any: "70000", ":70000", "host:70000/path"
// or "http://host:70000/", so that a port out of range is called that
// rather than not an address.
func portOf(s string) string {
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	hostPort, _, _ := strings.Cut(s, "/")
	if i := strings.LastIndex(hostPort, ":"); i >= 0 && !strings.HasSuffix(hostPort, "]") {
		return hostPort[i+1:]
	}
	return hostPort
}

// isPort reports whether s is a port a handler can listen on, 1 to 65535.
func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535 && isDigits(s)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
