// What happens to a delivery once it is read: committed in groups,
// acknowledged or rejected, and reported to the Observer.

package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// AckBody is capture's own answer: {"id":N}. A provider's URL-verification
// handshake (Slack's url_verification) also gets its challenge back, as the
// provider requires before it enables the URL, so an app can be pointed at
// capture directly; Meta's GET verification gets hub.challenge as the whole
// body (AckContentType says text/plain).
func AckBody(d *store.Delivery) []byte {
	if c := bareChallenge(d); c != "" {
		return []byte(c)
	}
	if s, err := verify.SchemeFor(d.Provider); err == nil { // just detected: a name the registry knows
		if c := s.Challenge(d.Request()); c != "" {
			b, _ := json.Marshal(struct {
				Challenge string `json:"challenge"`
				ID        int64  `json:"id"`
			}{c, d.ID})
			return b
		}
	}
	return fmt.Appendf(nil, `{"id":%d}`, d.ID)
}

// bareChallenge is the challenge d's provider wants back as the whole
// answer (Meta's hub.challenge), "" when d is no such handshake.
func bareChallenge(d *store.Delivery) string {
	if s, err := verify.SchemeFor(d.Provider); err == nil {
		if b, ok := s.(verify.BareChallenger); ok {
			return b.BareChallenge(d.Request())
		}
	}
	return ""
}

// AckContentType is the Content-Type of capture's own answer to d: JSON,
// or plain text for a challenge echoed as the whole body.
func AckContentType(d *store.Delivery) string {
	if bareChallenge(d) != "" {
		return "text/plain; charset=utf-8"
	}
	return "application/json"
}

// insert commits d (setting d.ID) and returns once it is durable.
func (s *Server) insert(d *store.Delivery) error {
	return <-s.submit(d, nil)
}

// submit hands d to the committer and returns the channel that tells when
// it is durable (nil) or why it is not. slot, when not nil, may carry the
// handler's answer into the same row; d must not be read until then.
func (s *Server) submit(d *store.Delivery, slot *answerSlot) <-chan error {
	done := make(chan error, 1)
	s.commits <- commitReq{d: d, slot: slot, done: done}
	return done
}

// answerSlot lets a forwarded delivery's answer go into the delivery's own
// row when the handler answered before the committer took the delivery —
// always when it answers within answerWait, since the delivery is only
// handed over then — so that the answer costs no second write.
type answerSlot struct {
	mu    sync.Mutex
	resp  *store.Response
	taken bool // the committer took the delivery, with resp if offered by then
}

// offer hands the answer to the delivery's insert, unless the insert is
// under way already (joined then says so: the answer is recorded on its own).
func (a *answerSlot) offer(r store.Response) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.taken {
		a.resp = &r
	}
}

// take marks the delivery as taken for its insert and returns the answer
// offered until then, or nil.
func (a *answerSlot) take() *store.Response {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.taken = true
	return a.resp
}

// joined reports whether the answer went into the delivery's insert.
func (a *answerSlot) joined() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.taken && a.resp != nil
}

// gatherWait is the least time the committer waits for deliveries of the
// other requests being served to share its transaction (group commit). A
// lone request never waits: at concurrency 1 a delivery is committed as
// soon as it is read. Measured on 2 cores with hey -c 16: capture's CPU
// per delivery 226 → 186 µs.
const gatherWait = time.Millisecond

// maxGatherWait bounds the wait when commits are slow. The committer waits
// as long as its last commit took (at least gatherWait): a delivery that
// misses the batch waits for the whole next commit, so waiting up to one
// commit's time for it costs the batch no more than it saves the delivery.
// A Postgres commit on a loaded machine takes milliseconds (a round trip, a
// WAL flush and two processes waiting for a CPU), against a fraction of one
// for SQLite, whose wait stays gatherWait. With 1 ms alone, the requests of
// one round at c=16 reached capture spread over more than that and a group
// split in two commits: at load 8 on 2 cores capture into Postgres went
// from 2,340–3,720 to 3,070–4,140 req/s (docs/performance.md).
const maxGatherWait = 4 * time.Millisecond

