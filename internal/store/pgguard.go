package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// What a Postgres server's answers may hold (docs/reliability.md). pgx
// trusts the server: it allocates the length a message announces (up to
// 1 GiB, what Postgres itself can send) before a byte of it arrives, keeps
// reading a message that never ends, waits forever for an answer that
// never comes, and takes every notice sent. A store's connections are read
// through pgGuard, which follows the protocol's message headers and stops
// the connection with one line naming the server when an answer leaves
// these bounds.
const (
	// pgMaxMessage bounds a message other than a row or COPY data: an
	// error, a notice, a notification, a parameter. A real server's are
	// a few KiB (a notification's payload is at most 8000 bytes).
	pgMaxMessage = 1 << 20
	// pgMaxNotices bounds the notices one statement may draw (none of
	// hookreplay's statements raises any).
	pgMaxNotices = 1000
)

// pgAnswerTimeout bounds how long a statement's answer may keep the server
// silent: a server that has stopped answering (or a network that drops
// packets without closing the connection) otherwise holds a command
// forever. The watcher's connection, which waits for notifications, has
// none. A variable so that tests can shorten it.
var pgAnswerTimeout = 5 * time.Minute

// pgGuarded is pgx's AfterNetConnect (after TLS, before the protocol):
// it reads the connection through a pgGuard; answer bounds how long a read
// may wait (0: no bound).
func pgGuarded(where string, answer time.Duration) func(context.Context, *pgconn.Config, net.Conn) (net.Conn, error) {
	return func(_ context.Context, _ *pgconn.Config, c net.Conn) (net.Conn, error) {
		return &pgGuard{Conn: c, where: where, answer: answer}, nil
	}
}

// pgGuard is a connection to a Postgres server read through the
// protocol's message headers: type byte, then a 4-byte length that counts
// itself.
//
// It reads the connection through a buffer of its own and walks the
// headers in it, so that a read from the network brings as many messages
// as have arrived: reading each header by itself cost two reads a message,
// 20-40 a capture commit of 16 deliveries (about a third of capture's CPU
// for the commit, profiled). A body larger than the buffer is read
// straight into pgx's.
type pgGuard struct {
	net.Conn
	where  string
	answer time.Duration

	buf     []byte // read from the connection, not yet passed on: buf[r:w]
	r, w    int
	pending error // the read's error, returned once buf is passed on
	head    [5]byte
	inHead  int   // bytes of head seen so far
	left    int64 // body bytes of the current message still to pass
	notices int   // since the last ReadyForQuery
	err     error // once refused, every read fails

	mu       sync.Mutex
	deadline time.Time // the one pgx set (a cancelled context), zero when none
	ours     time.Time // this read's answer bound, zero when none
}

// pgGuardBuffer is the size of a pgGuard's buffer: what pgx itself reads
// at once.
const pgGuardBuffer = 8 << 10

func (g *pgGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if g.r == g.w {
		if g.pending != nil {
			err := g.pending
			g.pending = nil
			return 0, err
		}
		if g.left == 0 && g.inHead == 0 {
			// The server's next message: it must start within the answer
			// bound (a row's bytes flow once it has).
			g.arm()
		}
		if g.left >= int64(len(p)) && len(p) >= pgGuardBuffer {
			// The middle of a large row: straight into pgx's buffer.
			n, err := g.Conn.Read(p)
			g.left -= int64(n)
			return n, g.readErr(err)
		}
		if g.buf == nil {
			g.buf = make([]byte, pgGuardBuffer)
		}
		n, err := g.Conn.Read(g.buf)
		g.r, g.w = 0, n
		if err != nil {
			if n == 0 {
				return 0, g.readErr(err)
			}
			g.pending = g.readErr(err)
		}
	}
	out := 0
	for out < len(p) && g.r < g.w {
		if g.left > 0 {
			k := int(min(g.left, int64(g.w-g.r), int64(len(p)-out)))
			copy(p[out:], g.buf[g.r:g.r+k])
			out, g.r, g.left = out+k, g.r+k, g.left-int64(k)
			continue
		}
		g.head[g.inHead] = g.buf[g.r]
		p[out] = g.buf[g.r]
		out, g.r, g.inHead = out+1, g.r+1, g.inHead+1
		if g.inHead == len(g.head) {
			g.inHead = 0
			if rerr := g.check(g.head[0], int64(binary.BigEndian.Uint32(g.head[1:]))-4); rerr != nil {
				g.err = rerr
				return 0, rerr
			}
		}
	}
	return out, nil
}

