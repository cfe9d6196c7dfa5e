package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// connSeq numbers connections; ConnID is unique within the process.
var connSeq atomic.Int64

// wire is one encoded request and its method (needed to read the answer).
type wire struct {
	b      []byte
	method string
	lose   bool // this copy's answer is deliberately lost (on top of SendOptions.Lose)
}

func wireFor(t Target, req *message.Request, opt SendOptions) wire {
	if opt.Raw != nil {
		return wire{b: opt.Raw, method: methodOf(opt.Raw)}
	}
	host := t.Host
	if host == "" && t.URL != nil {
		host = t.URL.Host
	}
	return wire{b: req.Encode(host, RequestTarget(t.URL, req.Target)), method: req.Method}
}

// RequestTarget is the request-target a rebuilt copy is sent to. When the
// --to URL has no path (http://localhost:3000), the stored delivery's own
// path and query are kept, so a capture of /hooks/stripe?x=1 replays to
// /hooks/stripe?x=1 on the new host. When it has a path (even "/"), that path
// is used, with the --to query when it has one, else the stored query.
//
// A stored absolute-form target (http://host/path?q, sent to capture used as
// a proxy) is reduced to its path and query first: sent on as it was, the
// server would take the host from it and ignore the rewritten Host header.
func RequestTarget(u *url.URL, stored string) string {
	stored = originForm(stored)
	if stored == "" {
		stored = "/"
	}
	if u == nil || u.EscapedPath() == "" {
		if u != nil && u.RawQuery != "" {
			p, _, _ := strings.Cut(stored, "?")
			return p + "?" + u.RawQuery
		}
		return stored
	}
	t := u.EscapedPath()
	if u.RawQuery != "" {
		return t + "?" + u.RawQuery
	}
	if _, q, ok := strings.Cut(stored, "?"); ok {
		return t + "?" + q
	}
	return t
}

