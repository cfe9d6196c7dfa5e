package capture

import (
	"io"
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
