package replay

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// Sequential copies reuse one kept-alive connection per worker; a burst
// still opens one per copy.
func TestRunSeqReusesConnections(t *testing.T) {
	var conns atomic.Int64
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	tgt := Target{URL: &url.URL{Scheme: "http", Host: l.Addr().String()}, Timeout: 5 * time.Second}
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")

	var sink collect
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: tgt, Copies: 20, Concurrency: 2}, &sink)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	for _, a := range res.Attempts {
		if a.Status != 200 || a.ConnID == 0 {
			t.Fatalf("attempt %+v", a)
		}
		ids[a.ConnID] = true
	}
	if n := conns.Load(); n > 2 || len(ids) > 2 {
		t.Fatalf("20 copies at concurrency 2 opened %d connections (%d ids), want at most 2", n, len(ids))
	}

	conns.Store(0)
	if _, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: tgt, Copies: 5, Order: OrderBurst}, &sink); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 5 {
		t.Fatalf("a burst of 5 opened %d connections, want 5", n)
	}
}

// A handler that closes a kept-alive connection after answering (without
// saying Connection: close) gets every copy exactly once: a copy that finds
// the connection closed goes again on a fresh one.
func TestRunSeqStaleKeptConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var reqs atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				r.Body.Close()
				reqs.Add(1)
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
				time.Sleep(5 * time.Millisecond)
			}()
		}
	}()
	tgt := Target{URL: &url.URL{Scheme: "http", Host: l.Addr().String()}, Timeout: 5 * time.Second}
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	var sink collect
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: tgt, Copies: 10}, &sink)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Attempts {
		if a.Status != 200 {
			t.Fatalf("attempt %+v", a)
		}
	}
	if n := reqs.Load(); n != 10 {
		t.Fatalf("handler saw %d requests, want 10", n)
	}
}
