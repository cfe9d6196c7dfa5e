package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Errors the recorder returns instead of reading on: a request's header
// section or body grew past its limit before net/http finished with it, or
// the bodies being read at once hold the whole budget.
var (
	errHeaderTooLarge = errors.New("request header too large")
	errTooManyFields  = errors.New("too many header fields")
	errBodyTooLarge   = errors.New("request body too large on the wire")
	errBodiesBudget   = errors.New("request bodies over budget")
)

// recorder sits between the connection and the bufio.Reader that parses
// requests. It keeps every byte read from the wire that has not yet been
// attributed to a request, so a request's exact bytes are the bytes consumed
// since the previous request ended: len(buf) minus what bufio still buffers.
type recorder struct {
	conn net.Conn
	buf  []byte
	// headerLimit, when > 0, bounds len(buf) while a header section is being
	// read (net/http's ReadRequest has no limit of its own).
	headerLimit int
	// lines and lineLen count the header section's lines as they arrive,
	// up to its empty line (headDone), while headerLimit is set: a
	// section of a million one-byte fields within the byte limit costs
	// net/http, and capture after it, ten times its size to parse.
	lines, lineLen int
	headDone       bool
	// bodyLimit, when > 0, bounds len(buf) while a body is being read: its
	// bytes on the wire, chunk framing and trailers included (net/http lets
	// chunk extensions make a body's wire bytes twenty times its data).
	bodyLimit int
	// budget is charged for every byte read while charging is set (held);
	// the request gives the charge back with release once its bytes are
	// let go.
	budget   *budget
	charging bool
	held     int64
	lane     bool // holds the budget's lane
	// err is the last error a read returned (the connection's, or one of
	// the refusals above): net/http reports a line cut by a timeout as a
	// malformed line.
	err error
}

func (r *recorder) Read(p []byte) (int, error) {
	// Each refusal is kept in err too: net/http reports a line it cut as
	// a malformed line, without the error that cut it.
	switch {
	case r.headerLimit > 0 && len(r.buf) > r.headerLimit:
		r.err = errHeaderTooLarge
		return 0, r.err
	case r.headerLimit > 0 && r.lines > maxHeaderFields+1:
		r.err = errTooManyFields
		return 0, r.err
	case r.bodyLimit > 0 && len(r.buf) > r.bodyLimit:
		r.err = errBodyTooLarge
		return 0, r.err
	}
	if r.charging {
		p = p[:min(len(p), budgetStep)]
		if !r.budget.take(int64(len(p)), &r.lane) {
			r.err = errBodiesBudget
			return 0, r.err
		}
	}
	n, err := r.conn.Read(p)
	if r.charging {
		r.budget.give(int64(len(p) - n))
		r.held += int64(n)
	}
	if err != nil {
		r.err = err
	}
	if r.headerLimit > 0 && !r.headDone {
		r.countLines(p[:n])
	}
	r.buf = append(r.buf, p[:n]...)
	return n, err
}

// cause returns what cut a read short when a read of the recorder's failed
// (a refusal above, a timeout), rather than err, net/http's reading of the
// line it cut ("malformed MIME header: missing colon"); err otherwise.
func (r *recorder) cause(err error) error {
	if err != nil && r.err != nil && !errors.Is(r.err, io.EOF) {
		return r.err
	}
	return err
}

// startHead begins counting a request's header lines with those of its
// bytes already read (buffered: the read-ahead a previous request left).
func (r *recorder) startHead(buffered int) {
	r.lines, r.lineLen, r.headDone = 0, 0, false
	r.countLines(r.buf[len(r.buf)-buffered:])
}

func (r *recorder) countLines(b []byte) {
	for _, c := range b {
		switch {
		case c == '\n' && r.lineLen == 0:
			r.headDone = true
			return
		case c == '\n':
			r.lines++
			r.lineLen = 0
		case c != '\r':
			r.lineLen++
		}
	}
}

// maxHeaderFields bounds the field lines of a request's header section
// (431 over it). Apache's default is 100, Node's 2000 (it drops the rest).
const maxHeaderFields = 1000

// release gives the budget back what the request's reads were charged.
func (r *recorder) release() {
	if r.held != 0 || r.lane {
		r.budget.leave(r.held, r.lane)
	}
	r.held, r.charging, r.lane = 0, false, false
}

// minBodyBudget is the least Server.bodies allows: room for a dozen bodies
// of the default --max-body at once (webhook bodies are mostly kilobytes).
// A larger --max-body gets twice its size, so one such body always fits.
const minBodyBudget = 128 << 20

