package capture

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// testServer is a real capture server on 127.0.0.1:0 over a real SQLite file.
type testServer struct {
	addr   string
	dbPath string
	st     *store.Store
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	out    *bytes.Buffer
	errOut *bytes.Buffer
}

// startServer starts a capture server; tweak, when given, adjusts the
// server's inner bounds before it serves.
func startServer(t testing.TB, opt Options, tweak ...func(*Server)) *testServer {
	t.Helper()
	return startServerAt(t, filepath.Join(t.TempDir(), "capture.db"), opt, tweak...)
}

// startServerAt is startServer on the store at dbPath: a SQLite file or a
// Postgres URL.
func startServerAt(t testing.TB, dbPath string, opt Options, tweak ...func(*Server)) *testServer {
	t.Helper()
	st, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	opt.Observer = liveRecorder{out: out, errOut: errOut}
	srv, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tweak {
		f(srv)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{addr: ln.Addr().String(), dbPath: dbPath, st: st, cancel: cancel, done: make(chan error, 1), out: out, errOut: errOut}
	go func() { ts.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		ts.stop(t)
		st.Close()
	})
	return ts
}

// liveRecorder is an Observer that writes a line per delivery to out, with the
// fields capture hands a live view, and each problem to errOut. Calls are
// serialised by the server.
type liveRecorder struct{ out, errOut *bytes.Buffer }

func (r liveRecorder) Delivered(d *store.Delivery, latency time.Duration) {
	fmt.Fprintf(r.out, "#%d %d %s %s %s %s %s %s\n", d.ID, d.ResponseStatus, d.Provider, d.EventType, d.EventID, latency, d.Verification, d.ForwardError)
}

func (r liveRecorder) Problem(msg string) { fmt.Fprintf(r.errOut, "hookreplay: %s\n", msg) }

