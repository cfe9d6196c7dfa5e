package capture

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// forwardResult is what the handler answered, or what capture answers for it.
type forwardResult struct {
	status  int
	headers message.Headers
	body    []byte
	latency time.Duration
	err     string // recorded as the delivery's forward_error
	failed  bool
	// stream is the handler's answer body, still to be read (nil when
	// capture answers itself: failed, with body).
	stream *forwardStream

	// Set by readAnswer: the answer's first bytes, whether they are all of
	// it, why reading stopped short, and the stored-prefix budget taken.
	prefix   []byte
	whole    bool
	readErr  error
	reserved int64
}

// forwardStream is the body of a handler's answer: length is its
// Content-Length (-1 unknown); done must be called once the body was read
// (complete) or given up, and releases the handler connection.
type forwardStream struct {
	body   io.Reader
	length int64
	done   func(complete bool)
}

// ForwardURL is the URL capture forwards a request for target to, given
// --forward base: where the TUI under capture --tui replays it at once.
func ForwardURL(base *url.URL, target string) string { return forwardURL(base, target) }

// forwardURL appends the request target's path and query to the forward URL's
// path; a request to "/" goes to the forward URL's path as it is.
func forwardURL(base *url.URL, target string) string {
	path, query := target, ""
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		if u, err := url.Parse(target); err == nil {
			path, query = u.EscapedPath(), u.RawQuery
		}
	} else if target == "*" || !strings.HasPrefix(target, "/") {
		// No path: asterisk-form (OPTIONS *) or authority-form (CONNECT
		// host:port, which was appended to the forward URL's path as it was).
		path = ""
	} else {
		path, query, _ = strings.Cut(target, "?")
	}
	p := strings.TrimSuffix(base.EscapedPath(), "/") + path
	if (path == "/" || path == "") && base.EscapedPath() != "" {
		// A request to capture's root goes to the forward URL's own path
		// (stripe listen --forward-to localhost:9000 with --forward
		// http://localhost:3000/webhooks/stripe), not to ".../stripe/".
		p = base.EscapedPath()
	}
	if p == "" {
		p = "/"
	}
	q := base.RawQuery
	if query != "" {
		if q != "" {
			q += "&"
		}
		q += query
	}
	out := base.Scheme + "://" + base.Host + p
	if q != "" {
		out += "?" + q
	}
	return out
}

// forwardTarget is the origin-form request target forwardURL points at.
func forwardTarget(base *url.URL, target string) string {
	u := forwardURL(base, target)
	rest := strings.TrimPrefix(u, base.Scheme+"://"+base.Host)
	if rest == "" || rest[0] != '/' {
		rest = "/" + rest
	}
	return rest
}

// forwardRequest is the request the handler gets: the stored headers in
// their order and case, minus hop-by-hop ones (and those the sender's
// Connection header lists), Expect (the body is complete already) and the
// framing headers (Encode writes a Content-Length for the decoded body);
// X-Forwarded-Host, -For and -Proto describe the sender's request.
func forwardRequest(d *store.Delivery) *message.Request {
	listed := map[string]bool{}
	for _, v := range d.Headers.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			listed[strings.ToLower(strings.TrimSpace(tok))] = true
		}
	}
	origHost := ""
	hs := make(message.Headers, 0, len(d.Headers)+3)
	for _, h := range d.Headers {
		switch {
		case strings.EqualFold(h.Name, "Host"):
			if origHost == "" {
				origHost = h.Value
				hs = append(hs, h) // Encode puts the handler's host in its place
			}
			continue
		case strings.EqualFold(h.Name, "Content-Length"), strings.EqualFold(h.Name, "Expect"),
			message.IsHopByHop(h.Name), listed[strings.ToLower(h.Name)]:
			continue
		}
		hs = append(hs, h)
	}
	if origHost != "" && !hs.Has("X-Forwarded-Host") {
		hs = append(hs, message.Header{Name: "X-Forwarded-Host", Value: origHost})
	}
	if ip, _, err := net.SplitHostPort(d.RemoteAddr); err == nil && ip != "" {
		// A proxy appends its client to the chain (the last X-Forwarded-For line).
		last := -1
		for i, h := range hs {
			if strings.EqualFold(h.Name, "X-Forwarded-For") {
				last = i
			}
		}
		if last >= 0 && strings.TrimSpace(hs[last].Value) != "" {
			hs[last].Value += ", " + ip
		} else if last >= 0 {
			hs[last].Value = ip
		} else {
			hs = append(hs, message.Header{Name: "X-Forwarded-For", Value: ip})
		}
	}
	if !hs.Has("X-Forwarded-Proto") {
		hs = append(hs, message.Header{Name: "X-Forwarded-Proto", Value: "http"})
	}
	return &message.Request{Method: d.Method, Target: d.Target, Proto: "HTTP/1.1", Headers: hs, Body: d.Body}
}

