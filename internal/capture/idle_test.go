package capture

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// keepAliveHandler answers every request on a connection with 200 "ok"
// (keep-alive) and, when closeAfter > 0, closes each connection that long
// after its answer without saying so — as a server whose keep-alive timeout
// is short does. It counts the connections it accepted.
func keepAliveHandler(t *testing.T, closeAfter time.Duration) (addr string, conns *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conns = &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					c.SetReadDeadline(time.Now().Add(10 * time.Second))
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
					if closeAfter > 0 {
						time.Sleep(closeAfter)
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String(), conns
}

// TestForwardReusesLiveConnectionsOnly: a handler that keeps connections
// open gets every forward over one connection; one that closes them behind
// capture's back (after its answer, silently) still gets every delivery,
// over a new connection each, and no sender sees an error.
func TestForwardReusesLiveConnectionsOnly(t *testing.T) {
	for _, tc := range []struct {
		name       string
		closeAfter time.Duration
		wantConns  func(n int64) bool
	}{
		{"kept open", 0, func(n int64) bool { return n == 1 }},
		{"closed after each answer", 5 * time.Millisecond, func(n int64) bool { return n == 5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conns := keepAliveHandler(t, tc.closeAfter)
			ts := startServer(t, Options{Forward: "http://" + addr})
			for i := range 5 {
				body := `{"n":` + strconv.Itoa(i) + `}`
				req := "POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
				ans, _, _ := exchange(t, ts.addr, []byte(req), 1)
				if ans[0].status != 200 || string(ans[0].body) != "ok" {
					t.Fatalf("delivery %d: %d %q, want the handler's 200 ok", i+1, ans[0].status, ans[0].body)
				}
				time.Sleep(30 * time.Millisecond) // the handler closes its side meanwhile
			}
			if n := conns.Load(); !tc.wantConns(n) {
				t.Errorf("handler accepted %d connections", n)
			}
			ts.stop(t)
			for _, d := range allDeliveries(t, ts.st) {
				if d.ResponseStatus != 200 || d.ForwardError != "" || !strings.Contains(string(d.ResponseBody), "ok") {
					t.Errorf("delivery %d stored answer %d %q (%s)", d.ID, d.ResponseStatus, d.ResponseBody, d.ForwardError)
				}
			}
		})
	}
}
