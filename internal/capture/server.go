// Package capture owns hookreplay's listener: an HTTP/1.1 server that keeps
// the exact wire bytes of every request, commits each delivery to the store
// before answering, and forwards to the real handler when asked.
//
// It deliberately does not use net/http.Server: that server hides the bytes a
// request arrived as. Here each connection is read through a recorder that sits
// below the bufio.Reader http.ReadRequest parses from, so a request's bytes are
// exactly what was consumed from the connection for it — request line, headers
// in their original order, case and spacing, and the body framing as sent
// (chunked stays chunked, with its trailers) — even when requests are pipelined.
package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxBody        = 10 << 20
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultReadTimeout    = 60 * time.Second
	DefaultIdleTimeout    = 120 * time.Second
	DefaultWriteTimeout   = 30 * time.Second
	DefaultForwardTimeout = 60 * time.Second
	DefaultMaxHeaderBytes = 1 << 20
	DefaultDrainTimeout   = 15 * time.Second
)

// Options configure a capture Server.
type Options struct {
	// Forward is the handler URL requests are forwarded to; empty means capture
	// answers Status itself with {"id":N}.
	Forward string
	// Status is the answer without Forward (default 200).
	Status int
	// MaxBody bounds the decoded body; larger requests get 413 and are not stored.
	MaxBody int64
	// Source is stored on every delivery (e.g. "stripe-test").
	Source string
	// Secret, when set, is used to verify each delivery's signature. It is
	// never stored or printed; only the one-line result is.
	Secret string

	// HeaderTimeout bounds reading a request's headers once its first byte arrived.
	HeaderTimeout time.Duration
	// ReadTimeout bounds reading a request's body.
	ReadTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a kept-alive connection.
	IdleTimeout time.Duration
	// WriteTimeout bounds writing a response.
	WriteTimeout time.Duration
	// ForwardTimeout bounds the handler's answer (504 after it).
	ForwardTimeout time.Duration
	// MaxHeaderBytes bounds a request's header section (431 over it).
	MaxHeaderBytes int
	// DrainTimeout bounds how long shutdown waits for requests in flight
	// before it cuts their connections (and cancels their forwards).
	DrainTimeout time.Duration
	// MaxConns bounds the connections served at once (DefaultMaxConns when
	// zero); see conns.go.
	MaxConns int

	// Retain, when set, prunes the store's deliveries received longer ago
	// than it while serving: at start, then every RetainEvery (default a
	// tenth of Retain, at most an hour). At least MinRetain.
	Retain      time.Duration
	RetainEvery time.Duration

	// Observer hears of every stored delivery and every problem (and, when
	// it is a PruneObserver, of what retention removed); nil keeps the
	// server quiet.
	Observer Observer
}

// Observer hears what a capture server does, for a live view (the CLI's
// lines, the TUI). Calls are serialised, one at a time; the delivery has
// already been answered, but a slow observer holds up the next call.
type Observer interface {
	// Delivered: d was stored and answered. latency is the handler's when
	// forwarding, else the time capture took to commit d.
	Delivered(d *store.Delivery, latency time.Duration)
	// Problem: something capture could not do or had to cut short (a
	// rejected request, an accept error, connections cut at shutdown), one
	// line in hookreplay's words.
	Problem(msg string)
}

// Server captures deliveries into a store.
type Server struct {
	opt Options
	st  *store.Store
	fwd *url.URL

	// commits feeds the committer, which stores waiting deliveries in one
	// transaction: one fsync for many concurrent deliveries (group commit).
	commits chan commitReq
	// responses also feeds the committer: handlers' answers recorded after
	// their delivery's row (relay.go).
	responses chan store.Response
	// w is the committer's connection to the store.
	w     *store.Writer
	outMu sync.Mutex // serialises Observer calls

	// base is the parent of every forward; abort cancels it when a drain
	// outlasts DrainTimeout.
	base  context.Context
	abort context.CancelFunc
	// idle holds kept-alive connections to the --forward handler.
	idle idlePool

	closing atomic.Bool
	mu      sync.Mutex
	conns   map[*conn]struct{}
	nconns  atomic.Int64 // len(conns), read without mu
	wg      sync.WaitGroup
	// lingering counts 503 answers being drained; lastOverCap (unix ns)
	// rate-limits their log line.
	lingering   atomic.Int64
	lastOverCap atomic.Int64
	// busy counts requests being served, from their first byte to their
	// answer: the committer's sign that more deliveries are coming.
	busy atomic.Int64
	// prefixUsed is the stored-answer budget in use (relay.go).
	prefixUsed atomic.Int64
	// bodies bounds the request bytes held at once while bodies are read
	// and until their requests are answered (wire.go).
	bodies budget
	// bodySeed keys the hash that compares net/http's reading of a body
	// with message.Parse's (random per process: not forgeable).
	bodySeed maphash.Seed
}