// stop shuts the server down gracefully and waits for Serve to return. After
// it the output buffers may be read.
func (ts *testServer) stop(t testing.TB) {
	ts.once.Do(func() {
		ts.cancel()
		select {
		case err := <-ts.done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("serve did not return after shutdown")
		}
	})
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type answer struct {
	status int
	header http.Header
	body   []byte
	close  bool
}

// exchange writes data in one write on a fresh connection and reads n responses.
func exchange(t testing.TB, addr string, data []byte, n int) ([]answer, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	return readAnswers(t, br, n), c, br
}

func readAnswers(t testing.TB, br *bufio.Reader, n int) []answer {
	t.Helper()
	var out []answer
	for i := 0; i < n; i++ {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("read response %d: %v", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read response body %d: %v", i+1, err)
		}
		out = append(out, answer{status: resp.StatusCode, header: resp.Header, body: body, close: resp.Close})
	}
	return out
}

func ackID(t testing.TB, a answer) int64 {
	t.Helper()
	var v struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(a.body, &v); err != nil || v.ID == 0 {
		t.Fatalf("answer body %q is not {\"id\":N}", a.body)
	}
	return v.ID
}

func allDeliveries(t testing.TB, st *store.Store) []*store.Delivery {
	t.Helper()
	ds, err := st.ListDeliveries(context.Background(), store.Filter{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestRawBytesEqualSentBytes(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct {
		file     string
		method   string
		target   string
		body     string
		provider string
		eventID  string
		headers  message.Headers // a prefix of the parsed headers, in order
	}{
		{file: "odd_case_order.http", method: "POST", target: "/hooks/stripe?src=cli&x=1",
			body: "{\"id\":\"evt_1OddCase\",\"object\":\"event\",\"type\":\"invoice.paid\",\"data\":{\"x\":1}}\n\n", provider: "stripe", eventID: "evt_1OddCase",
			headers: message.Headers{{Name: "content-TYPE", Value: "application/json; charset=utf-8"}, {Name: "HOST", Value: "127.0.0.1"},
				{Name: "stripe-signature", Value: "t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"},
				{Name: "X-Weird-Spacing", Value: "lots   of   space"}}},
		{file: "repeated_headers.http", method: "POST", target: "/gh", body: `{"action":"opened","issue":{"number":347}}`,
			provider: "github", eventID: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
			headers: message.Headers{{Name: "Host", Value: "localhost"}, {Name: "X-GitHub-Event", Value: "issues"},
				{Name: "X-GitHub-Delivery", Value: "72d3162e-cc78-11e3-81ab-4c9367dc0958"}, {Name: "Accept", Value: "text/plain"},
				{Name: "X-Dup", Value: "one"}, {Name: "x-dup", Value: "two"}, {Name: "X-DUP", Value: "three"},
				{Name: "Accept", Value: "application/json"}, {Name: "Cookie", Value: "a=1"}, {Name: "Cookie", Value: "b=2"}}},
		{file: "chunked_trailers.http", method: "POST", target: "/chunked", body: `{"id":"evt_chunked","type":"a.b"}`, provider: "generic",
			headers: message.Headers{{Name: "Host", Value: "localhost"}, {Name: "Content-Type", Value: "application/json"},
				{Name: "Transfer-Encoding", Value: "chunked"}, {Name: "Trailer", Value: "X-Checksum, X-Other"}}},
		{file: "get_no_body.http", method: "GET", target: "/health?probe=1", provider: "generic"},
		{file: "slack_form.http", method: "POST", target: "/slack/events", provider: "slack", eventID: "Ev08MFMKH6"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			sent := fixture(t, tc.file)
			ans, _, _ := exchange(t, ts.addr, sent, 1)
			if ans[0].status != 200 {
				t.Fatalf("status %d body %q", ans[0].status, ans[0].body)
			}
			d, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[0]))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d.Raw, sent) {
				t.Fatalf("raw bytes differ\nsent: %q\nraw:  %q", sent, d.Raw)
			}
			if d.Method != tc.method || d.Target != tc.target || d.Proto != "HTTP/1.1" {
				t.Errorf("request line %s %s %s", d.Method, d.Target, d.Proto)
			}
			if tc.body != "" && string(d.Body) != tc.body {
				t.Errorf("decoded body %q, want %q", d.Body, tc.body)
			}
			if d.Provider != tc.provider || d.EventID != tc.eventID {
				t.Errorf("identity %s/%s, want %s/%s", d.Provider, d.EventID, tc.provider, tc.eventID)
			}
			if len(d.Headers) < len(tc.headers) {
				t.Fatalf("headers %v", d.Headers)
			}
			for i, h := range tc.headers {
				if d.Headers[i] != h {
					t.Errorf("header %d = %q, want %q", i, d.Headers[i], h)
				}
			}
			if d.RemoteAddr == "" || d.ReceivedAt.IsZero() || time.Since(d.ReceivedAt) > time.Minute {
				t.Errorf("remote %q received %v", d.RemoteAddr, d.ReceivedAt)
			}
		})
	}
}

func TestBinaryBody5MiB(t *testing.T) {
	ts := startServer(t, Options{})
	body := make([]byte, 5<<20)
	rand.Read(body)
	sent := append([]byte(fmt.Sprintf("PUT /blob HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", len(body))), body...)
	ans, _, _ := exchange(t, ts.addr, sent, 1)
	d, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Raw, sent) {
		t.Fatalf("raw differs: %d bytes stored, %d sent", len(d.Raw), len(sent))
	}
	if !bytes.Equal(d.Body, body) {
		t.Fatalf("body differs")
	}
}