// failBody is capture's answer when the handler could not answer: the
// delivery's id and why.
func failBody(id int64, msg string) []byte {
	body, _ := json.Marshal(map[string]any{"id": id, "error": msg})
	return append(body, '\n')
}

// forward sends delivery d to the handler over a connection of its own, as
// the bytes of message.Request.Encode: same method, the target appended to
// the forward URL, the headers of forwardRequest in the sender's order and
// case (net/http would reorder and canonicalise them), Host the handler's,
// the decoded body with its Content-Length. The handler's answer is read
// with its headers in wire order and case.
func (s *Server) forward(d *store.Delivery) forwardResult {
	ctx, cancel := context.WithTimeout(s.base, s.opt.ForwardTimeout)
	fail := func(status int, msg string, start time.Time) forwardResult {
		return forwardResult{status: status, err: msg, failed: true, latency: time.Since(start),
			headers: message.Headers{{Name: "Content-Type", Value: "application/json"}}, body: failBody(d.ID, msg)}
	}
	start := time.Now()
	why := func(stage string, err error) forwardResult {
		var ne net.Error
		switch {
		case errors.Is(s.base.Err(), context.Canceled):
			return fail(http.StatusServiceUnavailable, "capture stopped before the handler answered", start)
		case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
			errors.As(err, &ne) && ne.Timeout():
			return fail(http.StatusGatewayTimeout, fmt.Sprintf("handler did not answer within %s", s.opt.ForwardTimeout), start)
		}
		return fail(http.StatusBadGateway, fmt.Sprintf("%s: %v", stage, err), start)
	}
	wire := forwardRequest(d).Encode(s.fwd.Host, forwardTarget(s.fwd, d.Target))
	var err error

	addr := s.fwd.Host
	if s.fwd.Port() == "" {
		port := "80"
		if s.fwd.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(s.fwd.Hostname(), port)
	}
	c := s.idle.get()
	if c == nil {
		dl := (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second})
		if c, err = dl.DialContext(ctx, "tcp", addr); err != nil {
			r := why("handler unreachable", err)
			cancel()
			return r
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	// Cancelling ctx (timeout, or capture stopping) interrupts any I/O.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	failed := func(r forwardResult) forwardResult {
		stop()
		c.Close()
		cancel()
		return r
	}
	if s.fwd.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: s.fwd.Hostname(), NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			return failed(why("handler unreachable: tls handshake", err))
		}
		c = tc
	}
	_, werr := c.Write(wire)
	// A handler may answer (401, 413) and close before reading the whole
	// body; its answer is still what the sender should get.
	lr := &lastErr{r: c}
	rec := &message.HeadRecorder{R: lr}
	br := answerReaders.Get().(*bufio.Reader)
	br.Reset(rec)
	var resp *http.Response
	heads := 0
	for {
		resp, err = http.ReadResponse(br, &http.Request{Method: d.Method})
		if err != nil {
			putAnswerReader(br)
			if werr != nil {
				return failed(why("handler unreachable: write request", werr))
			}
			if errors.Is(lr.err, io.EOF) {
				// net/http reads a head cut by a hang-up as a malformed line
				// ("malformed MIME header: missing colon").
				err = errors.New("connection closed before a complete answer")
			}
			return failed(why("read handler response", err))
		}
		heads++
		if resp.StatusCode < 100 || resp.StatusCode == http.StatusSwitchingProtocols {
			// Capture never forwards an Upgrade (it is hop-by-hop), so a 101
			// is a handler speaking out of turn, and there is no protocol to
			// relay after it; a status below 100 is no HTTP status at all.
			putAnswerReader(br)
			return failed(fail(http.StatusBadGateway, fmt.Sprintf("handler answered status %03d, which is not an answer to this request", resp.StatusCode), start))
		}
		if resp.StatusCode >= 200 {
			break
		}
		resp.Body.Close() // 1xx: the final answer follows
	}
	hs := rec.ResponseHeaders(heads)
	rec.Stop()
	// The body is not read here: relay streams it to the sender, so that a
	// large answer never sits in memory whole.
	done := func(complete bool) {
		if !complete {
			// Closing a body not read to its end reads the rest of it first:
			// an endless answer until ForwardTimeout, after the sender is gone.
			c.Close()
		}
		resp.Body.Close()
		clean := br.Buffered() == 0
		putAnswerReader(br)
		// Plain HTTP connections that ended cleanly are kept for the next
		// forward (a new connection per delivery cost a third of the throughput).
		if complete && s.fwd.Scheme == "http" && werr == nil && !resp.Close && clean && ctx.Err() == nil && stop() {
			c.SetDeadline(time.Time{})
			if s.idle.put(c) {
				cancel()
				return
			}
		}
		failed(forwardResult{})
	}
	return forwardResult{status: resp.StatusCode, headers: hs, latency: time.Since(start),
		stream: &forwardStream{body: resp.Body, length: resp.ContentLength, done: done}}
}