type commitReq struct {
	d    *store.Delivery
	slot *answerSlot // nil unless forwarding
	done chan error
}

// size is what r's delivery holds in memory: the transaction carries a
// copy of it to the store (pgx's buffer, on Postgres).
func (r commitReq) size() int64 { return int64(len(r.d.Raw) + len(r.d.Body)) }

// maxBatch and maxBatchBytes bound a group commit: a transaction takes at
// most 128 deliveries, and no more once they hold 4 MiB (a delivery larger
// than that commits alone), so the copy a transaction makes of its rows
// stays near 4 MiB plus one --max-body whatever the load
// (docs/reliability.md).
const (
	maxBatch      = 128
	maxBatchBytes = 4 << 20
)

type conn struct {
	nc        net.Conn
	mu        sync.Mutex
	idle      bool
	idleSince time.Time
	evicted   bool // asked to close to make room under MaxConns
}

// New returns a server that stores into st. It validates opt.
func New(st *store.Store, opt Options) (*Server, error) {
	if opt.Status == 0 {
		opt.Status = 200
	}
	if opt.Status < 200 || opt.Status > 599 {
		return nil, fmt.Errorf("status %d is not a final HTTP status (200-599)", opt.Status)
	}
	if opt.MaxBody == 0 {
		opt.MaxBody = DefaultMaxBody
	}
	if opt.MaxBody < 0 {
		return nil, fmt.Errorf("max body %d is negative", opt.MaxBody)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opt.HeaderTimeout, DefaultHeaderTimeout)
	def(&opt.ReadTimeout, DefaultReadTimeout)
	def(&opt.IdleTimeout, DefaultIdleTimeout)
	def(&opt.WriteTimeout, DefaultWriteTimeout)
	def(&opt.ForwardTimeout, DefaultForwardTimeout)
	def(&opt.DrainTimeout, DefaultDrainTimeout)
	if opt.MaxHeaderBytes <= 0 {
		opt.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if opt.MaxConns <= 0 {
		opt.MaxConns = DefaultMaxConns()
	}
	if err := checkRetain(opt.Retain); err != nil {
		return nil, err
	}
	s := &Server{opt: opt, st: st, conns: map[*conn]struct{}{}, commits: make(chan commitReq, maxBatch),
		responses: make(chan store.Response, 1024)}
	s.base, s.abort = context.WithCancel(context.Background())
	s.bodies.max = max(minBodyBudget, 2*opt.MaxBody+1<<20)
	s.bodies.extra = s.wireBodyMax() + 2*budgetStep
	s.bodies.wait = budgetWait
	s.bodySeed = maphash.MakeSeed()
	if opt.Forward != "" {
		u, err := ParseForwardURL(opt.Forward)
		if err != nil {
			return nil, err
		}
		s.fwd = u
	}
	return s, nil
}

// ParseForwardURL checks that raw is an absolute http(s) URL usable as --forward.
func ParseForwardURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("forward URL %q must be absolute, like http://localhost:3000/webhooks", raw)
	}
	return u, nil
}

// Listen opens a TCP listener on addr with a one-line error when it cannot.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			// %w: the command line tells a port in use (EADDRINUSE) apart.
			return nil, fmt.Errorf("listen on %s: %w", addr, op.Err)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// IsLoopback reports whether a listen address only accepts local connections.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Serve accepts connections on ln until ctx is cancelled, then stops