// originForm returns an absolute-form request-target as path?query ("/"
// when the URL has no path); any other target is returned unchanged.
func originForm(target string) string {
	if len(target) < 8 || !(strings.EqualFold(target[:7], "http://") || strings.EqualFold(target[:8], "https://")) {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// FullURL is the URL a copy of stored target is sent to (scheme, host and
// RequestTarget): what a provider that signs the URL (Twilio) was configured with.
func FullURL(u *url.URL, stored string) string {
	if u == nil {
		return stored
	}
	return u.Scheme + "://" + u.Host + RequestTarget(u, stored)
}

// RawFor returns raw (stored wire bytes) ready to send to host: when its Host
// header differs from host, only that header's value is replaced; every other
// byte is kept. The second result reports whether anything changed.
func RawFor(raw []byte, host string) ([]byte, bool) {
	// The header section ends at the first empty line; lines end in CRLF or,
	// as capture also accepts, a bare LF.
	end := -1 // just past the last header line's LF
	if k := bytes.Index(raw, []byte("\r\n\r\n")); k >= 0 {
		end = k + 2
	}
	if k := bytes.Index(raw, []byte("\n\n")); k >= 0 && (end < 0 || k+1 < end) {
		end = k + 1
	}
	if end < 0 {
		return raw, false
	}
	head := raw[:end]
	lineEnd := bytes.IndexByte(head, '\n')
	if lineEnd < 0 {
		return raw, false
	}
	i := lineEnd + 1
	for i < len(head) {
		j := bytes.IndexByte(head[i:], '\n')
		if j < 0 {
			break
		}
		line := bytes.TrimSuffix(head[i:i+j], []byte("\r"))
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(name), "Host") {
			v := bytes.TrimLeft(value, " \t")
			vStart := i + len(name) + 1 + (len(value) - len(v))
			v = bytes.TrimRight(v, " \t")
			if string(v) == host {
				return raw, false
			}
			out := make([]byte, 0, len(raw)+len(host))
			out = append(out, raw[:vStart]...)
			out = append(out, host...)
			out = append(out, raw[vStart+len(v):]...)
			return out, true
		}
		i += j + 1
	}
	return raw, false
}

// methodOf reads the method from a request line ("POST /x HTTP/1.1").
func methodOf(raw []byte) string {
	m, _, ok := bytes.Cut(raw, []byte(" "))
	if !ok || len(m) == 0 || len(m) > 16 {
		return "POST"
	}
	return string(m)
}

// exchange is one copy on its own connection. Timing is taken around our own
// writes so SentAt/CompletedAt are exactly the first and last request byte.
type exchange struct {
	t        Target
	w        wire
	opt      SendOptions
	a        store.Attempt
	conn     net.Conn
	deadline time.Time
	stop     func() bool
	cr       *connErr // the answer's reads, counted (finish)

	// keep, when set, lends a kept-alive connection to this copy and takes it
	// back when the answer leaves it reusable.
	keep     *keeper
	reused   bool // conn came from keep
	reusable bool // the whole answer was read and the handler keeps the connection open
}

// keeper holds one worker's kept-alive connection between its copies, as a
// provider's HTTP client does: copies sent one after another need not pay a
// TCP (and TLS) handshake each. A burst never uses one: its copies must race
// on fresh connections.
type keeper struct {
	c  net.Conn
	id int64
}

// take returns the kept connection if it is still open (the handler may
// have closed it while idle: reading it then reports EOF at once), else nil.
func (k *keeper) take() (net.Conn, int64) {
	if k == nil || k.c == nil {
		return nil, 0
	}
	c, id := k.c, k.id
	k.c = nil
	c.SetReadDeadline(time.Now())
	var one [1]byte
	if n, err := c.Read(one[:]); n > 0 || !isTimeout(err) {
		c.Close() // closed, or it sent something unasked: not ours to read
		return nil, 0
	}
	return c, id
}

func (k *keeper) close() {
	if k != nil && k.c != nil {
		k.c.Close()
		k.c = nil
	}
}

func newExchange(t Target, w wire, opt SendOptions) *exchange {
	if t.Timeout <= 0 {
		t.Timeout = DefaultTimeout
	}
	if opt.MaxBody <= 0 {
		opt.MaxBody = DefaultMaxBody
	}
	opt.Lose = opt.Lose || w.lose
	return &exchange{t: t, w: w, opt: opt, a: store.Attempt{Lost: opt.Lose}}
}

func (x *exchange) fail(stage string, err error) bool {
	x.a.Err = describe(stage, err, x.t.Timeout)
	return false
}

func (x *exchange) open(ctx context.Context) bool {
	if x.t.URL == nil || x.t.URL.Host == "" {
		return x.fail("connect", errors.New("no target URL"))
	}
	if err := ctx.Err(); err != nil {
		return x.fail("connect", err)
	}
	x.deadline = time.Now().Add(x.t.Timeout)
	if !x.opt.Lose {
		if c, id := x.keep.take(); c != nil {
			c.SetDeadline(x.deadline)
			x.conn, x.reused, x.a.ConnID = c, true, id
			x.stop = context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
			return true
		}
	}
	u := x.t.URL
	d := net.Dialer{Deadline: x.deadline}
	c, err := d.DialContext(ctx, "tcp", DialAddr(u))
	if err != nil {
		return x.fail("connect", ctxErr(ctx, err))
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if x.t.TLS != nil {
			cfg = x.t.TLS.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"} // we speak HTTP/1.1 on the wire
		tc := tls.Client(c, cfg)
		tc.SetDeadline(x.deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return x.fail("tls handshake", err)
		}
		c = tc
	}
	c.SetDeadline(x.deadline)
	x.conn = c
	// Cancelling ctx interrupts whatever I/O is under way.
	x.stop = context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	x.a.ConnID = connSeq.Add(1)
	return true
}

// write sends the whole request in one write (Send).
func (x *exchange) write(ctx context.Context) bool {
	x.a.SentAt = time.Now()
	if _, err := x.conn.Write(x.w.b); err != nil {
		x.fail("write request", ctxErr(ctx, err))
		x.readEarly(ctx)
		return false
	}
	x.a.CompletedAt = time.Now()
	if x.opt.Written != nil {
		x.opt.Written(x.a.CompletedAt)
	}
	return true
}

// writeHead sends all but the final byte (burst preparation).
func (x *exchange) writeHead(ctx context.Context) bool {
	if len(x.w.b) == 0 {
		return x.fail("write request", errors.New("empty request"))
	}
	x.a.SentAt = time.Now()
	if len(x.w.b) > 1 {
		if _, err := x.conn.Write(x.w.b[:len(x.w.b)-1]); err != nil {
			x.fail("write request", ctxErr(ctx, err))
			x.readEarly(ctx)
			return false
		}
	}
	return true
}

// writeLast sends the final byte and records when the request was complete.
func (x *exchange) writeLast() bool {
	if _, err := x.conn.Write(x.w.b[len(x.w.b)-1:]); err != nil {
		return x.fail("write request", err)
	}
	x.a.CompletedAt = time.Now()
	return true
}

// readEarly runs after a failed write: a handler may answer from the headers
// alone (401 from auth middleware, 413 from a body limit) and close the
// connection unread, which resets our write. That answer is what the handler
// said and what a provider's HTTP client reports (net/http does), so when it
// can be read it is recorded, with detail answered_early, instead of the
// write error.
func (x *exchange) readEarly(ctx context.Context) {
	if ctx.Err() != nil || x.conn == nil || x.opt.Lose {
		return
	}
	dl := time.Now().Add(time.Second)
	if dl.After(x.deadline) {
		dl = x.deadline
	}
	x.conn.SetReadDeadline(dl)
	writeErr := x.a.Err
	x.a.Err = ""
	x.finish(ctx)
	if x.a.Status == 0 {
		x.a.Err = writeErr
		return
	}
	x.a.Latency = time.Since(x.a.SentAt)
	x.detail("answered_early", "the handler answered before the request was completely sent ("+writeErr+")")
}

// finish reads the answer (or deliberately loses it).
func (x *exchange) finish(ctx context.Context) {
	if x.opt.Lose {
		if !x.opt.LoseEarly {
			// Wait until the answer reaches our socket, then hang up unread.
			var one [1]byte
			if _, err := x.conn.Read(one[:]); err == nil {
				x.a.Latency = time.Since(x.a.CompletedAt)
			}
		}
		return
	}
	cr := &connErr{r: x.conn}
	x.cr = cr
	rec := &message.HeadRecorder{R: cr}
	br := bufio.NewReader(rec)
	var resp *http.Response
	var err error
	blocks := 0
	for {
		resp, err = http.ReadResponse(br, &http.Request{Method: x.w.method})
		if err != nil {
			// bufio hands net/http a line cut short by a timeout or a hang-up
			// without the error that cut it ("malformed MIME header: missing
			// colon"); what the connection said is the reason.
			switch {
			case isTimeout(cr.err):
				err = cr.err
			case errors.Is(cr.err, io.EOF):
				err = io.ErrUnexpectedEOF
			}
			x.fail("read response", ctxErr(ctx, err))
			return
		}
		blocks++
		if resp.StatusCode < 100 {
			x.fail("read response", fmt.Errorf("the handler answered status %03d, which is no HTTP status", resp.StatusCode))
			return
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		resp.Body.Close() // 1xx: the final answer follows
	}
	x.a.Latency = time.Since(x.a.CompletedAt)
	x.a.Status = resp.StatusCode
	x.a.ResponseHeaders = rec.ResponseHeaders(blocks)
	rec.Stop()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(x.opt.MaxBody)+1))
	truncated := len(body) > x.opt.MaxBody
	if truncated {
		body = body[:x.opt.MaxBody]
		x.detail("body_truncated", true)
	} else if err != nil {
		x.detail("body_error", describe("read response body", ctxErr(ctx, err), x.t.Timeout))
	} else {
		x.reusable = !x.a.CompletedAt.IsZero() && !resp.Close && resp.ProtoAtLeast(1, 1) && br.Buffered() == 0 &&
			resp.StatusCode != http.StatusSwitchingProtocols
	}
	if !truncated {
		// Closing a body net/http has not read to its end reads the rest:
		// an endless answer until the deadline. A truncated answer's
		// connection is closed unread instead (it is never kept).
		resp.Body.Close()
	}
	x.a.ResponseBody = body
}

// staleKept reports a kept-alive connection the handler had closed before
// reading this copy (nothing of an answer came back): the copy goes again on
// a fresh connection, as net/http retries a request on a closed idle one.
func (x *exchange) staleKept() bool {
	return x.reused && x.a.Status == 0 && (x.cr == nil || x.cr.n == 0) && !x.opt.Lose
}

// connErr passes reads through and keeps the last error the connection returned.
type connErr struct {
	r   io.Reader
	err error
	n   int64
}

func (c *connErr) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

func (x *exchange) detail(k string, v any) {
	if x.a.Detail == nil {
		x.a.Detail = map[string]any{}
	}
	x.a.Detail[k] = v
}

func (x *exchange) close() {
	if x.stop != nil {
		x.stop()
	}
	if x.conn == nil {
		return
	}
	if x.keep != nil && x.reusable && !x.opt.Lose {
		x.conn.SetDeadline(time.Time{})
		x.keep.close()
		x.keep.c, x.keep.id = x.conn, x.a.ConnID
		return
	}
	x.conn.Close()
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", context.Canceled, ctx.Err())
	}
	return err
}

// describe turns a network error into one short line.
func describe(stage string, err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !isTimeout(err):
		return stage + ": cancelled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return stage + ": connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return stage + ": connection reset by peer"
	case errors.Is(err, syscall.EPIPE):
		return stage + ": connection closed by peer (broken pipe)"
	case (errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) && stage == "read response":
		return fmt.Sprintf("%s: timeout: the handler did not answer within %s", stage, timeout)
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("%s: timeout after %s", stage, timeout)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return stage + ": connection closed before a complete answer"
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return fmt.Sprintf("%s: %v (a self-signed handler? --insecure accepts any certificate)", stage, certErr.Err)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Sprintf("%s: cannot resolve %s", stage, dnsErr.Name)
	}
	return fmt.Sprintf("%s: %v", stage, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// DialAddr is the host:port a connection to u is opened to: u's port, else
// 443 for https and 80 otherwise. It serves the engine's connections and
// check's and keycheck's is-it-listening dials.
func DialAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
