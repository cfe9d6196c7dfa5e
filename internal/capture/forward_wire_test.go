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

// hostileHandler reads each forwarded request's head and runs answer on
// the connection, which is closed after it; gone is closed when answer
// returns (for a writer without end: when capture stopped reading).
func hostileHandler(t *testing.T, answer func(c net.Conn)) (url string, gone <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer close(ch)
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
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
		answer(c)
	}()
	return "http://" + l.Addr().String(), ch
}

// endless writes first, then piece over and over until the reader goes away.
func endless(first, piece string) func(c net.Conn) {
	return func(c net.Conn) {
		io.WriteString(c, first)
		b := []byte(strings.Repeat(piece, max(1, (32<<10)/len(piece))))
		for {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}
}

// TestForwardHostileAnswers: a handler's answer that is no answer gets the
// sender a 502 at once, and the delivery is stored with why. Header lines or
// 1xx answers without end used to be read until ForwardTimeout, growing
// capture's heap by hundreds of MiB a second; a 101 (capture never forwards
// an Upgrade) was relayed without its Upgrade header, and a status below 100
// was read as a 1xx answer, its body as the next status line.
func TestForwardHostileAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(c net.Conn)
		why    string
	}{
		{"header lines without end", endless("HTTP/1.1 200 OK\r\n", "X-Pad: "+strings.Repeat("a", 1000)+"\r\n"), "longer than 1MiB"},
		{"1xx answers without end", endless("", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"), "longer than 1MiB"},
		{"100000 short header lines", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n"+strings.Repeat("X: 1\r\n", 100000)+"Content-Length: 2\r\n\r\nok")
		}, "1000 lines"},
		{"101 unasked", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw bytes")
		}, "status 101"},
		{"status below 100", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 099 Odd\r\nContent-Length: 2\r\n\r\nok") }, "status 099"},
		// This was "malformed MIME header: missing colon: \"Content-Le\"".
		{"hung up in a header line", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Le") }, "connection closed before a complete answer"},
		{"hung up without answering", func(c net.Conn) {}, "connection closed before a complete answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fwd, _ := hostileHandler(t, tc.answer)
			ts := startServer(t, Options{Forward: fwd, ForwardTimeout: 5 * time.Second})
			start := time.Now()
			ans, _, _ := exchange(t, ts.addr, fixture(t, "odd_case_order.http"), 1)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("answered after %s (ForwardTimeout 5s)", took)
			}
			if ans[0].status != http.StatusBadGateway || !strings.Contains(string(ans[0].body), tc.why) {
				t.Fatalf("sender got %d %q, want 502 saying %q", ans[0].status, ans[0].body, tc.why)
			}
			ts.stop(t)
			ds := allDeliveries(t, ts.st)
			if len(ds) != 1 || !strings.Contains(ds[0].ForwardError, tc.why) || ds[0].ResponseStatus != http.StatusBadGateway {
				t.Fatalf("stored %d deliveries (%+v)", len(ds), ds)
			}
		})
	}
}

// TestForwardSenderGoneStopsTheAnswer: when the sender hangs up while an
// endless answer is relayed, capture lets go of the handler at once. It
// used to close the answer's body, which reads it to its end: the handler's
// connection was held until ForwardTimeout.
func TestForwardSenderGoneStopsTheAnswer(t *testing.T) {
	fwd, gone := hostileHandler(t, endless("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "400\r\n"+strings.Repeat("a", 1024)+"\r\n"))
	ts := startServer(t, Options{Forward: fwd, ForwardTimeout: 10 * time.Second})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(fixture(t, "odd_case_order.http"))
	if _, err := io.ReadFull(c, make([]byte, 2<<20)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	hungUp := time.Now()
	select {
	case <-gone:
	case <-time.After(8 * time.Second):
		t.Fatal("capture still reads the handler's answer 8s after the sender hung up")
	}
	if took := time.Since(hungUp); took > 3*time.Second {
		t.Errorf("capture let go of the handler %s after the sender hung up", took)
	}
	ts.stop(t)
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 || !strings.Contains(ds[0].ForwardError, "sender hung up") {
		t.Fatalf("stored %+v", ds)
	}
}