// accepting, closes idle connections, lets requests in flight finish (each is
// committed and answered) and returns. The caller closes the store afterwards.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	w, err := s.st.NewWriter(context.Background())
	if err != nil {
		ln.Close()
		return err
	}
	s.w = w
	stop := context.AfterFunc(ctx, func() { s.shutdown(ln) })
	defer stop()
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		s.committer()
	}()
	if s.opt.Retain > 0 {
		rctx, stopRetain := context.WithCancel(ctx)
		retained := make(chan struct{})
		go func() {
			defer close(retained)
			s.retain(rctx)
		}()
		// Stopped and waited for before the caller closes the store.
		defer func() { stopRetain(); <-retained }()
	}
	backoff := 5 * time.Millisecond
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() || errors.Is(err, net.ErrClosed) {
				break
			}
			// Out of file descriptors and the like: wait and try again rather
			// than dropping the whole capture.
			s.logf("accept: %v (retrying)", err)
			time.Sleep(backoff)
			if backoff *= 2; backoff > time.Second {
				backoff = time.Second
			}
			continue
		}
		backoff = 5 * time.Millisecond
		c := &conn{nc: nc}
		if !s.admit(c) {
			if s.closing.Load() {
				break
			}
			continue
		}
		go s.serveConn(c)
	}
	s.shutdown(ln)
	s.drain()
	s.idle.closeAll()
	close(s.responses)
	close(s.commits)
	<-committed
	return s.w.Close()
}

// drain waits for the connections still open; after DrainTimeout it cuts
// them, so a handler that never answers cannot hold shutdown forever. A
// request cut this way was committed if it had been read completely.
func (s *Server) drain() {
	drained := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(drained)
	}()
	select {
	case <-drained:
		s.abort()
		return
	case <-time.After(s.opt.DrainTimeout):
	}
	// Cancel the forwards still waiting on the handler first: their senders
	// get a 503 (and the delivery its forward error) rather than a cut
	// connection. Whatever is still busy a moment later is cut.
	s.mu.Lock()
	busy := len(s.conns)
	s.mu.Unlock()
	s.abort()
	select {
	case <-drained:
		s.logf("stopping: %d connection(s) still busy after %s, waiting on the handler; answered 503", busy, s.opt.DrainTimeout)
		return
	case <-time.After(time.Second):
	}
	s.mu.Lock()
	n := len(s.conns)
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.logf("stopping: %d connection(s) still busy after %s; closed them", n, s.opt.DrainTimeout)
	<-drained
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.nconns.Add(-1)
	s.mu.Unlock()
}

// shutdown stops accepting and wakes idle connections so they close; busy
// ones notice s.closing after their current request.
func (s *Server) shutdown(ln net.Listener) {
	s.mu.Lock()
	s.closing.Store(true)
	ln.Close()
	for c := range s.conns {
		c.mu.Lock()
		if c.idle {
			c.nc.SetReadDeadline(time.Unix(1, 0))
		}
		c.mu.Unlock()
	}
	s.mu.Unlock()
}

// setIdle marks c as waiting for a request (with the idle deadline) or busy
// (with the header deadline). It returns false when c should close instead.
func (s *Server) setIdle(c *conn, idle bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idle = idle
	if idle {
		if s.closing.Load() || c.evicted {
			return false
		}
		c.idleSince = time.Now()
		timeout := s.opt.IdleTimeout
		if s.nearCap() {
			timeout = min(timeout, nearCapIdleTimeout)
		}
		c.nc.SetReadDeadline(c.idleSince.Add(timeout))
		return true
	}
	c.nc.SetReadDeadline(time.Now().Add(s.opt.HeaderTimeout))
	return true
}

func (s *Server) serveConn(c *conn) {
	defer s.wg.Done()
	defer s.untrack(c)
	defer c.nc.Close()
	defer func() {
		// A bug on one connection must not take the capture (and every other
		// connection) down; what was committed stays committed.
		if panics.Traceback() {
			return // HOOKREPLAY_TRACEBACK: the panic goes on, with its stack
		}
		if r := recover(); r != nil {
			s.logf("internal error on connection from %s, %v: please report it (connection closed; HOOKREPLAY_TRACEBACK=1 shows the stack)",
				c.nc.RemoteAddr(), panics.Recovered(r))
		}
	}()
	rec := &recorder{conn: c.nc, budget: &s.bodies}
	br := bufio.NewReaderSize(rec, 64<<10)
	for {
		if !s.setIdle(c, true) {
			return
		}
		b, err := br.Peek(1)
		if err != nil {
			return
		}
		if b[0] == '\r' || b[0] == '\n' {
			// Blank lines between requests are ignored (RFC 9112 §2.2) and are
			// not part of any request's bytes.
			br.ReadByte()
			rec.take(len(rec.buf) - br.Buffered())
			continue
		}
		s.setIdle(c, false)
		s.busy.Add(1)
		more := s.serveRequest(c, rec, br)
		s.busy.Add(-1)
		if !more {
			return
		}
	}
}

