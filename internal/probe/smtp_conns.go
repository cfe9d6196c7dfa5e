package probe

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the SMTP sink's connections. Each costs little now that a
// message's header section is streamed, but clients are not trusted to
// leave: at most MaxSMTPConns at once (the largest burst check sends, each
// copy free to send its email at the same moment); a client past the cap is
// answered 421 (try again later) and closed at once, as capture answers
// 503. And a connection lasts at most MaxSMTPConnTime in all, however it
// trickles its bytes within the 30 s allowed between two reads.
const (
	MaxSMTPConns    = 1024
	MaxSMTPConnTime = 10 * time.Minute
)

// smtpListener caps the connections it hands out and the life of each.
type smtpListener struct {
	net.Listener
	max    int64
	life   time.Duration
	active atomic.Int64
}

func (l *smtpListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.active.Add(1) > l.max {
			l.active.Add(-1)
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = io.WriteString(c, "421 4.3.2 hookreplay smtp sink: too many connections, try again later\r\n")
			_ = c.Close()
			continue
		}
		sc := &smtpConn{Conn: c, l: l, end: time.Now().Add(l.life)}
		_ = sc.SetDeadline(time.Time{})
		return sc, nil
	}
}

// smtpConn is one client's connection: no deadline set on it reaches past
// its end, and closing it frees its place.
type smtpConn struct {
	net.Conn
	l    *smtpListener
	end  time.Time
	once sync.Once
}

func (c *smtpConn) clamp(t time.Time) time.Time {
	if t.IsZero() || t.After(c.end) {
		return c.end
	}
	return t
}

func (c *smtpConn) SetDeadline(t time.Time) error     { return c.Conn.SetDeadline(c.clamp(t)) }
func (c *smtpConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.clamp(t)) }
func (c *smtpConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.clamp(t))
}

func (c *smtpConn) Close() error {
	c.once.Do(func() { c.l.active.Add(-1) })
	return c.Conn.Close()
}
