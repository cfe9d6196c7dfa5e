//go:build slow

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// A Postgres restart while capture runs under load: capture answers 503
// while it cannot commit, reconnects by itself when the server is back,
// and every delivery it acknowledged is stored byte for byte. The server is
// a private one (testkit.StartPostgres): the shared one is not restarted
// under other tests.
func TestPostgresE2ERestartDuringCapture(t *testing.T) {
	srv := testkit.StartPostgres(t)
	db := srv.DSN()
	p, addr := captureStart(t, db)
	var (
		mu       sync.Mutex
		acks     = map[string][]byte{} // event id -> bytes sent
		unavail  atomic.Int64          // 503s
		other    atomic.Int64          // anything else that is not 2xx
		stop     atomic.Bool
		wg       sync.WaitGroup
		counter  atomic.Int64
		acked    atomic.Int64
		otherMsg atomic.Value
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n := counter.Add(1)
				evt := fmt.Sprintf("evt_restart_%d", n)
				body := fmt.Sprintf(`{"id":%q,"type":"load.restart"}`, evt)
				req := []byte(fmt.Sprintf("POST /r/%d HTTP/1.1\r\nHost: r\r\nStripe-Signature: t=1,v1=00\r\nContent-Length: %d\r\n\r\n%s", n, len(body), body))
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					otherMsg.Store(err.Error())
					other.Add(1)
					return
				}
				c.SetDeadline(time.Now().Add(30 * time.Second))
				resp, err := func() (*http.Response, error) {
					if _, err := c.Write(req); err != nil {
						return nil, err
					}
					return http.ReadResponse(bufio.NewReader(c), nil)
				}()
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				c.Close()
				switch {
				case err != nil:
					otherMsg.Store(err.Error())
					other.Add(1)
				case resp.StatusCode/100 == 2:
					mu.Lock()
					acks[evt] = req
					mu.Unlock()
					acked.Add(1)
				case resp.StatusCode == http.StatusServiceUnavailable:
					unavail.Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					otherMsg.Store(resp.Status)
					other.Add(1)
				}
			}
		}()
	}
	waitAcked := func(n int64, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for acked.Load() < n {
			if time.Now().After(deadline) {
				_, stderr := p.Output()
				t.Fatalf("only %d acknowledged (want %d); 503s %d; capture:\n%s", acked.Load(), n, unavail.Load(), stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitAcked(30, 20*time.Second)
	srv.Stop()
	down := time.Now()
	time.Sleep(time.Second)
	ackedDown := acked.Load()
	srv.Start()
	back := time.Now()
	waitAcked(ackedDown+30, 30*time.Second)
	recovered := time.Since(back)
	stop.Store(true)
	wg.Wait()
	p.stop(5 * time.Second)

	_, stderr := p.Output()
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "503 ") {
			t.Logf("capture said: %s", line)
			break
		}
	}
	if unavail.Load() == 0 {
		t.Fatal("no 503 while Postgres was down: capture answered without committing?")
	}
	if other.Load() > 0 {
		t.Fatalf("%d answers neither 2xx nor 503 (last: %v)", other.Load(), otherMsg.Load())
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := map[string][]byte{}
	if err := st.EachDelivery(context.Background(), store.Filter{}, func(d *store.Delivery) error {
		stored[d.EventID] = d.Raw
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for evt, sent := range acks {
		raw, ok := stored[evt]
		if !ok {
			t.Fatalf("acknowledged delivery %s lost across the restart (%d acknowledged, %d stored)", evt, len(acks), len(stored))
		}
		if !bytes.Equal(raw, sent) {
			t.Fatalf("delivery %s: stored bytes differ from the sent ones", evt)
		}
	}
	t.Logf("%d acknowledged, all stored; %d answered 503 while Postgres was down (%s); commits again %s after it was back",
		len(acks), unavail.Load(), back.Sub(down).Round(time.Millisecond), recovered.Round(time.Millisecond))
}
