package capture

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// rawHandler accepts connections and records the exact bytes of each request
// (head plus Content-Length body), answering every one with answer.
func rawHandler(t *testing.T, answer []byte) (addr string, got <-chan []byte) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan []byte, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				var raw bytes.Buffer
				n := 0
				for {
					line, err := br.ReadString('\n')
					raw.WriteString(line)
					if err != nil {
						ch <- raw.Bytes()
						return
					}
					if name, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Content-Length") {
						n, _ = strconv.Atoi(strings.TrimSpace(v))
					}
					if line == "\r\n" {
						break
					}
				}
				body := make([]byte, n)
				io.ReadFull(br, body)
				raw.Write(body)
				ch <- raw.Bytes()
				c.Write(answer)
			}()
		}
	}()
	return l.Addr().String(), ch
}

// TestForwardKeepsHeaderOrderAndCase: the handler gets the sender's headers
// in their order and case, duplicates kept, without hop-by-hop ones (nor
// those Connection lists), Host its own, X-Forwarded-* added (For appended to
// the sender's chain) and a chunked request re-framed with Content-Length.
// The handler's answer goes back to the sender, and into the store, with its
// header order and case.
func TestForwardKeepsHeaderOrderAndCase(t *testing.T) {
	answer := fixture(t, "forward_wire_answer.http")
	addr, got := rawHandler(t, answer)
	ts := startServer(t, Options{Forward: "http://" + addr + "/base"})
	sent := fixture(t, "forward_wire.http")
	ans, _, _ := exchange(t, ts.addr, sent, 1)

	var seen []byte
	select {
	case seen = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("handler got nothing")
	}
	want := bytes.ReplaceAll(fixture(t, "forward_wire.want"), []byte("{{HOST}}"), []byte(addr))
	if !bytes.Equal(seen, want) {
		t.Fatalf("handler received:\n%q\nwant:\n%q", seen, want)
	}
	a := ans[0]
	if a.status != http.StatusCreated || string(a.body) != "{\"ok\":true}\n" || len(a.header.Values("Set-Cookie")) != 2 {
		t.Fatalf("sender got %d %v %q", a.status, a.header, a.body)
	}
	ts.stop(t) // the answer is recorded after the sender got it; stop waits for it
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries", len(ds))
	}
	d := ds[0]
	wantHs := message.Headers{{Name: "x-handler-B", Value: "2"}, {Name: "X-Handler-a", Value: "1"},
		{Name: "set-cookie", Value: "a=1"}, {Name: "Set-Cookie", Value: "b=2"},
		{Name: "Content-Type", Value: "application/json"}, {Name: "Content-Length", Value: "12"}}
	if d.ResponseStatus != 201 || string(d.ResponseBody) != "{\"ok\":true}\n" || d.ForwardError != "" ||
		len(d.ResponseHeaders) != len(wantHs) {
		t.Fatalf("stored response %d %q %v %q", d.ResponseStatus, d.ResponseBody, d.ResponseHeaders, d.ForwardError)
	}
	for i, h := range wantHs {
		if d.ResponseHeaders[i] != h {
			t.Fatalf("stored response header %d = %+v, want %+v (all: %v)", i, d.ResponseHeaders[i], h, d.ResponseHeaders)
		}
	}
	if !bytes.Equal(d.Raw, sent) {
		t.Fatal("stored raw bytes differ from what was sent")
	}
}

// TestForwardAnswerBeforeBody: a handler that answers from the headers alone
// (a 413 from a body limit) and closes: the sender gets that answer, not 502.
func TestForwardAnswerBeforeBody(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		c.Write([]byte("HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big\n"))
		c.Close()
	}()
	ts := startServer(t, Options{Forward: "http://" + l.Addr().String()})
	ans, _, _ := exchange(t, ts.addr, fixture(t, "forward_wire.http"), 1)
	if ans[0].status != http.StatusRequestEntityTooLarge || string(ans[0].body) != "too big\n" {
		t.Fatalf("sender got %d %q", ans[0].status, ans[0].body)
	}
}

// TestForwardReusesHandlerConnections: sequential deliveries share one kept-
// alive connection to the handler; one the handler closed while idle is not
// reused (the next delivery still gets the handler's answer).
func TestForwardReusesHandlerConnections(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	h := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	h.Config.IdleTimeout = 300 * time.Millisecond
	h.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	h.Start()
	defer h.Close()
	ts := startServer(t, Options{Forward: h.URL})
	send := func() {
		t.Helper()
		ans, _, _ := exchange(t, ts.addr, fixture(t, "odd_case_order.http"), 1)
		if ans[0].status != 200 || string(ans[0].body) != "ok" {
			t.Fatalf("answer %d %q", ans[0].status, ans[0].body)
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return conns }
	for i := 0; i < 3; i++ {
		send()
	}
	if n := count(); n != 1 {
		t.Fatalf("3 sequential forwards used %d handler connections, want 1", n)
	}
	time.Sleep(600 * time.Millisecond) // the handler closes the idle connection
	send()
	if n := count(); n != 2 {
		t.Fatalf("after the handler closed the idle connection: %d connections, want 2", n)
	}
}
