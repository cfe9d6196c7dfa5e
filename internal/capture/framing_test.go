package capture

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAmbiguousFramingRejected: requests whose body length depends on which
// header a server believes (RFC 9112 §6.1 Transfer-Encoding with
// Content-Length, §5.1 whitespace between a field name and its colon) are the
// shapes of request smuggling. Storing them would store what capture guessed,
// not what the sender meant — net/http ignores Transfer-Encoding in an
// HTTP/1.0 request and reads its chunked body as empty, §6.1 says such
// framing is faulty — (and keeping the connection would turn a
// smuggled body into a delivery of its own): they are answered 400, nothing
// is stored and the connection is closed.
func TestAmbiguousFramingRejected(t *testing.T) {
	ts := startServer(t, Options{})
	for _, name := range []string{
		"smuggle_te_cl.http",
		"te_and_cl.http",
		"space_before_colon_cl.http",
		"space_before_colon_te.http",
		"space_before_colon.http",
		"http10_chunked.http",
	} {
		t.Run(name, func(t *testing.T) {
			ans, c, br := exchange(t, ts.addr, fixture(t, name), 1)
			if ans[0].status != 400 || !ans[0].close {
				t.Fatalf("status %d close %v, want 400 and close", ans[0].status, ans[0].close)
			}
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("connection not closed after 400: %v", err)
			}
			if ds := allDeliveries(t, ts.st); len(ds) != 0 {
				t.Fatalf("%d deliveries stored (first %s %s, body %q)", len(ds), ds[0].Method, ds[0].Target, ds[0].Body)
			}
		})
	}
	stillServes(t, ts)
}

// TestChunkFramingBounded: a chunked body whose framing dwarfs its data
// (one-byte chunks with chunk extensions, which net/http lets through at
// about twenty wire bytes per data byte) is refused with 413 once its wire
// bytes pass twice --max-body (plus room for trailers). Before, a 10MiB
// body sent that way held 200MB of raw bytes per connection, and stored
// them. An ordinary chunked body of --max-body is stored.
func TestChunkFramingBounded(t *testing.T) {
	const maxBody = 64 << 10
	ts := startServer(t, Options{MaxBody: maxBody})
	var framed strings.Builder
	framed.WriteString("POST /framing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	for i := 0; i < maxBody-100; i++ {
		framed.WriteString("1;aaaaaaaaaaaaa\r\nx\r\n")
	}
	framed.WriteString("0\r\n\r\n")
	ans, _, _ := exchange(t, ts.addr, []byte(framed.String()), 1)
	if ans[0].status != http.StatusRequestEntityTooLarge || !ans[0].close || !strings.Contains(string(ans[0].body), "chunk framing") {
		t.Fatalf("status %d close %v %q, want 413 saying why", ans[0].status, ans[0].close, ans[0].body)
	}
	if ds := allDeliveries(t, ts.st); len(ds) != 0 {
		t.Fatalf("%d deliveries stored, raw %d bytes", len(ds), len(ds[0].Raw))
	}
	var plain strings.Builder
	plain.WriteString("POST /plain HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	for i := 0; i < maxBody/1024; i++ {
		plain.WriteString("400\r\n" + strings.Repeat("b", 1024) + "\r\n")
	}
	plain.WriteString("0\r\nX-Trailer: 1\r\n\r\n")
	ans, _, _ = exchange(t, ts.addr, []byte(plain.String()), 1)
	if ans[0].status != 200 {
		t.Fatalf("a chunked body of --max-body: status %d %q", ans[0].status, ans[0].body)
	}
	d, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[0]))
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Raw) != plain.String() || len(d.Body) != maxBody {
		t.Fatalf("stored raw %d bytes (sent %d), body %d", len(d.Raw), plain.Len(), len(d.Body))
	}
}
