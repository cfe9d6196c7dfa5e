package capture

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// TestHeaderBlockEndsWhereNetHTTPEndsIt: a header block that ends in
// "\n\r\n" (a bare-LF line end, then an empty CRLF line) ends there, as it
// does for net/http, which read the body by that framing. The body's bytes
// used to be parsed as more header lines: "Stripe-Signature" and "X-Bare-CR"
// from the body were stored as headers, the delivery was detected as Stripe
// and --forward/replay sent them to the handler as headers.
func TestHeaderBlockEndsWhereNetHTTPEndsIt(t *testing.T) {
	ts := startServer(t, Options{})
	sent := fixture(t, "body_after_lf_crlf.http")
	ans, _, _ := exchange(t, ts.addr, sent, 1)
	if ans[0].status != 200 {
		t.Fatalf("status %d: %s", ans[0].status, ans[0].body)
	}
	d, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[0]))
	if err != nil {
		t.Fatal(err)
	}
	_, wantBody, _ := bytes.Cut(sent, []byte("\n\r\n"))
	want := message.Headers{{Name: "Host", Value: "x"}, {Name: "Content-Length", Value: "68"}}
	if len(d.Headers) != len(want) || d.Headers[0] != want[0] || d.Headers[1] != want[1] {
		t.Errorf("headers %q, want %q", d.Headers, want)
	}
	if !bytes.Equal(d.Body, wantBody) || len(d.Body) != 68 {
		t.Errorf("body %q, want %q", d.Body, wantBody)
	}
	if d.Provider == "stripe" {
		t.Errorf("detected as %s from header lines inside the body", d.Provider)
	}
	if !bytes.Equal(d.Raw, sent) {
		t.Errorf("raw %q, want %q", d.Raw, sent)
	}
}

// TestHeaderSyntaxAndHostRejected: field lines that RFC 9112 §5 does not
// allow (a bare CR, obsolete line folding, a name that is not a token) and an
// HTTP/1.1 request without exactly one valid Host (§3.2) are answered 400,
// not stored, and the connection is closed. An HTTP/1.0 request needs no Host.
func TestHeaderSyntaxAndHostRejected(t *testing.T) {
	ts := startServer(t, Options{})
	for _, tc := range []struct{ file, why string }{
		{"bare_cr_in_value.http", ""},
		{"obs_fold.http", "line folding"},
		{"non_token_name.http", ""},
		{"host_missing.http", "Host"},
		{"host_twice.http", "Host"},
		{"host_invalid.http", "Host"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ans, c, br := exchange(t, ts.addr, fixture(t, tc.file), 1)
			if ans[0].status != 400 || !ans[0].close {
				t.Fatalf("status %d close %v, want 400 and close: %s", ans[0].status, ans[0].close, ans[0].body)
			}
			if !strings.Contains(string(ans[0].body), tc.why) {
				t.Errorf("answer %q does not say why (%q)", ans[0].body, tc.why)
			}
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("connection not closed after 400: %v", err)
			}
			if ds := allDeliveries(t, ts.st); len(ds) != 0 {
				t.Fatalf("%d deliveries stored, headers %q", len(ds), ds[0].Headers)
			}
		})
	}
	ans, _, _ := exchange(t, ts.addr, fixture(t, "http10_no_host.http"), 1)
	if ans[0].status != 200 {
		t.Fatalf("HTTP/1.0 without Host: status %d: %s", ans[0].status, ans[0].body)
	}
	stillServes(t, ts)
}

// TestMalformedRequestLineLoggedTruncated: a 1 MiB malformed request line
// used to be written whole to stderr, terminal escapes and all.
func TestMalformedRequestLineLoggedTruncated(t *testing.T) {
	ts := startServer(t, Options{})
	line := "BAD\x1b]0;title\x07\x1b[2J" + strings.Repeat("A", 1<<20)
	ans, _, _ := exchange(t, ts.addr, []byte(line+"\r\nHost: x\r\n\r\n"), 1)
	if ans[0].status != 400 {
		t.Fatalf("status %d", ans[0].status)
	}
	if len(ans[0].body) > 1000 {
		t.Errorf("answer is %d bytes long", len(ans[0].body))
	}
	ts.stop(t)
	log := ts.errOut.String()
	if len(log) > 1000 {
		t.Errorf("logged %d bytes for one rejected request", len(log))
	}
	if strings.ContainsAny(log, "\x1b\x07") {
		t.Errorf("control bytes logged unescaped: %q", log)
	}
	if !strings.Contains(log, `BAD\x1b]0;title\x07`) || !strings.Contains(log, "400") {
		t.Errorf("log does not show the start of the line, escaped: %q", log)
	}
}

// TestHeaderFieldsBounded: a header section of more than 1000 field lines
// is refused with 431, whether it arrives in one read or trickles in; 1000
// are stored. Within the 1MiB byte limit a sender could send 130000 tiny
// fields, each costing net/http and capture ten times its size to parse and
// store: 250 such senders at once took capture to 860 MB, and 199 of them
// were not even read within the header timeout.
func TestHeaderFieldsBounded(t *testing.T) {
	ts := startServer(t, Options{})
	head := func(n int) string {
		return "POST /fields HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: 1\r\n", n-2) + "Content-Length: 5\r\n\r\nhello"
	}
	ans, _, _ := exchange(t, ts.addr, []byte(head(1000)), 1)
	if ans[0].status != 200 {
		t.Fatalf("1000 fields: %d %q", ans[0].status, ans[0].body)
	}
	d, err := ts.st.GetDelivery(context.Background(), ackID(t, ans[0]))
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Raw) != head(1000) || len(d.Headers) != 1000 {
		t.Fatalf("stored %d headers, raw %d bytes", len(d.Headers), len(d.Raw))
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"in one read", []byte(head(1001))},
		{"trickled", []byte(head(200000))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			go func() {
				for b := tc.data; len(b) > 0; b = b[min(len(b), 1000):] {
					if _, err := c.Write(b[:min(len(b), 1000)]); err != nil {
						return
					}
				}
			}()
			a := readAnswers(t, bufio.NewReader(c), 1)[0]
			if a.status != 431 || !strings.Contains(string(a.body), "more than 1000 header fields") {
				t.Fatalf("status %d %q, want 431 saying why", a.status, a.body)
			}
		})
	}
	if n := len(allDeliveries(t, ts.st)); n != 1 {
		t.Fatalf("%d deliveries stored, want 1", n)
	}
}
