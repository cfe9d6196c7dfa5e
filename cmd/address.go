package cmd

// Addresses as people type them, read the same on every command: --to and
// --forward take a URL or, like 'stripe listen --forward-to localhost:3000',
// a bare port ("3000" is http://127.0.0.1:3000) or host:port with an
// optional path ("localhost:3000/webhooks"); --listen (capture, demo serve)
// takes "3000" as 127.0.0.1:3000, loopback unless a host is given.

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// handlerURL completes a handler address into a URL: a value with a scheme
// is kept as typed; "3000", ":3000" and "3000/hook" are on 127.0.0.1;
// "localhost:3000/hook" gets http://.
func handlerURL(s string) string {
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
	return s // not an address hookreplay can complete: the command says why
}

// listenAddr completes a listening address: a bare port "3000" is
// 127.0.0.1:3000 (loopback); anything else is kept, ":3000" included,
// which is Go's spelling of every interface and gets capture's warning.
func listenAddr(s string) string {
	s = strings.TrimSpace(s)
	if isPort(s) {
		return "127.0.0.1:" + s
	}
	return s
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 65535 && !strings.HasPrefix(s, "+")
}

// addrValue is a string flag completed by complete as it is set, so every
// command sees the full address and its errors quote what it means.
type addrValue struct {
	p        *string
	complete func(string) string
	typ      string
}

func (v *addrValue) String() string { return *v.p }
func (v *addrValue) Type() string   { return v.typ }
func (v *addrValue) Set(s string) error {
	*v.p = v.complete(s)
	return nil
}

// urlFlag declares a handler address flag (--to, --forward) on fs.
func urlFlag(fs *pflag.FlagSet, p *string, name, value, usage string) {
	*p = handlerURL(value)
	fs.Var(&addrValue{p: p, complete: handlerURL, typ: "url"}, name, usage+"; a bare port means http://127.0.0.1:PORT")
}

// listenFlag declares a listening address flag (--listen) on fs.
func listenFlag(fs *pflag.FlagSet, p *string, name, value, usage string) {
	*p = listenAddr(value)
	fs.Var(&addrValue{p: p, complete: listenAddr, typ: "addr"}, name, usage+"; a bare port means 127.0.0.1:PORT")
}