// gatherFor is how long to wait for more deliveries after a commit that
// took took.
func gatherFor(took time.Duration) time.Duration {
	return min(max(took, gatherWait), maxGatherWait)
}

// answerWait is how long a forwarded delivery's commit waits for the
// handler's answer, to store both in one row. Committing alongside the
// forward instead measured no faster at concurrency 1 on 2 cores (the
// commit and the handler compete for the same cores) and cost a second
// write per delivery; a handler slower than this does not wait for it.
const answerWait = 20 * time.Millisecond

// responseDelay is how long an answer recorded on its own waits for the
// next delivery's transaction to join before it is committed alone.
const responseDelay = 10 * time.Millisecond

// committer is capture's only writer. It stores deliveries as they come,
// taking every delivery already waiting into the same transaction (one
// commit for many concurrent deliveries: group commit), and records
// handlers' answers that missed their delivery's insert in the next such
// transaction, or after responseDelay when no delivery comes.
func (s *Server) committer() {
	var pending []store.Response
	var flush <-chan time.Time
	var took time.Duration // the last group commit's
	commits, responses := s.commits, s.responses
	for commits != nil || responses != nil {
		select {
		case first, ok := <-commits:
			if !ok {
				commits = nil
				continue
			}
			batch := []commitReq{first}
			size := first.size()
			// While more requests are being served than the batch holds,
			// wait up to gatherFor for them: under load a larger batch
			// costs far less per delivery (BenchmarkWriter) than the wait.
			var gather <-chan time.Time
			if s.busy.Load() > 1 {
				gather = time.After(gatherFor(took))
			}
		more:
			for len(batch) < maxBatch && size < maxBatchBytes {
				if int64(len(batch)) >= s.busy.Load() {
					gather = nil
				}
				var r commitReq
				var ok bool
				if gather == nil {
					select {
					case r, ok = <-commits:
					default:
						break more
					}
				} else {
					select {
					case r, ok = <-commits:
					case <-gather:
						break more
					}
				}
				if !ok {
					commits = nil
					break more
				}
				batch = append(batch, r)
				size += r.size()
			}
		answers:
			for len(pending) < maxBatch {
				select {
				case r, ok := <-responses:
					if !ok {
						responses = nil
						break answers
					}
					pending = append(pending, r)
				default:
					break answers
				}
			}
			start := time.Now()
			s.commitBatch(batch, pending)
			took = time.Since(start)
			pending, flush = pending[:0], nil
		case r, ok := <-responses:
			if !ok {
				responses = nil
				continue
			}
			pending = append(pending, r)
			if len(pending) >= maxBatch {
				s.commitBatch(nil, pending)
				pending, flush = pending[:0], nil
			} else if flush == nil {
				flush = time.After(responseDelay)
			}
		case <-flush:
			s.commitBatch(nil, pending)
			pending, flush = pending[:0], nil
		}
	}
	s.commitBatch(nil, pending)
}

// commitBatch stores batch and rs in one transaction and tells each
// delivery's request how it went. Not the serve context: a request in
// flight at shutdown is still committed.
func (s *Server) commitBatch(batch []commitReq, rs []store.Response) {
	ctx := context.Background()
	ds := make([]*store.Delivery, len(batch))
	for i, r := range batch {
		if r.slot != nil {
			if a := r.slot.take(); a != nil {
				d := r.d
				d.ResponseStatus, d.ResponseHeaders, d.ResponseBody = a.Status, a.Headers, a.Body
				d.ResponseSize, d.Latency, d.ForwardError = a.Size, a.Latency, a.ForwardError
			}
		}
		ds[i] = r.d
	}
	err := s.commit(ctx, ds, rs)
	if err != nil && len(ds)+len(rs) > 1 {
		// The transaction is all or nothing; one row the store refuses must
		// not cost the others their acknowledgement.
		for _, r := range batch {
			r.done <- s.commit(ctx, []*store.Delivery{r.d}, nil)
		}
		for _, r := range rs {
			if err := s.commit(ctx, nil, []store.Response{r}); err != nil {
				s.logf("%v", err)
			}
		}
		return
	}
	if err != nil && len(rs) > 0 {
		s.logf("%v", err)
	}
	for _, r := range batch {
		r.done <- err
	}
}