func TestPipelinedRequestsInOneWrite(t *testing.T) {
	ts := startServer(t, Options{})
	parts := [][]byte{fixture(t, "odd_case_order.http"), fixture(t, "chunked_trailers.http"), fixture(t, "repeated_headers.http")}
	ans, _, _ := exchange(t, ts.addr, bytes.Join(parts, nil), 3)
	var prev int64
	for i, a := range ans {
		id := ackID(t, a)
		if id <= prev {
			t.Fatalf("ids out of arrival order: %d after %d", id, prev)
		}
		prev = id
		d, err := ts.st.GetDelivery(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(d.Raw, parts[i]) {
			t.Fatalf("request %d raw differs\nwant %q\ngot  %q", i+1, parts[i], d.Raw)
		}
	}
	if n := len(allDeliveries(t, ts.st)); n != 3 {
		t.Fatalf("%d deliveries stored, want 3", n)
	}
}

func TestKeepAliveSequence(t *testing.T) {
	ts := startServer(t, Options{})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	var sent [][]byte
	for i, f := range []string{"repeated_headers.http", "get_no_body.http", "chunked_trailers.http", "odd_case_order.http"} {
		b := fixture(t, f)
		// Split the write so request boundaries do not line up with reads.
		c.Write(b[:len(b)/2])
		time.Sleep(5 * time.Millisecond)
		c.Write(b[len(b)/2:])
		a := readAnswers(t, br, 1)[0]
		if a.status != 200 || a.close {
			t.Fatalf("request %d: status %d close %v", i+1, a.status, a.close)
		}
		sent = append(sent, b)
	}
	ds := allDeliveries(t, ts.st)
	if len(ds) != len(sent) {
		t.Fatalf("%d deliveries, want %d", len(ds), len(sent))
	}
	for i, d := range ds {
		if !bytes.Equal(d.Raw, sent[i]) {
			t.Errorf("delivery %d raw differs", i+1)
		}
	}
}

func TestConnectionCloseRules(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct {
		name      string
		req       string
		wantClose bool
		wantKA    bool // Connection: keep-alive in the answer
	}{
		{"http11 default keeps", "GET /a HTTP/1.1\r\nHost: x\r\n\r\n", false, false},
		{"http11 close", "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", true, false},
		{"http10 default closes", "GET /a HTTP/1.0\r\n\r\n", true, false},
		{"http10 keep-alive", "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans, c, br := exchange(t, ts.addr, []byte(tc.req), 1)
			a := ans[0]
			if a.status != 200 {
				t.Fatalf("status %d", a.status)
			}
			gotClose := a.close // http.ReadResponse turns Connection: close into Close
			if gotClose != tc.wantClose {
				t.Errorf("Connection: close = %v, want %v (headers %v)", gotClose, tc.wantClose, a.header)
			}
			if ka := strings.EqualFold(a.header.Get("Connection"), "keep-alive"); ka != tc.wantKA {
				t.Errorf("Connection: keep-alive = %v, want %v", ka, tc.wantKA)
			}
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			_, err := br.ReadByte()
			closed := err == io.EOF
			if closed != tc.wantClose {
				t.Errorf("connection closed = %v (%v), want %v", closed, err, tc.wantClose)
			}
		})
	}
}

func TestExpectContinue(t *testing.T) {
	ts := startServer(t, Options{})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	head := "POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
	c.Write([]byte(head))
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("interim answer %q %v", line, err)
	}
	br.ReadString('\n')
	c.Write([]byte("hello"))
	a := readAnswers(t, br, 1)[0]
	d, err := ts.st.GetDelivery(context.Background(), ackID(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Raw) != head+"hello" {
		t.Fatalf("raw %q", d.Raw)
	}
}

