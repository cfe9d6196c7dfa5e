package capture

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"

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

// parseHeaders reads the ordered header list from a request's raw bytes
// (see message.ParseHeaderBlock, which the store also uses to read them back).
func parseHeaders(raw []byte) message.Headers { return message.ParseHeaderBlock(raw) }

// ambiguousFraming returns why a request's header section (its raw bytes up
// to the blank line) frames the body in a way servers disagree on — the
// shapes of request smuggling — or "" when it does not. net/http lets both
// through: with Transfer-Encoding and Content-Length it silently picks
// chunked (RFC 9112 §6.1 says a server must then at least close the
// connection), and a name with a space before the colon ("Content-Length :
// 5") is kept as an unknown header, so the body would be read as empty.
// Capture must store what the sender meant, not a guess, so both are refused.
//
// An HTTP/1.0 request with Transfer-Encoding is refused too: net/http ignores
// the header there and would store a chunked body as empty (RFC 9112 §6.1:
// such framing is faulty).
func ambiguousFraming(head []byte, http11 bool) string {
	hs := parseHeaders(head)
	if !http11 && hs.Has("Transfer-Encoding") {
		return "Transfer-Encoding in an HTTP/1.0 request: the body framing is faulty (RFC 9112 section 6.1)"
	}
	for _, h := range hs {
		if strings.ContainsAny(h.Name, " \t") {
			return fmt.Sprintf("whitespace between header name %q and its colon (RFC 9112 section 5.1)", strings.TrimRight(h.Name, " \t"))
		}
	}
	if hs.Has("Transfer-Encoding") && hs.Has("Content-Length") {
		return "both Transfer-Encoding and Content-Length: ambiguous body length (a request smuggling shape, RFC 9112 section 6.1)"
	}
	return ""
}
