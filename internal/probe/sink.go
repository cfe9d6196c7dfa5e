package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxSinkBody bounds the body kept for one call to the sink.
const maxSinkBody = 64 << 10

// Call is one request a handler made to the sink: a downstream side effect
// (an email sent, a payment captured, a Slack message posted).
type Call struct {
	At     time.Time `json:"at"`
	Method string    `json:"method"`
	Path   string    `json:"path"` // path and query as requested
	Body   []byte    `json:"body"`
	// IdempotencyKey is the call's Idempotency-Key (or X-Idempotency-Key)
	// header, "" when it has none.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Repeat: an earlier call had the same method, path and idempotency
	// key. A real API (Stripe's, and every API following the IETF
	// Idempotency-Key draft) answers it with the first call's result and does
	// nothing again, so the sink does not count it.
	Repeat bool `json:"repeat,omitempty"`
}

// idempotencyHeaders are the request headers that carry an idempotency key,
// in the order they are looked at.
var idempotencyHeaders = []string{"Idempotency-Key", "X-Idempotency-Key"}

// Sink is a stand-in downstream API: it answers 200 {"ok":true} to any
// request and records every call. Point the handler's outbound URL at it
// (e.g. EMAIL_API_URL=http://127.0.0.1:9100) and its Probe counts the calls
// that are not reads (see SetMatch).
type Sink struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	// calls are the calls recorded; those SetMatch selects count.
	calls received[Call]

	mu       sync.Mutex
	keys     map[string]bool // method, path and idempotency key of calls seen
	patterns bool            // SetMatch was given patterns

	// trap holds a panic of a connection's goroutine (net/http's, or
	// the sink's own reading of a call): the probe's next read raises it
	// rather than count fewer calls than came (net/http would log it with
	// its stack and go on).
	trap panics.Trap
}

// CallPattern selects sink calls: a method (or "" for any) and a path glob
// whose * matches any run of characters, slashes included (so
// /repos/*/issues/*/comments matches /repos/OWNER/REPO/issues/1/comments),
// matched against the path without its query.
type CallPattern struct {
	Method string
	Path   string
	re     *regexp.Regexp
}

// ParseCallPattern reads "METHOD /path/glob" or "/path/glob" (any method),
// e.g. "POST /repos/*/issues/*/comments".
func ParseCallPattern(s string) (CallPattern, error) {
	s = strings.TrimSpace(s)
	var p CallPattern
	if m, rest, ok := strings.Cut(s, " "); ok {
		p.Method, p.Path = strings.ToUpper(m), strings.TrimSpace(rest)
	} else {
		p.Path = s
	}
	if !strings.HasPrefix(p.Path, "/") {
		return p, fmt.Errorf("%q: want METHOD /path (a glob, e.g. 'POST /repos/*/issues/*/comments')", s)
	}
	p.re = compileGlob(p.Path, "")
	return p, nil
}

// compileGlob turns a glob whose * matches any run of characters (slashes
// and @ included) into an anchored regexp; flags ("(?i)") go in front.
func compileGlob(glob, flags string) *regexp.Regexp {
	parts := strings.Split(glob, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(flags + "^" + strings.Join(parts, ".*") + "$")
}

// String is the pattern as written.
func (p CallPattern) String() string {
	if p.Method == "" {
		return p.Path
	}
	return p.Method + " " + p.Path
}

// Matches reports whether c is a call p selects.
func (p CallPattern) Matches(c Call) bool {
	if p.Method != "" && !strings.EqualFold(p.Method, c.Method) {
		return false
	}
	pth, _, _ := strings.Cut(c.Path, "?")
	return p.re != nil && p.re.MatchString(pth)
}

// SetMatch makes only calls matching one of ps count (Counted, the probe);
// none: every call with a method that is not safe counts (SafeMethod: a
// read changes nothing downstream, so a handler that reads the provider's
// API on every copy is not doing the work again). Call it before the sink
// is read.
func (s *Sink) SetMatch(ps []CallPattern) {
	m := []func(Call) bool{func(c Call) bool { return !SafeMethod(c.Method) }}
	if len(ps) > 0 {
		m = nil
		for _, p := range ps {
			m = append(m, p.Matches)
		}
	}
	s.mu.Lock()
	s.patterns = len(ps) > 0
	s.mu.Unlock()
	s.calls.setMatch(m)
}

// Patterns reports whether SetMatch was given patterns: without them, the
// calls not counted are the reads.
func (s *Sink) Patterns() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.patterns
}