func TestForwardToHandler(t *testing.T) {
	type seen struct {
		method, uri, host, fwdHost, te, conn, ua string
		hdr                                      http.Header
		body                                     []byte
	}
	got := make(chan seen, 1)
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Get("X-Forwarded-Host"), strings.Join(r.TransferEncoding, ","),
			r.Header.Get("Connection"), r.Header.Get("User-Agent"), r.Header.Clone(), b}
		w.Header().Set("X-Handler", "yes")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "handled "+r.URL.Path)
	}))
	defer h.Close()
	ts := startServer(t, Options{Forward: h.URL + "/base/"})

	sent := fixture(t, "chunked_trailers.http")
	sent = bytes.Replace(sent, []byte("POST /chunked "), []byte("POST /chunked?q=1&r=2 "), 1)
	sent = bytes.Replace(sent, []byte("Host: localhost\r\n"), []byte("Host: localhost\r\nConnection: keep-alive, X-Conn-Only\r\nX-Conn-Only: drop me\r\nKeep-Alive: timeout=5\r\nX-Keep: kept\r\n"), 1)
	ans, _, _ := exchange(t, ts.addr, sent, 1)
	a := ans[0]
	if a.status != http.StatusAccepted || string(a.body) != "handled /base/chunked" || a.header.Get("X-Handler") != "yes" ||
		len(a.header.Values("Set-Cookie")) != 2 {
		t.Fatalf("answer %d %v %q", a.status, a.header, a.body)
	}
	s := <-got
	if s.method != "POST" || s.uri != "/base/chunked?q=1&r=2" || string(s.body) != `{"id":"evt_chunked","type":"a.b"}` {
		t.Fatalf("handler saw %s %s %q", s.method, s.uri, s.body)
	}
	if s.fwdHost != "localhost" || s.hdr.Get("X-Keep") != "kept" || s.hdr.Get("X-Conn-Only") != "" ||
		s.hdr.Get("Keep-Alive") != "" || s.hdr.Get("Trailer") != "" || s.te != "" || s.ua != "" {
		t.Fatalf("handler headers: host %q fwd %q te %q ua %q %v", s.host, s.fwdHost, s.te, s.ua, s.hdr)
	}
	// The handler's answer is recorded after the sender got it; shutdown
	// waits for every answer still queued.
	ts.stop(t)
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries", len(ds))
	}
	d := ds[0]
	if !bytes.Equal(d.Raw, sent) {
		t.Fatalf("raw differs")
	}
	if d.ResponseStatus != 202 || string(d.ResponseBody) != "handled /base/chunked" || d.ResponseHeaders.Get("X-Handler") != "yes" ||
		d.Latency <= 0 || d.ForwardError != "" {
		t.Fatalf("stored response %d %q %v %v %q", d.ResponseStatus, d.ResponseBody, d.ResponseHeaders, d.Latency, d.ForwardError)
	}
}

func TestForwardHandlerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	ts := startServer(t, Options{Forward: "http://" + dead})
	sent := fixture(t, "odd_case_order.http")
	ans, _, _ := exchange(t, ts.addr, sent, 1)
	if ans[0].status != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", ans[0].status)
	}
	id := ackID(t, ans[0])
	ts.stop(t) // the answer is recorded after the sender got it; stop waits for it
	d, err := ts.st.GetDelivery(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Raw, sent) || d.ResponseStatus != 502 || !strings.Contains(d.ForwardError, "connection refused") {
		t.Fatalf("kept delivery: status %d error %q", d.ResponseStatus, d.ForwardError)
	}
}

func TestForwardTimeout(t *testing.T) {
	release := make(chan struct{})
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer h.Close()
	defer close(release)
	ts := startServer(t, Options{Forward: h.URL, ForwardTimeout: 200 * time.Millisecond})
	ans, _, _ := exchange(t, ts.addr, fixture(t, "get_no_body.http"), 1)
	if ans[0].status != http.StatusGatewayTimeout {
		t.Fatalf("status %d, want 504", ans[0].status)
	}
	ts.stop(t) // the answer is recorded after the sender got it; stop waits for it
	d, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[0]))
	if err != nil || !strings.Contains(d.ForwardError, "did not answer") {
		t.Fatalf("delivery %+v %v", d, err)
	}
}

// stillServes checks a fresh connection is captured normally.
func stillServes(t *testing.T, ts *testServer) {
	t.Helper()
	ans, _, _ := exchange(t, ts.addr, fixture(t, "get_no_body.http"), 1)
	if ans[0].status != 200 {
		t.Fatalf("server no longer serving: %d", ans[0].status)
	}
	ackID(t, ans[0])
}

