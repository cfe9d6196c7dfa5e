// What happens to a delivery once it is read: committed in groups,
// acknowledged or rejected, and reported to the Observer.

package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// AckBody is capture's own answer: {"id":N}. A provider's URL-verification
// handshake (Slack's url_verification) also gets its challenge back, as the
// provider requires before it enables the URL, so an app can be pointed at
// capture directly.
func AckBody(d *store.Delivery) []byte {
	if s, err := verify.SchemeFor(d.Provider); err == nil {
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

// insert commits d (setting d.ID) and returns once it is durable.
func (s *Server) insert(d *store.Delivery) error {
	done := make(chan error, 1)
	s.commits <- commitReq{d: d, done: done}
	return <-done
}

// committer stores deliveries as they come, taking every delivery already
// waiting into the same transaction.
func (s *Server) committer() {
	for first := range s.commits {
		batch := []commitReq{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-s.commits:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		ds := make([]*store.Delivery, len(batch))
		for i, r := range batch {
			ds[i] = r.d
		}
		s.dbMu.Lock()
		// Not the serve context: a request in flight at shutdown is still committed.
		err := s.st.ImportDeliveries(context.Background(), ds)
		if err != nil && len(batch) > 1 {
			// The batch is all or nothing; one delivery the store refuses must
			// not cost the others their acknowledgement.
			for _, r := range batch {
				r.done <- s.st.InsertDelivery(context.Background(), r.d)
			}
			s.dbMu.Unlock()
			continue
		}
		s.dbMu.Unlock()
		for _, r := range batch {
			r.done <- err
		}
	}
}

// reject answers a request that is not stored and closes the connection.
func (s *Server) reject(c *conn, remote string, req *http.Request, status int, why string) {
	what := "request"
	if req != nil {
		what = message.Printable(req.Method + " " + clipWire(req.RequestURI))
	}
	s.logf("%d %s from %s: %s (not stored)", status, what, remote, why)
	r := response{status: status, close: true,
		headers: message.Headers{{Name: "Content-Type", Value: "text/plain; charset=utf-8"}},
		body:    []byte(http.StatusText(status) + ": " + why + "\n")}
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
func verification(req *message.Request, provider, secret string, receivedAt time.Time, host string) (line string) {
	defer func() {
		// A bug in a provider scheme must not take the capture down with it.
		if r := recover(); r != nil {
			line = fmt.Sprintf("unverified: verifier failed: %v", r)
		}
	}()
	if !verify.Recognised(provider) {
		return "unverified: no provider signature scheme recognised in the headers"
	}
	opt := verify.Options{Now: receivedAt}
	if proto := req.Headers.Get("X-Forwarded-Proto"); proto == "http" || proto == "https" {
		opt.URL = proto + "://" + host + req.Target
	}
	res, err := verify.Verify(req, provider, secret, opt)
	if err != nil {
		return "unverified: " + err.Error()
	}
	if res.Provider == "" {
		res.Provider = provider
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
