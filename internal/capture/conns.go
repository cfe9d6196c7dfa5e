package capture

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Connection cap. Each connection holds a file descriptor (two while its
// delivery is forwarded); past the process's limit accept fails, and a
// capture flooded with silent connections could not take a real delivery
// until they timed out. So capture serves at most MaxConns connections: at
// the cap it closes the longest-idle keep-alive connection to make room, and
// when none is idle it answers the newcomer 503 at once.
const (
	// maxConnsCeiling is the default cap where descriptors are plentiful.
	maxConnsCeiling = 256
	// nearCapIdleTimeout replaces IdleTimeout once three quarters of the cap
	// are in use, so idle connections give their place back early.
	nearCapIdleTimeout = 2 * time.Second
	// maxLingering bounds the 503 answers still being drained at once; past
	// it a 503 is written and the connection closed without lingering.
	maxLingering = 16
)

// DefaultMaxConns is the connection cap when Options.MaxConns is zero: 256,
// or fewer when the open-file limit is low (half of what it leaves after the
// descriptors capture needs for itself, at least 8).
func DefaultMaxConns() int {
	nofile := openFileLimit()
	if nofile <= 0 {
		return maxConnsCeiling
	}
	n := (nofile - 32) / 2
	return max(8, min(n, maxConnsCeiling))
}

// nearCap reports whether three quarters of the cap are in use.
func (s *Server) nearCap() bool {
	return s.nconns.Load()*4 >= int64(s.opt.MaxConns)*3
}

// admit tracks a new connection. At the cap it asks the longest-idle
// connection to close (it wakes from its read and closes itself) or, when
// every connection is busy, answers 503 and reports false. It also reports
// false when the server is closing.
func (s *Server) admit(c *conn) bool {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		c.nc.Close()
		return false
	}
	if len(s.conns) >= s.opt.MaxConns && !s.evictIdle() {
		s.mu.Unlock()
		s.overCap(c.nc)
		return false
	}
	s.conns[c] = struct{}{}
	s.nconns.Add(1)
	s.wg.Add(1)
	s.mu.Unlock()
	return true
}

// evictIdle wakes the longest-idle connection not already told to close, so
// that it closes; s.mu is held.
func (s *Server) evictIdle() bool {
	var oldest *conn
	for c := range s.conns {
		c.mu.Lock()
		if c.idle && !c.evicted && (oldest == nil || c.idleSince.Before(oldest.idleSince)) {
			oldest = c
		}
		c.mu.Unlock()
	}
	if oldest == nil {
		return false
	}
	oldest.mu.Lock()
	defer oldest.mu.Unlock()
	if !oldest.idle { // it started a request meanwhile
		return false
	}
	oldest.evicted = true
	oldest.nc.SetReadDeadline(time.Unix(1, 0))
	return true
}

// overCap answers a connection beyond the cap with 503 and closes it.
func (s *Server) overCap(nc net.Conn) {
	if last := s.lastOverCap.Load(); time.Since(time.Unix(0, last)) > time.Second &&
		s.lastOverCap.CompareAndSwap(last, time.Now().UnixNano()) {
		s.logf("503 to %s: %d connections open, the --max-conns cap (more are answered 503 until some close)", nc.RemoteAddr(), s.opt.MaxConns)
	}
	r := response{status: http.StatusServiceUnavailable, close: true,
		headers: message.Headers{{Name: "Content-Type", Value: "text/plain; charset=utf-8"}, {Name: "Retry-After", Value: "1"}},
		body:    []byte(fmt.Sprintf("Service Unavailable: capture is serving its maximum of %s connections; retry\n", strconv.Itoa(s.opt.MaxConns)))}
	nc.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	if r.write(nc) != nil || s.lingering.Add(1) > maxLingering {
		s.lingering.Add(-1)
		nc.Close()
		return
	}
	// Unread request bytes would make the close a reset that can destroy
	// the 503 before the client reads it: drain briefly, off the accept loop.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.lingering.Add(-1)
		defer nc.Close()
		lingerClose(nc)
	}()
}
