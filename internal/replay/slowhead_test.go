package replay

import (
	"bufio"
	"context"
	"net"
	"net/url"
	"strings"
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