func TestRejectedRequestsAreNotStored(t *testing.T) {
	ts := startServer(t, Options{MaxBody: 1024, HeaderTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, MaxHeaderBytes: 4096})
	big := bytes.Repeat([]byte("a"), 2000)
	cases := []struct {
		name   string
		data   []byte
		status int
	}{
		{"content-length over max", append([]byte("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n"), big...), 413},
		{"chunked over max", []byte("POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" + string(big) + "\r\n0\r\n\r\n"), 413},
		{"malformed request line", fixture(t, "malformed_request_line.http"), 400},
		{"malformed header", fixture(t, "malformed_header.http"), 400},
		{"malformed chunk", fixture(t, "malformed_chunk.http"), 400},
		{"headers too large", []byte("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 300000) + "\r\n\r\n"), 431},
		{"headers too slow", []byte("POST /slow HTTP/1.1\r\nHost: x\r\n"), 408},
		{"body too slow", []byte("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"), 408},
		// A line cut by the deadline is a timeout, not a malformed line (net/http
		// reports it as one: these were 400 "malformed MIME header: missing colon",
		// "malformed HTTP version", "suspiciously long trailer").
		{"header line cut by the timeout", []byte("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Le"), 408},
		{"request line cut by the timeout", []byte("POST /slow HTT"), 408},
		{"trailer cut by the timeout", []byte("POST /slow HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1"), 408},
		{"http2 preface", []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 505},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans, c, br := exchange(t, ts.addr, tc.data, 1)
			if ans[0].status != tc.status || !ans[0].close {
				t.Fatalf("status %d close %v, want %d and close", ans[0].status, ans[0].close, tc.status)
			}
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("connection not closed after %d: %v", tc.status, err)
			}
			if n := len(allDeliveries(t, ts.st)); n != 0 {
				t.Fatalf("%d deliveries stored for a rejected request", n)
			}
		})
	}
	stillServes(t, ts)
	ts.stop(t)
	if !strings.Contains(ts.errOut.String(), "413 POST /big") || !strings.Contains(ts.errOut.String(), "not stored") {
		t.Errorf("rejections not reported on stderr:\n%s", ts.errOut)
	}
}

func TestConcurrentDeliveriesNoneMissing(t *testing.T) {
	ts := startServer(t, Options{})
	const n = 200
	var wg sync.WaitGroup
	sent := make([][]byte, n)
	ids := make([]int64, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		body := fmt.Sprintf(`{"id":"evt_%03d","type":"load.test","n":%d}`, i, i)
		sent[i] = []byte(fmt.Sprintf("POST /c/%d HTTP/1.1\r\nHost: x\r\nStripe-Signature: t=1,v1=x\r\nContent-Length: %d\r\n\r\n%s", i, len(body), body))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			c.Write(sent[i])
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			var v struct{ ID int64 }
			if resp.StatusCode != 200 || json.Unmarshal(b, &v) != nil {
				errs <- fmt.Errorf("request %d: %d %q", i, resp.StatusCode, b)
				return
			}
			ids[i] = v.ID
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, id := range ids {
		d, err := ts.st.GetDelivery(context.Background(), id)
		if err != nil {
			t.Fatalf("acknowledged delivery %d missing: %v", id, err)
		}
		if !bytes.Equal(d.Raw, sent[i]) || d.EventID != fmt.Sprintf("evt_%03d", i) {
			t.Fatalf("delivery %d holds another request: %q", id, d.Raw)
		}
	}
	if got := len(allDeliveries(t, ts.st)); got != n {
		t.Fatalf("%d deliveries stored, want %d", got, n)
	}
	ts.stop(t)
	if lines := strings.Count(ts.out.String(), "\n"); lines != n {
		t.Fatalf("%d output lines, want one per delivery (%d)", lines, n)
	}
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "late but fine")
	}))
	defer h.Close()
	ts := startServer(t, Options{Forward: h.URL})
	// An idle kept-alive connection must not hold shutdown up.
	idle, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	type res struct {
		a   answer
		err error
	}
	got := make(chan res, 1)
	go func() {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			got <- res{err: err}
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		c.Write(fixture(t, "get_no_body.http"))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			got <- res{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		got <- res{a: answer{status: resp.StatusCode, body: b, close: resp.Close}}
	}()
	<-entered
	ts.cancel() // SIGINT while the handler is still working
	time.Sleep(100 * time.Millisecond)
	if _, err := net.DialTimeout("tcp", ts.addr, time.Second); err == nil {
		t.Error("still accepting connections after shutdown began")
	}
	close(release)
	r := <-got
	if r.err != nil || r.a.status != 200 || string(r.a.body) != "late but fine" || !r.a.close {
		t.Fatalf("in-flight request: %+v %v", r.a, r.err)
	}
	ts.stop(t)
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 || ds[0].ResponseStatus != 200 || string(ds[0].ResponseBody) != "late but fine" {
		t.Fatalf("stored %d deliveries", len(ds))
	}
}