// serveRequest reads, stores and answers one request. It returns whether the
// connection may carry another one.
func (s *Server) serveRequest(c *conn, rec *recorder, br *bufio.Reader) bool {
	remote := c.nc.RemoteAddr().String()
	rec.headerLimit = s.opt.MaxHeaderBytes + br.Size()
	rec.startHead(br.Buffered())
	req, err := http.ReadRequest(br)
	rec.headerLimit = 0
	if err == nil && rec.lines > maxHeaderFields+1 {
		// The whole section came in one read: counted, not yet refused.
		err = errTooManyFields
	}
	err = rec.cause(err)
	if err != nil {
		switch {
		case errors.Is(err, errHeaderTooLarge):
			s.reject(c, remote, nil, 431, "request headers exceed the limit")
		case errors.Is(err, errTooManyFields):
			s.reject(c, remote, nil, 431, fmt.Sprintf("more than %d header fields", maxHeaderFields))
		case isTimeout(err):
			s.reject(c, remote, nil, 408, "headers not received in time")
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			// The client went away mid-request; nobody to answer.
		default:
			s.reject(c, remote, nil, 400, "malformed request: "+malformedWhy(rec.buf, err))
		}
		return false
	}
	receivedAt := time.Now()
	if req.ProtoMajor != 1 {
		s.reject(c, remote, req, 505, "only HTTP/1.x is captured")
		return false
	}
	if why := checkHead(rec.buf[:len(rec.buf)-br.Buffered()]); why != "" {
		s.reject(c, remote, req, 400, why)
		return false
	}
	c.nc.SetReadDeadline(time.Now().Add(s.opt.ReadTimeout))
	if req.ContentLength > s.opt.MaxBody {
		s.reject(c, remote, req, 413, fmt.Sprintf("body of %d bytes exceeds --max-body %s", req.ContentLength, FormatSize(s.opt.MaxBody)))
		return false
	}
	// The body's bytes are charged to the budget from here until the
	// request is answered (they are held that long: raw, and the delivery).
	// A small body of known length is not: --max-conns of them are little.
	defer rec.release()
	switch {
	case req.ContentLength > budgetStep:
		if !s.bodies.take(req.ContentLength, nil) {
			s.reject(c, remote, req, 503, s.overBudget())
			return false
		}
		rec.held = req.ContentLength
	case req.ContentLength < 0:
		rec.charging = true
	}
	if req.ProtoAtLeast(1, 1) && req.ContentLength != 0 && strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		c.nc.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
		if _, err := io.WriteString(c.nc, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return false
		}
	}
	rec.bodyLimit = len(rec.buf) + int(s.wireBodyMax())
	// net/http's reading of the body is only compared with message.Parse's
	// (which is stored): a hash of it, not a second copy of every body.
	var netBody maphash.Hash
	netBody.SetSeed(s.bodySeed)
	buf := copyBuffers.Get().(*[]byte)
	n, err := io.CopyBuffer(&netBody, io.LimitReader(req.Body, s.opt.MaxBody+1), *buf)
	copyBuffers.Put(buf)
	rec.bodyLimit, rec.charging = 0, false
	err = rec.cause(err)
	if err != nil {
		switch {
		case isTimeout(err):
			s.reject(c, remote, req, 408, "body not received in time")
		case errors.Is(err, errBodyTooLarge):
			s.reject(c, remote, req, 413, fmt.Sprintf("chunked body takes more than %s on the wire (twice --max-body %s: its chunk framing is larger than its data)",
				FormatSize(s.wireBodyMax()), FormatSize(s.opt.MaxBody)))
		case errors.Is(err, errBodiesBudget):
			s.reject(c, remote, req, 503, s.overBudget())
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		default:
			s.reject(c, remote, req, 400, "malformed body: "+err.Error())
		}
		return false
	}
	if n > s.opt.MaxBody {
		s.reject(c, remote, req, 413, "body exceeds --max-body "+FormatSize(s.opt.MaxBody))
		return false
	}
	raw := rec.take(len(rec.buf) - br.Buffered())
	parsed, err := message.Parse(raw)
	switch {
	case err != nil:
		s.reject(c, remote, req, 400, "malformed request: "+err.Error())
		return false
	case int64(len(parsed.Body)) != n || maphash.Bytes(s.bodySeed, parsed.Body) != netBody.Sum64():
		// FuzzParseAgainstNetHTTP keeps this from happening; if it ever does,
		// storing either reading would store a guess.
		s.reject(c, remote, req, 400, "ambiguous body framing")
		return false
	}
	body := parsed.Body

	d := &store.Delivery{
		ReceivedAt: receivedAt,
		Source:     s.opt.Source,
		RemoteAddr: remote,
		Method:     req.Method,
		Target:     req.RequestURI,
		Proto:      req.Proto,
		Headers:    parsed.Headers,
		Raw:        raw,
		Body:       body,
	}
	mreq := &message.Request{Method: d.Method, Target: d.Target, Proto: d.Proto, Headers: d.Headers, Body: d.Body}
	scheme, id := verify.DetectScheme(mreq)
	d.Provider, d.EventID, d.EventType, d.Identity = id.Provider, id.EventID, id.EventType, id.Extra
	if s.opt.Secret != "" {
		d.Verification = verification(mreq, scheme, s.opt.Secret, receivedAt, req.Host)
	}
	keepAlive := !req.Close && !s.closing.Load()

	var resp response
	var latency time.Duration
	if s.fwd == nil {
		d.ResponseStatus = s.opt.Status
		d.ResponseHeaders = message.Headers{{Name: "Content-Type", Value: AckContentType(d)}}
		start := time.Now()
		if err := s.insert(d); err != nil {
			s.rejectUnstored(c, remote, req, err)
			return false
		}
		latency = time.Since(start)
		resp = response{status: s.opt.Status, headers: d.ResponseHeaders, body: AckBody(d)}
	} else {
		// A handler that answers within answerWait has its answer committed
		// in the delivery's own row, one write; a slower one has the
		// delivery committed at answerWait while it works, and its answer
		// recorded when it comes. Either way the sender's answer waits for
		// the commit. The forward works on a copy: the commit sets d's ID.
		dc := *d
		slot := &answerSlot{}
		var once sync.Once
		var committed <-chan error
		submit := func() { committed = s.submit(d, slot) }
		late := time.AfterFunc(answerWait, func() { once.Do(submit) })
		fr := s.forward(&dc)
		if fr.stream != nil {
			s.readAnswer(&fr, dc.Method, slot)
		}
		late.Stop()
		once.Do(submit)
		ierr := <-committed
		if ierr != nil {
			if fr.stream != nil {
				fr.stream.done(false)
				s.releasePrefix(fr.reserved)
			}
			s.rejectUnstored(c, remote, req, ierr)
			return false
		}
		if fr.failed {
			fr.body = failBody(d.ID, fr.err)
		}
		latency = fr.latency
		if fr.stream != nil {
			keepAlive = keepAlive && !s.closing.Load()
			r := response{status: fr.status, headers: fr.headers, fromHandler: true, close: !keepAlive,
				http10: !req.ProtoAtLeast(1, 1), head: req.Method == http.MethodHead}
			ok := s.relay(c, d, r, fr, slot)
			s.delivered(d, latency)
			return keepAlive && ok
		}
		s.recordResponse(d, fr, fr.body, 0, fr.err, nil)
		resp = response{status: fr.status, headers: fr.headers, body: fr.body, fromHandler: !fr.failed}
	}
	// Shutdown may have begun while the handler worked: this answer is the last.
	keepAlive = keepAlive && !s.closing.Load()
	resp.close = !keepAlive
	resp.http10 = !req.ProtoAtLeast(1, 1)
	resp.head = req.Method == http.MethodHead
	c.nc.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
	werr := resp.write(c.nc)
	s.delivered(d, latency)
	return keepAlive && werr == nil
}