// SafeMethod reports whether method is safe in RFC 9110's sense (GET,
// HEAD, OPTIONS, TRACE): a read, which a server must not act on.
func SafeMethod(method string) bool {
	switch strings.ToUpper(method) {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	return false
}

// Counts reports whether c is a call the sink counts: one with a method
// that is not safe, or one matching a pattern given to SetMatch — never
// one that repeats an idempotency key (Call.Repeat), which the real API
// would not act on again.
func (s *Sink) Counts(c Call) bool {
	return !c.Repeat && s.calls.matches(c)
}

// Counted is the number of calls the sink counts (see SetMatch).
func (s *Sink) Counted() int { return s.calls.counted(s.Counts) }

// StartSink listens on addr (host:port; port 0 picks a free one) and serves
// until ctx is cancelled or Close is called.
func StartSink(ctx context.Context, addr string) (*Sink, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start sink on %s: %w", addr, err)
	}
	s := &Sink{ln: ln, done: make(chan struct{})}
	s.SetMatch(nil)
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(serverLog{trap: &s.trap, server: "net/http.(*conn).serve"}, "", 0)}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns on Close
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	if s.record(w, r) != nil {
		panic(http.ErrAbortHandler) // the connection is cut, nothing logged
	}
}

// record counts the call and answers it; its panic is held in s.trap.
func (s *Sink) record(w http.ResponseWriter, r *http.Request) (err error) {
	defer s.trap.Catch(&err)
	panics.TestHook("sink")
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxSinkBody))
	_, _ = io.Copy(io.Discard, r.Body)
	c := Call{At: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Body: body}
	for _, h := range idempotencyHeaders {
		if c.IdempotencyKey = r.Header.Get(h); c.IdempotencyKey != "" {
			break
		}
	}
	s.mu.Lock()
	if c.IdempotencyKey != "" {
		k := c.Method + " " + r.URL.Path + " " + c.IdempotencyKey
		c.Repeat = s.keys[k]
		if s.keys == nil {
			s.keys = map[string]bool{}
		}
		s.keys[k] = true
	}
	s.calls.add(c) // under s.mu: calls are recorded in the order their keys were seen
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "11")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"ok":true}`)
	return nil
}

// Addr is the address the sink listens on (with the real port).
func (s *Sink) Addr() string { return s.ln.Addr().String() }

// URL is http:// and Addr.
func (s *Sink) URL() string { return "http://" + s.Addr() }

// Len is the number of calls recorded so far.
func (s *Sink) Len() int { return s.calls.len() }

// Calls returns a copy of every call recorded so far, oldest first.
func (s *Sink) Calls() []Call { return s.CallsSince(0) }

// CallsSince returns the calls after the first n (a count taken earlier with
// Len or read from the probe), oldest first.
func (s *Sink) CallsSince(n int) []Call { return s.calls.since(n) }

// Close stops the sink and waits for it; recorded calls stay readable.
func (s *Sink) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Probe returns a probe whose value is the number of calls the sink
// received that count (those that are not reads, or those SetMatch
// selects).
func (s *Sink) Probe() Probe { return &sinkProbe{s: s} }

type sinkProbe struct{ s *Sink }

func (p *sinkProbe) Name() string { return "sink: " + p.s.Addr() }

func (p *sinkProbe) Read(ctx context.Context) (Value, error) {
	if err := ctx.Err(); err != nil {
		return Value{}, probeErr(p.Name(), err)
	}
	p.s.trap.Rethrow()
	n := p.s.Counted()
	return Value{Text: strconv.Itoa(n), Num: float64(n), IsNum: true}, nil
}

// Close does nothing: the sink is closed by whoever started it.
func (p *sinkProbe) Close() error { return nil }

// ownedBySet marks the probes whose server their Set stops.
func (p *sinkProbe) ownedBySet() {}

// setOwned is a probe reading a server its Set stops (the sinks): closing
// the probe leaves the server to the Set.
type setOwned interface{ ownedBySet() }

func isSetOwned(p Probe) bool {
	_, ok := p.(setOwned)
	return ok
}