// readErr is err as the guard reports it: the answer bound's own wording
// when that is what ended the read.
func (g *pgGuard) readErr(err error) error {
	if err != nil && g.silent() {
		g.err = &pgRefusal{msg: fmt.Sprintf("the Postgres server at %s sent nothing for %s in answer to a statement: it is not answering, or the network drops packets", g.where, g.answer)}
		return g.err
	}
	return err
}

// check judges a message header; length is the body's.
func (g *pgGuard) check(typ byte, length int64) error {
	what := map[byte]string{'E': "an error", 'N': "a notice", 'A': "a notification", 'S': "a parameter", 'T': "a row description"}[typ]
	switch {
	case typ == 'D' || typ == 'd':
		// A row or COPY data: pgx bounds them (1 GiB, what Postgres can
		// send), and hookreplay stores bodies as large as --max-body.
	case length > pgMaxMessage:
		if what == "" {
			what = fmt.Sprintf("a message of type %q", typ)
		}
		return &pgRefusal{msg: fmt.Sprintf("the Postgres server at %s sent %s of %d bytes; hookreplay reads at most %d (a real server's are a few KiB)", g.where, what, length, pgMaxMessage)}
	case typ == 'N':
		if g.notices++; g.notices > pgMaxNotices {
			return &pgRefusal{msg: fmt.Sprintf("the Postgres server at %s sent more than %d notices in answer to one statement; hookreplay's statements raise none", g.where, pgMaxNotices)}
		}
	case typ == 'Z':
		g.notices = 0
	}
	if length < 0 {
		length = 0 // pgx refuses it
	}
	g.left = length
	return nil
}

// arm sets this read's answer bound, keeping pgx's own deadline when it
// comes sooner.
func (g *pgGuard) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ours = time.Time{}
	if g.answer > 0 {
		g.ours = time.Now().Add(g.answer)
	}
	g.apply()
}

// silent reports whether the read failed on the answer bound rather than
// on pgx's deadline or the connection.
func (g *pgGuard) silent() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.ours.IsZero() && (g.deadline.IsZero() || g.ours.Before(g.deadline)) && !time.Now().Before(g.ours)
}

func (g *pgGuard) apply() {
	d := g.deadline
	if !g.ours.IsZero() && (d.IsZero() || g.ours.Before(d)) {
		d = g.ours
	}
	g.Conn.SetReadDeadline(d)
}

// SetDeadline and SetReadDeadline are pgx's (a context cancelled while a
// statement runs): the sooner of it and the answer bound applies.
func (g *pgGuard) SetDeadline(t time.Time) error {
	if err := g.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return g.SetReadDeadline(t)
}

func (g *pgGuard) SetReadDeadline(t time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deadline = t
	g.apply()
	return nil
}

var _ net.Conn = (*pgGuard)(nil)

// pgRefusal is a connection a pgGuard stopped, in one line. It says it is a
// timeout: pgx drops the first error a read returns in some paths (a
// result's first message) and then reports only "conn closed", except a
// timeout, which it reads again; the guard's reads keep failing with it,
// so that is the error pgx returns.
type pgRefusal struct{ msg string }

func (e *pgRefusal) Error() string   { return e.msg }
func (e *pgRefusal) Timeout() bool   { return true }
func (e *pgRefusal) Temporary() bool { return false }

var _ net.Error = (*pgRefusal)(nil)
