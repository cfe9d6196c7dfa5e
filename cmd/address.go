package cmd

// Addresses as people type them, read the same on every command: --to,
// --forward and --via take a handler address as package address reads it
// (as hookreplay.yaml's to: does): a URL or, like 'stripe listen
// --forward-to localhost:3000', a bare port ("3000" is
// http://127.0.0.1:3000) or host:port with an optional path
// ("localhost:3000/webhooks"); --listen (capture, demo serve) takes "3000"
// as 127.0.0.1:3000, loopback unless a host is given.

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/address"
)

// handlerURL completes a handler address into a URL (address.Complete).
func handlerURL(s string) string { return address.Complete(s) }

// handlerAddr reads a handler address flag's value for a command's checks,
// with address.Handler's words after the flag's name and value, as a
// mistyped value is refused when the flag is set.
func handlerAddr(flag, value string) (*url.URL, error) {
	u, err := address.Handler(value)
	if err != nil {
		return nil, usageErr("%s %s: %v", flag, address.Shown(value), err)
	}
	return u, nil
}

// checkHandlerAddr refuses a handler address when its flag is set; an
// empty value passes, for the command to say the flag is required.
func checkHandlerAddr(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	_, err := address.Handler(s)
	return err
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

// checkListenAddr says what is wrong with a listening address before
// anything listens: Go's words for it ("missing port in address", "lookup
// tcp/abc: unknown port") name no fix.
func checkListenAddr(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		if _, nerr := strconv.Atoi(s); nerr == nil {
			return fmt.Errorf("port %s is out of range (0 to 65535)", s)
		}
		return errors.New("want a port (9000), host:port (127.0.0.1:9000) or [::1]:9000")
	}
	if !isPort(port) {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
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
	check    func(string) error // nil: the command checks it
	typ      string
}

func (v *addrValue) String() string { return *v.p }
func (v *addrValue) Type() string   { return v.typ }
func (v *addrValue) Set(s string) error {
	c := v.complete(s)
	if v.check != nil {
		if err := v.check(c); err != nil {
			return err
		}
	}
	*v.p = c
	return nil
}

// urlFlag declares a handler address flag (--to, --forward) on fs.
func urlFlag(fs *pflag.FlagSet, p *string, name, value, usage string) {
	*p = handlerURL(value)
	fs.Var(&addrValue{p: p, complete: handlerURL, check: checkHandlerAddr, typ: "url"}, name, usage+"; a bare port means http://127.0.0.1:PORT")
}

// listenFlag declares a listening address flag (--listen) on fs.
func listenFlag(fs *pflag.FlagSet, p *string, name, value, usage string) {
	*p = listenAddr(value)
	fs.Var(&addrValue{p: p, complete: listenAddr, check: checkListenAddr, typ: "addr"}, name, usage+"; a bare port means 127.0.0.1:PORT")
}
