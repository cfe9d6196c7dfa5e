package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/hookreplay/hookreplay/internal/message"
)

// errHeaderTooLarge is returned by the recorder when a request's header
// section grows past the limit before http.ReadRequest has finished with it.
var errHeaderTooLarge = errors.New("request header too large")

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
}

func (r *recorder) Read(p []byte) (int, error) {
	if r.headerLimit > 0 && len(r.buf) > r.headerLimit {
		return 0, errHeaderTooLarge
	}
	n, err := r.conn.Read(p)
	r.buf = append(r.buf, p[:n]...)
	return n, err
}

// take removes and returns the first n recorded bytes (those consumed by the
// parser), keeping the read-ahead that belongs to the next request.
func (r *recorder) take(n int) []byte {
	if n <= 0 {
		return nil
	}
	out := bytes.Clone(r.buf[:n])
	rest := len(r.buf) - n
	if cap(r.buf) > 1<<20 {
		// Let a big body's buffer go instead of pinning it for the connection's life.
		r.buf = append([]byte(nil), r.buf[n:]...)
	} else {
		copy(r.buf, r.buf[n:])
		r.buf = r.buf[:rest]
	}
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