// lastErr passes reads through and keeps the last error the connection returned.
type lastErr struct {
	r   io.Reader
	err error
}

func (l *lastErr) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if err != nil {
		l.err = err
	}
	return n, err
}

// answerReaders reuses the buffered readers handlers' answers are read
// through (one per forward otherwise: a 4 KiB allocation per delivery).
var answerReaders = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

// copyBuffers are the buffers a body is hashed through (serveRequest):
// io.Copy into a hash allocated and cleared 32 KiB a delivery, 5% of
// capture's CPU at 6,000 deliveries a second (profiled).
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func putAnswerReader(br *bufio.Reader) {
	br.Reset(nil)
	answerReaders.Put(br)
}

// idleMax is how long a kept-alive handler connection may wait for reuse;
// shorter than the common server idle timeouts (Node's 5 s), so a
// connection is rarely closed by the handler just as it is reused.
const idleMax = 2 * time.Second

// idlePool keeps idle connections to the handler, newest first. A
// connection the handler closed (or wrote to unasked) while it waited is
// found out before reuse: by a non-blocking peek where the platform has one
// (idle_unix.go), else by a watcher goroutine reading from it (idle_other.go).
type idlePool struct {
	mu    sync.Mutex
	conns []*idleConn
	shut  bool
}

type idleConn struct {
	c     net.Conn
	since time.Time
	done  chan error // the watcher's read result, where there is a watcher
}

// put keeps c for reuse; false when the pool is full or shut.
func (p *idlePool) put(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shut || len(p.conns) >= 64 {
		return false
	}
	ic := &idleConn{c: c, since: time.Now()}
	watch(ic)
	p.conns = append(p.conns, ic)
	return true
}

// get returns a live idle connection, or nil.
func (p *idlePool) get() net.Conn {
	for {
		p.mu.Lock()
		if len(p.conns) == 0 {
			p.mu.Unlock()
			return nil
		}
		ic := p.conns[len(p.conns)-1]
		p.conns = p.conns[:len(p.conns)-1]
		p.mu.Unlock()
		if reusable(ic) && time.Since(ic.since) < idleMax {
			return ic.c
		}
		ic.c.Close()
	}
}

// closeAll closes the idle connections and keeps no more.
func (p *idlePool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shut = true
	for _, ic := range p.conns {
		ic.c.Close()
	}
	p.conns = nil
}
