package replay

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startSlowHead is a handler that reads the request, writes part of its
// response head (partial ends with no line end), then stalls (or hangs up,
// with hangUp) until the test ends.
func startSlowHead(t *testing.T, partial string, hangUp bool) Target {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				c.Write([]byte(partial))
				if !hangUp {
					<-done
				}
			}()
		}
	}()
	u, _ := url.Parse("http://" + l.Addr().String() + "/hooks")
	return Target{URL: u, Timeout: 300 * time.Millisecond}
}

// TestSlowResponseHeadIsATimeout: a handler that sends its status line and
// the start of a header line, then nothing, used to be recorded as "read
// response: malformed MIME header: missing colon" — bufio hands net/http the
// cut line without the timeout that cut it. It is a timeout; a head cut by
// the handler hanging up is an incomplete answer.
func TestSlowResponseHeadIsATimeout(t *testing.T) {
	_, req := loadFixture(t, "stripe_invoice_paid.http")
	for _, tc := range []struct {
		name, partial string
		hangUp        bool
		want          string
	}{
		{"header line cut", "HTTP/1.1 200 OK\r\nContent-Ty", false, "did not answer within 300ms"},
		{"status line cut", "HTTP/1.1 2", false, "did not answer within 300ms"},
		{"after the status line", "HTTP/1.1 200 OK\r\n", false, "did not answer within 300ms"},
		{"hung up in a header line", "HTTP/1.1 200 OK\r\nContent-Ty", true, "connection closed before a complete answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Send(context.Background(), startSlowHead(t, tc.partial, tc.hangUp), req, SendOptions{})
			if a.Status != 0 || !strings.Contains(a.Err, tc.want) || strings.Contains(a.Err, "malformed") {
				t.Errorf("status %d err %q, want an error saying %q", a.Status, a.Err, tc.want)
			}
		})
	}
}

// startHostile is a handler that reads each request's head, counts it in
// requests and runs answer on the connection (which is closed after it).
func startHostile(t *testing.T, answer func(c net.Conn)) (Target, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				requests.Add(1)
				answer(c)
			}()
		}
	}()
	u, _ := url.Parse("http://" + l.Addr().String() + "/hooks")
	return Target{URL: u, Timeout: 4 * time.Second}, &requests
}

// endless writes piece after the first bytes until the reader goes away.
func endless(first, piece string) func(c net.Conn) {
	return func(c net.Conn) {
		c.Write([]byte(first))
		b := []byte(strings.Repeat(piece, max(1, (32<<10)/len(piece))))
		for {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}
}

// TestHostileAnswersAreBounded: what a handler answers cannot hold a copy
// past what it needs, nor grow replay's memory. Header lines (or 1xx
// answers) without end used to be read until the timeout, growing the
// heap by a gigabyte every few seconds (net/http's ReadResponse has no
// bound); an endless body was read until the timeout after its first
// --max-body bytes were kept (closing it read the rest). A redirect is
// recorded, not followed.
func TestHostileAnswersAreBounded(t *testing.T) {
	_, req := loadFixture(t, "stripe_invoice_paid.http")
	for _, tc := range []struct {
		name   string
		answer func(c net.Conn)
		status int
		err    string
		detail string
	}{
		{"header lines without end", endless("HTTP/1.1 200 OK\r\n", "X-Pad: "+strings.Repeat("a", 1000)+"\r\n"), 0, "longer than 1MiB", ""},
		{"one header line without end", endless("HTTP/1.1 200 OK\r\nX-Pad: ", "a"), 0, "longer than 1MiB", ""},
		{"1xx answers without end", endless("", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"), 0, "longer than 1MiB", ""},
		{"chunked body without end", endless("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "400\r\n"+strings.Repeat("a", 1024)+"\r\n"), 200, "", "body_truncated"},
		{"body without length nor end", endless("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", "a"), 200, "", "body_truncated"},
		{"closed mid-body", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc") }, 200, "", "body_error"},
		{"100000 short header lines", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n"+strings.Repeat("X: 1\r\n", 100000)+"Content-Length: 2\r\n\r\nok")
		}, 0, "1000 lines", ""},
		{"status below 100", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 099 Odd\r\nContent-Length: 2\r\n\r\nok") }, 0, "status 099", ""},
		{"redirect to itself", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: /hooks\r\nContent-Length: 0\r\n\r\n")
		}, 307, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, requests := startHostile(t, tc.answer)
			start := time.Now()
			a := Send(context.Background(), target, req, SendOptions{})
			took := time.Since(start)
			if a.Status != tc.status || !strings.Contains(a.Err, tc.err) || (tc.err == "") != (a.Err == "") {
				t.Fatalf("status %d err %q, want %d and an error saying %q", a.Status, a.Err, tc.status, tc.err)
			}
			if _, ok := a.Detail[tc.detail]; tc.detail != "" && !ok {
				t.Errorf("detail %v has no %s", a.Detail, tc.detail)
			}
			if len(a.ResponseBody) > DefaultMaxBody {
				t.Errorf("kept %d bytes of the body", len(a.ResponseBody))
			}
			if took > target.Timeout/2 {
				t.Errorf("took %s (timeout %s)", took, target.Timeout)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests reached the handler, want 1", n)
			}
		})
	}
}