// commit writes a batch. A panic in it (the database driver, on the
// committer's goroutine) is the batch's error: its senders are answered
// 503 and the log says why, rather than the capture dying with every
// connection waiting on it.
func (s *Server) commit(ctx context.Context, ds []*store.Delivery, rs []store.Response) (err error) {
	defer func() {
		if panics.Traceback() {
			return
		}
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error, %w: please report it (HOOKREPLAY_TRACEBACK=1 shows the stack)", panics.Recovered(r))
		}
	}()
	panics.TestHook("commit")
	return s.w.Commit(ctx, ds, rs)
}

// reject answers a request that is not stored and closes the connection.
func (s *Server) reject(c *conn, remote string, req *http.Request, status int, why string) {
	s.rejectTelling(c, remote, req, status, why, why)
}

// rejectUnstored answers 503 to a delivery the store could not commit. The
// sender is not told the store's error: it can name the database's host,
// port, schema or role, which a capture reachable from the internet must
// not give away. Capture's log line has it.
func (s *Server) rejectUnstored(c *conn, remote string, req *http.Request, err error) {
	s.rejectTelling(c, remote, req, http.StatusServiceUnavailable, "could not store the delivery: "+err.Error(),
		"could not store the delivery; it was not acknowledged, send it again (capture's log says why)")
}

// rejectTelling is reject with why for capture's log and told for the sender.
func (s *Server) rejectTelling(c *conn, remote string, req *http.Request, status int, why, told string) {
	what := "request"
	if req != nil {
		what = message.Printable(req.Method + " " + clipWire(req.RequestURI))
	}
	s.logf("%d %s from %s: %s (not stored)", status, what, remote, why)
	r := response{status: status, close: true,
		headers: message.Headers{{Name: "Content-Type", Value: "text/plain; charset=utf-8"}},
		body:    []byte(http.StatusText(status) + ": " + told + "\n")}
	if status == http.StatusServiceUnavailable {
		r.headers = append(r.headers, message.Header{Name: "Retry-After", Value: "1"})
	}
	if req != nil {
		r.head = req.Method == http.MethodHead
	}
	c.nc.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
	if r.write(c.nc) == nil {
		lingerClose(c.nc)
	}
}

// lingerClose half-closes c and discards what the client still sends for a
// moment, so that unread request bytes (a rejected body) do not make the
// kernel reset the connection before the client has read our answer.
func lingerClose(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	tc.CloseWrite()
	tc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	io.CopyN(io.Discard, tc, 1<<20)
}

func (s *Server) logf(format string, a ...any) {
	if s.opt.Observer == nil {
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.opt.Observer.Problem(fmt.Sprintf(format, a...))
}

// delivered tells the observer about a stored, answered delivery.
func (s *Server) delivered(d *store.Delivery, latency time.Duration) {
	if s.opt.Observer == nil {
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.opt.Observer.Delivered(d, latency)
}

// verification runs the signature check and renders its one-line result.
// Twilio signs the URL the sender was configured with; behind a TLS tunnel
// that is https even though capture itself was reached over http, so unless
// the tunnel says which (X-Forwarded-Proto) verify tries both schemes.
func verification(req *message.Request, scheme verify.Scheme, secret string, receivedAt time.Time, host string) (line string) {
	defer func() {
		// A bug in a provider scheme must not take the capture down with it.
		if r := recover(); r != nil {
			line = fmt.Sprintf("unverified: verifier failed: %v", r)
		}
	}()
	if !verify.Known(scheme) {
		return "unverified: no provider signature scheme recognised in the headers"
	}
	opt := verify.Options{Now: receivedAt}
	if proto := req.Headers.Get("X-Forwarded-Proto"); proto == "http" || proto == "https" {
		opt.URL = proto + "://" + host + req.Target
	}
	res, err := verify.VerifyWith(scheme, req, secret, opt)
	if err != nil {
		return "unverified: " + err.Error()
	}
	if res.CheckedAt.IsZero() {
		res.CheckedAt = receivedAt
	}
	if !res.Valid && res.Reason == "" {
		res.Reason = "signature mismatch"
	}
	return res.String()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