func TestVerificationResultStoredNotSecret(t *testing.T) {
	const secret = "whsec_capture_test_secret_value"
	fx := fixture(t, "odd_case_order.http")
	req, err := message.Parse(fx)
	if err != nil {
		t.Fatal(err)
	}
	req.Headers = req.Headers.Del("stripe-signature")
	now := time.Now()
	signed, err := verify.Sign(req, "stripe", secret, verify.Options{Now: now})
	if err != nil {
		t.Skipf("stripe signing not available: %v", err)
	}
	good := signed.Encode("127.0.0.1", "")
	bad := bytes.Replace(good, []byte(`"x":1`), []byte(`"x":2`), 1)

	ts := startServer(t, Options{Secret: secret})
	ans, _, _ := exchange(t, ts.addr, append(append([]byte{}, good...), bad...), 2)
	d1, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[0]))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[1]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d1.Verification, "valid (stripe") || !strings.Contains(d1.Verification, "before capture") {
		t.Errorf("good signature: %q", d1.Verification)
	}
	if !strings.HasPrefix(d2.Verification, "invalid: ") {
		t.Errorf("tampered body: %q", d2.Verification)
	}
	ts.stop(t)
	ts.st.Close()
	for _, f := range []string{ts.dbPath, ts.dbPath + "-wal"} {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("secret found in %s", f)
		}
	}
	if strings.Contains(ts.out.String()+ts.errOut.String(), secret) {
		t.Fatal("secret printed")
	}
}

// TestObserverHearsEachDelivery: the Observer is told of each stored
// delivery with what a live view shows (report.CaptureLine renders it; its
// test checks the rendered line).
func TestObserverHearsEachDelivery(t *testing.T) {
	ts := startServer(t, Options{Status: 202, Source: "unit"})
	exchange(t, ts.addr, fixture(t, "odd_case_order.http"), 1)
	ts.stop(t)
	line := ts.out.String()
	for _, want := range []string{"#1", "202", "stripe", "invoice.paid", "evt_1OddCase", "s "} {
		if !strings.Contains(line, want) {
			t.Errorf("output line %q lacks %q", line, want)
		}
	}
	ds := allDeliveries(t, ts.st)
	if ds[0].Source != "unit" || ds[0].ResponseStatus != 202 {
		t.Errorf("stored %q %d", ds[0].Source, ds[0].ResponseStatus)
	}
}

