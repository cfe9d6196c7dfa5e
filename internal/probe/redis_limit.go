package probe

import (
	"context"
	"fmt"
	"net"
	"strconv"
)

// What one Redis reply may announce and hold. A probe reads a count, a short
// value, a page of SCAN or a pipeline of PTTLs: nothing near these. The Redis
// client allocates what a reply announces before a byte of it arrives (a
// server answering $9223372036854775807 made it panic, one announcing 1.5 GB
// made it allocate 1.5 GB), so the connection is read through a guard that
// follows the protocol and refuses a reply past these bounds before the
// client sees its header.
const (
	// MaxRedisValue bounds one string a reply announces (GET's value, a key
	// SCAN returns, a line).
	MaxRedisValue = 1 << 20
	// MaxRedisReply bounds the bytes of one whole reply, nested ones included.
	MaxRedisReply = 4 << 20
	// MaxRedisElements bounds the elements the aggregates of one reply
	// announce, summed (each costs the client a slot before it arrives).
	MaxRedisElements = 100_000
)

// RedisReplyError is a Redis reply refused for its size or form.
type RedisReplyError struct{ Msg string }

func (e *RedisReplyError) Error() string { return e.Msg }

// limitedRedisDialer wraps dial so that every connection it opens is read
// through a respGuard.
func limitedRedisDialer(dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &respGuardConn{Conn: c}, nil
	}
}

type respGuardConn struct {
	net.Conn
	g   respGuard
	err error
}

// Read passes on only bytes the guard accepted: once a reply is refused the
// connection is dead (the client discards it on the error).
func (c *respGuardConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if gerr := c.g.feed(p[:n]); gerr != nil {
			c.err = gerr
			return 0, gerr
		}
	}
	return n, err
}

// respGuard follows a stream of RESP2/RESP3 replies byte by byte, just
// enough to know each header's announced length and where a reply ends.
type respGuard struct {
	line     []byte // the header line being read (type byte included)
	skip     int64  // payload bytes (and CRLF) of a string still to come
	stack    []int64
	bytes    int64 // of the current top-level reply
	elements int64
}

func (g *respGuard) feed(b []byte) error {
	for len(b) > 0 {
		if g.skip > 0 {
			n := min(int64(len(b)), g.skip)
			g.skip -= n
			b = b[n:]
			if g.skip == 0 {
				g.done()
			}
			continue
		}
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		t := b[0]
		if len(g.line) > 0 {
			t = g.line[0]
		}
		if limit := lineLimit(t); len(g.line)+i > limit {
			return &RedisReplyError{Msg: fmt.Sprintf("the server sent a reply line longer than %d bytes", limit)}
		}
		if i == len(b) {
			g.line = append(g.line, b...)
			g.bytes += int64(len(b))
			return g.checkBytes()
		}
		g.line = append(g.line, b[:i+1]...)
		g.bytes += int64(i + 1)
		b = b[i+1:]
		if err := g.checkBytes(); err != nil {
			return err
		}
		if err := g.header(); err != nil {
			return err
		}
		g.line = g.line[:0]
	}
	return nil
}

// lineLimit is the longest line of type t: a length fits in a few bytes, a
// simple value is bounded like a string.
func lineLimit(t byte) int {
	if simpleLine(t) {
		return MaxRedisValue
	}
	return 64
}

// simpleLine reports whether a line of type t carries its value in the line
// (a simple string, an error, a number) rather than a length.
func simpleLine(t byte) bool {
	switch t {
	case '+', '-', ':', ',', '(', '#', '_':
		return true
	}
	return false
}

func (g *respGuard) checkBytes() error {
	if g.bytes > MaxRedisReply {
		return &RedisReplyError{Msg: fmt.Sprintf("the server's reply is larger than %d bytes", MaxRedisReply)}
	}
	return nil
}

// header acts on one complete line: a simple value ends, a string's payload
// is skipped, an aggregate opens.
func (g *respGuard) header() error {
	l := g.line
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return &RedisReplyError{Msg: fmt.Sprintf("the server sent a malformed reply line %q", truncate(string(l), 40))}
	}
	t, arg := l[0], string(l[1:len(l)-2])
	if simpleLine(t) {
		g.done()
		return nil
	}
	n, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || n < -1 {
		return &RedisReplyError{Msg: fmt.Sprintf("the server sent a reply header %q hookreplay does not read", truncate(string(l[:len(l)-2]), 40))}
	}
	switch t {
	case '$', '=', '!': // bulk string, verbatim string, bulk error
		if n > MaxRedisValue {
			return &RedisReplyError{Msg: fmt.Sprintf("the server's reply announces a %d-byte value; a probe reads at most %d bytes (a count or a short value)", n, MaxRedisValue)}
		}
		if n < 0 {
			g.done()
			return nil
		}
		g.bytes += n + 2
		if err := g.checkBytes(); err != nil {
			return err
		}
		g.skip = n + 2
		return nil
	case '*', '~', '>', '%', '|': // array, set, push, map, attribute
		if t == '%' || t == '|' {
			if n > MaxRedisElements {
				n = MaxRedisElements + 1
			}
			n *= 2
		}
		if g.elements += max(n, 0); g.elements > MaxRedisElements {
			return &RedisReplyError{Msg: fmt.Sprintf("the server's reply announces more than %d elements; a probe reads at most that many", MaxRedisElements)}
		}
		if t == '|' && len(g.stack) > 0 {
			g.stack[len(g.stack)-1]++ // an attribute precedes the value it describes
		}
		if n <= 0 {
			g.done()
			return nil
		}
		g.stack = append(g.stack, n)
		return nil
	}
	return &RedisReplyError{Msg: fmt.Sprintf("the server sent a reply of unknown type %q", t)}
}

// done ends one value: it counts against its aggregate, which ends in turn
// when it is full; a top-level reply's end resets the bounds.
func (g *respGuard) done() {
	for len(g.stack) > 0 {
		top := len(g.stack) - 1
		if g.stack[top]--; g.stack[top] > 0 {
			return
		}
		g.stack = g.stack[:top]
	}
	g.bytes, g.elements = 0, 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