// overBudget says why a body found no room in the budget.
func (s *Server) overBudget() string {
	return fmt.Sprintf("capture holds %s of request bodies at once, its limit; retry", FormatSize(s.bodies.max))
}

// wireBodyMax bounds a body's bytes on the wire, chunk framing and
// trailers included: twice --max-body, and room for a trailer section.
func (s *Server) wireBodyMax() int64 { return 2*s.opt.MaxBody + 64<<10 }

// budgetStep is the most a read is charged for ahead of knowing its size.
const budgetStep = 64 << 10

// budgetWait is how long a request waits for room in the body budget
// before it is answered 503 (budget.wait).
const budgetWait = 10 * time.Second

// budget bounds the bytes of request bodies capture holds at once, over all
// connections: --max-conns bodies of --max-body each would otherwise be
// gigabytes (250 senders of 10MiB took 5.9 GB). A body of known length
// takes its whole length before it is read, so every such body being read
// can be read to its end. A chunked one takes its bytes as they arrive;
// so that chunked bodies holding the whole budget between them cannot all
// wait for each other, one of them at a time may go past max by extra
// (its lane), and finish.
type budget struct {
	mu       sync.Mutex
	used     int64
	max      int64
	extra    int64
	laneUsed bool
	wait     time.Duration // how long take waits for room
	freed    chan struct{} // closed (and replaced) when bytes are given back
}

// take charges n bytes, waiting up to b.wait for room; false when there
// was none. lane, when not nil, says whether the caller holds the lane (it may
// be given it here); a caller holding it gives it back with leave.
func (b *budget) take(n int64, lane *bool) bool {
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		fits := b.used+n <= b.max
		if !fits && lane != nil && b.used+n <= b.max+b.extra && (*lane || !b.laneUsed) {
			fits, *lane, b.laneUsed = true, true, true
		}
		if fits {
			b.used += n
			b.mu.Unlock()
			return true
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		}
	}
}

// leave gives back n bytes and, with lane set, the lane.
func (b *budget) leave(n int64, lane bool) {
	b.mu.Lock()
	b.used -= n
	if lane {
		b.laneUsed = false
	}
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

func (b *budget) give(n int64) {
	if n != 0 {
		b.leave(n, false)
	}
}

// take removes and returns the first n recorded bytes (those consumed by the
// parser), keeping the read-ahead that belongs to the next request.
func (r *recorder) take(n int) []byte {
	if n <= 0 {
		return nil
	}
	if cap(r.buf) > 1<<20 {
		// A big body's buffer is handed over (a copy would hold the body
		// twice for a moment), keeping only the read-ahead of the next
		// request, and not pinned for the connection's life.
		out := r.buf[:n:n]
		r.buf = append([]byte(nil), r.buf[n:]...)
		return out
	}
	out := bytes.Clone(r.buf[:n])
	copy(r.buf, r.buf[n:])
	r.buf = r.buf[:len(r.buf)-n]
	return out
}

// checkHead parses a request's head (the bytes net/http consumed for it)
// again with message.ParseHead and returns why capture refuses it, or "":
// where RFC 9112 says to reject what net/http lets through (obsolete line
// folding, whitespace before a colon, Transfer-Encoding with Content-Length
// or in HTTP/1.0: the shapes of request smuggling; net/http picks chunked
// for TE+CL and reads "Content-Length : 5" as no body), an HTTP/1.1 request
// without exactly one valid Host (§3.2), and any disagreement on where the
// head ends. Capture must store what the sender meant, not a guess.
func checkHead(head []byte) string {
	h, err := message.ParseHead(head)
	switch {
	case err != nil:
		return err.Error()
	case h.Len != len(head):
		return "the header section ends where net/http does not end it"
	}
	if err := h.CheckHost(); err != nil {
		return err.Error()
	}
	return ""
}

// malformedWhy says why net/http refused a request: message.ParseHead's
// reason for the bytes received so far when it has one (a bounded, escaped
// quote of the line), else net/http's error clipped.
func malformedWhy(received []byte, err error) string {
	if _, perr := message.ParseHead(received); perr != nil && !errors.Is(perr, io.ErrUnexpectedEOF) {
		return perr.Error()
	}
	return clipWire(err.Error())
}

// clipWire bounds sender-controlled text in a log line or an answer.
func clipWire(s string) string {
	if len(s) <= 300 {
		return s
	}
	return s[:300] + fmt.Sprintf("... (%d bytes)", len(s))
}