func TestShutdownCutsRequestsThatOutlastTheDrain(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer h.Close()
	defer close(release)
	ts := startServer(t, Options{Forward: h.URL, DrainTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent := fixture(t, "odd_case_order.http")
	c.Write(sent)
	<-entered
	start := time.Now()
	ts.stop(t)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("shutdown took %s with a handler that never answers", took)
	}
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 || !bytes.Equal(ds[0].Raw, sent) || ds[0].ForwardError != "capture stopped before the handler answered" {
		t.Fatalf("deliveries after cut drain: %d %+v", len(ds), ds)
	}
	if !strings.Contains(ts.errOut.String(), "still busy") {
		t.Errorf("cut not reported:\n%s", ts.errOut)
	}
}

// TestBodyBudget: the request bodies capture holds at once are bounded over
// all connections. A body of known length takes its room before it is read
// (a sender that finds none within the wait gets 503 with Retry-After and
// nothing is stored); small bodies need none; chunked bodies take room as
// they arrive, one of them at a time past the bound so that they cannot all
// wait on each other; every byte is given back once its request is
// answered. Before, 250 senders of 10MiB bodies took capture to 5.9 GB.
func TestBodyBudget(t *testing.T) {
	var srv *Server
	ts := startServer(t, Options{}, func(s *Server) {
		srv = s
		// The wait is what a chunked body may queue behind the one past the
		// bound: at 300 ms, one of the four below got 503 under -race while
		// the e2e package ran beside it (.ci/run's load); the 503 case waits
		// it out once.
		s.bodies.max, s.bodies.wait = 1<<20, 1500*time.Millisecond
	})
	used := func() int64 {
		srv.bodies.mu.Lock()
		defer srv.bodies.mu.Unlock()
		return srv.bodies.used
	}
	post := func(n int) []byte {
		return append([]byte(fmt.Sprintf("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", n)), bytes.Repeat([]byte("b"), n)...)
	}
	chunked := func(n int) []byte {
		b := []byte("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
		for ; n > 0; n -= 8192 {
			b = append(b, "2000\r\n"...)
			b = append(b, bytes.Repeat([]byte("c"), 8192)...)
			b = append(b, "\r\n"...)
		}
		return append(b, "0\r\n\r\n"...)
	}
	// A slow sender holds 900000 of the 1MiB.
	slow, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.SetDeadline(time.Now().Add(20 * time.Second))
	slowReq := post(900000)
	slow.Write(slowReq[:1000])
	for deadline := time.Now().Add(5 * time.Second); used() < 900000; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow body took %d bytes of the budget", used())
		}
	}

	ans, _, _ := exchange(t, ts.addr, post(500000), 1)
	if ans[0].status != http.StatusServiceUnavailable || ans[0].header.Get("Retry-After") != "1" || !ans[0].close ||
		!strings.Contains(string(ans[0].body), "request bodies at once") {
		t.Fatalf("a body that does not fit: %d %v %q, want 503 with Retry-After", ans[0].status, ans[0].header, ans[0].body)
	}
	if n := len(allDeliveries(t, ts.st)); n != 0 {
		t.Fatalf("%d deliveries stored", n)
	}
	if ans, _, _ := exchange(t, ts.addr, post(1000), 1); ans[0].status != 200 {
		t.Fatalf("a small body while the budget is full: %d %q", ans[0].status, ans[0].body)
	}
	var wg sync.WaitGroup
	statuses := make([]int, 4)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans, _, _ := exchange(t, ts.addr, chunked(600<<10), 1)
			statuses[i] = ans[0].status
		}()
	}
	wg.Wait()
	for i, st := range statuses {
		if st != 200 {
			t.Errorf("chunked body %d of 4 while the budget is full: status %d", i+1, st)
		}
	}

	slow.Write(slowReq[1000:])
	if a := readAnswers(t, bufio.NewReader(slow), 1)[0]; a.status != 200 {
		t.Fatalf("the slow body: %d %q", a.status, a.body)
	}
	if ans, _, _ := exchange(t, ts.addr, post(500000), 1); ans[0].status != 200 {
		t.Fatalf("once the slow body was stored: %d %q", ans[0].status, ans[0].body)
	}
	for deadline := time.Now().Add(5 * time.Second); used() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of the budget still taken after every request was answered", used())
		}
	}
	if n := len(allDeliveries(t, ts.st)); n != 7 {
		t.Fatalf("%d deliveries stored, want 7", n)
	}
}
