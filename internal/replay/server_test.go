package replay

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// arrival is one request exactly as a handler server received it.
type arrival struct {
	Raw []byte           // wire bytes of the request
	Req *message.Request // parsed from Raw (header order and case kept)
	At  time.Time        // when the handler had read the whole body
}

// recServer is a real HTTP server on 127.0.0.1:0 that records every request's
// wire bytes; respond decides the answer (nil: 200 {"ok":true}).
type recServer struct {
	URL     *url.URL
	mu      sync.Mutex
	hits    []arrival
	respond func(w http.ResponseWriter, a arrival)
}

type recConnKey struct{}

// recConn records what was read from the connection.
type recConn struct {
	net.Conn
	mu  sync.Mutex
	buf []byte
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.buf = append(c.buf, p[:n]...)
	c.mu.Unlock()
	return n, err
}

func (c *recConn) take() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf
	c.buf = nil
	return b
}

type recListener struct{ net.Listener }

func (l recListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recConn{Conn: c}, nil
}

func startRecServer(t testing.TB, respond func(w http.ResponseWriter, a arrival)) *recServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &recServer{respond: respond}
	s.URL, _ = url.Parse("http://" + l.Addr().String())
	srv := &http.Server{
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, recConnKey{}, c)
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			rc := r.Context().Value(recConnKey{}).(*recConn)
			raw := rc.take()
			a := arrival{Raw: raw, At: time.Now()}
			a.Req, _ = message.Parse(raw)
			s.mu.Lock()
			s.hits = append(s.hits, a)
			s.mu.Unlock()
			if s.respond != nil {
				s.respond(w, a)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok":true}`))
		}),
	}
	go srv.Serve(recListener{l})
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *recServer) arrivals() []arrival {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]arrival(nil), s.hits...)
}

func (s *recServer) target(timeout time.Duration) Target {
	return Target{URL: s.URL, Timeout: timeout}
}
