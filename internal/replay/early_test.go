package replay

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// startEarlyAnswerer is a handler that, like auth middleware or a proxy's
// body limit, answers from the headers alone (401) and closes the
// connection without reading the body; with a big body the sender's write
// then fails with a reset.
func startEarlyAnswerer(t *testing.T) Target {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
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
				c.Write([]byte("HTTP/1.1 401 Unauthorized\r\nContent-Length: 17\r\nConnection: close\r\n\r\nbad signature :-("))
				time.Sleep(20 * time.Millisecond)
			}()
		}
	}()
	u, _ := url.Parse("http://" + l.Addr().String() + "/hooks")
	return Target{URL: u, Timeout: 5 * time.Second}
}

// TestHandlerAnswersBeforeReadingTheBody: the copy is recorded with the
// handler's 401, not as "write request: connection reset by peer" — which is
// what a real provider's HTTP client reports too — in Send and in a burst.
func TestHandlerAnswersBeforeReadingTheBody(t *testing.T) {
	tgt := startEarlyAnswerer(t)
	_, req := loadFixture(t, "stripe_invoice_paid.http")
	big := req.Clone()
	big.Body = append(bytes.Repeat([]byte(" "), 8<<20), req.Body...)
	check := func(name string, a attemptView) {
		t.Helper()
		if a.Status != 401 || a.Err != "" || string(a.Body) != "bad signature :-(" {
			t.Errorf("%s: status %d err %q body %q, want the handler's 401", name, a.Status, a.Err, a.Body)
		}
	}
	a := Send(context.Background(), tgt, big, SendOptions{})
	check("send", attemptView{a.Status, a.Err, a.ResponseBody})
	for i, a := range Burst(context.Background(), tgt, []*message.Request{big, big, big}, SendOptions{}) {
		check("burst copy "+strings.Repeat("I", i+1), attemptView{a.Status, a.Err, a.ResponseBody})
	}
	// A handler that is simply gone is still an error.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	u, _ := url.Parse("http://" + addr)
	if a := Send(context.Background(), Target{URL: u, Timeout: time.Second}, big, SendOptions{}); a.Err == "" || a.Status != 0 {
		t.Errorf("refused connection recorded as %+v", a)
	}
}

type attemptView struct {
	Status int
	Err    string
	Body   []byte
}
