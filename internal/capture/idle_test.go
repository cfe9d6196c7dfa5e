package capture

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
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

// TestForwardCommitTiming: a handler answering within answerWait has its
// answer in the delivery's row by the time the sender is answered (one
// write); a slower one has the delivery committed while it still works,
// and its answer recorded once it comes.
func TestForwardCommitTiming(t *testing.T) {
	release := make(chan struct{})
	slow := atomic.Bool{}
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if slow.Load() {
			<-release
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer h.Close()
	ts := startServer(t, Options{Forward: h.URL})
	req := []byte("POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")

	// Fast: the answer is in the row when the sender hears it. A handler
	// slowed past answerWait by a loaded machine is allowed a few tries.
	inRow := false
	for range 5 {
		ans, _, _ := exchange(t, ts.addr, req, 1)
		if ans[0].status != 200 {
			t.Fatalf("status %d %q", ans[0].status, ans[0].body)
		}
		ds := allDeliveries(t, ts.st)
		d := ds[len(ds)-1]
		if d.ResponseStatus == 200 && string(d.ResponseBody) == `{"ok":true}` {
			inRow = true
			break
		}
	}
	if !inRow {
		t.Error("no fast answer was stored with its delivery by the time the sender got it")
	}

	// Slow: stored before the handler answers.
	slow.Store(true)
	before := len(allDeliveries(t, ts.st))
	got := make(chan []answer, 1)
	go func() {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		c.Write(req)
		got <- readAnswers(t, bufio.NewReader(c), 1)
	}()
	deadline := time.Now().Add(10 * time.Second)
	var stored *store.Delivery
	for stored == nil && time.Now().Before(deadline) {
		if ds := allDeliveries(t, ts.st); len(ds) > before {
			stored = ds[len(ds)-1]
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if stored == nil {
		t.Fatal("the delivery to a handler still working was not committed")
	}
	if stored.ResponseStatus != 0 {
		t.Errorf("answer %d stored before the handler answered", stored.ResponseStatus)
	}
	close(release)
	if ans := <-got; len(ans) != 1 || ans[0].status != 200 {
		t.Fatalf("sender got %+v, want the handler's 200", ans)
	}
	for time.Now().Before(deadline) {
		d, err := ts.st.GetDelivery(context.Background(), stored.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.ResponseStatus == 200 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Error("the slow handler's answer was never recorded")
}
