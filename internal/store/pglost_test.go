package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// commitCutter forwards loopback connections to the server of dsn and,
// once armed, drops the connection on which the server answers a COMMIT,
// instead of passing that answer on: the server committed, the client
// never hears it. It returns the proxy's address.
func commitCutter(t *testing.T, dsn string, armed *atomic.Bool, cut *atomic.Int32) string {
	return commitCutterFatal(t, dsn, armed, cut, false)
}

// pgFatal is the ErrorResponse a server stopping sends last: FATAL 57P01.
var pgFatal = func() []byte {
	var f []byte
	for _, kv := range [][2]string{{"S", "FATAL"}, {"V", "FATAL"}, {"C", "57P01"}, {"M", "terminating connection due to administrator command"}} {
		f = append(append(append(f, kv[0][0]), kv[1]...), 0)
	}
	f = append(f, 0)
	return append(binary.BigEndian.AppendUint32([]byte{'E'}, uint32(len(f)+4)), f...)
}()

// commitCutterFatal is commitCutter; with fatal it passes the COMMIT's
// answer on and then ends the connection as a server stopping during the
// commit does (pg_ctl stop -m fast, pg_terminate_backend: the commit is
// flushed first), with FATAL 57P01, before the rest of the answers.
func commitCutterFatal(t *testing.T, dsn string, armed *atomic.Bool, cut *atomic.Int32, fatal bool) string {
	t.Helper()
	return pgProxyEach(t, dsn, func(c, s net.Conn) {
		go func() { io.Copy(s, c); s.Close() }()
		go func() {
			defer c.Close()
			defer s.Close()
			// pgx sends no SSL request with sslmode=disable, so
			// every answer is a message: type byte, then a length
			// that counts itself.
			hdr := make([]byte, 5)
			for {
				if _, err := io.ReadFull(s, hdr); err != nil {
					return
				}
				n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
				body := make([]byte, n)
				if _, err := io.ReadFull(s, body); err != nil {
					return
				}
				if hdr[0] == 'C' && bytes.HasPrefix(body, []byte("COMMIT")) && armed.Load() {
					armed.Store(false)
					cut.Add(1)
					if fatal {
						c.Write(append(append(hdr, body...), pgFatal...))
					}
					return
				}
				if _, err := c.Write(append(hdr, body...)); err != nil {
					return
				}
				hdr = make([]byte, 5)
			}
		}()
	})
}

// A group commit whose COMMIT answer is lost (the connection drops after
// the server committed) is found in the store and reported committed, with
// its ids: capture then acknowledges it once, rather than committing each
// delivery again on its own (stored twice). A commit that did not happen
// is still reported failed.
func TestPostgresCommitAnswerLost(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	t.Run("connection cut", func(t *testing.T) { t.Parallel(); testCommitAnswerLost(t, false) })
	// COMMIT's answer arrives, then the server's FATAL: pgx reports the
	// batch failed with a server error, on a connection it closed.
	t.Run("server stopping", func(t *testing.T) { t.Parallel(); testCommitAnswerLost(t, true) })
}

func testCommitAnswerLost(t *testing.T, fatal bool) {
	loc := testkit.PostgresSchema(t, "commitlost")
	ctx := context.Background()
	deliveriesOpen(t, loc).Close()
	var armed atomic.Bool
	var cut atomic.Int32
	s := deliveriesOpen(t, viaProxy(t, loc, commitCutterFatal(t, loc, &armed, &cut, fatal)))
	w := writerOpen(t, s)
	base := time.Now()
	group := func(tag string, n int) []*Delivery {
		var ds []*Delivery
		for i := range n {
			ds = append(ds, &Delivery{Method: "POST", Target: "/" + tag, ReceivedAt: base.Add(time.Duration(len(tag)*100+i) * time.Microsecond),
				Raw: []byte(fmt.Sprintf("POST /%s HTTP/1.1\r\nHost: x\r\n\r\n%d", tag, i))})
		}
		return ds
	}
	armed.Store(true)
	ds := group("lost", 3)
	if err := w.Commit(ctx, ds, nil); err != nil {
		t.Fatalf("a commit whose answer was lost after the server committed failed: %v (capture would store its deliveries again)", err)
	}
	if cut.Load() != 1 {
		t.Fatalf("the proxy cut %d COMMIT answers, want 1: the test did not lose the answer", cut.Load())
	}
	for i, d := range ds {
		if d.ID == 0 {
			t.Errorf("delivery %d has no id after the commit was found", i)
		}
	}
	// The next commit uses the new connection.
	if err := w.Commit(ctx, group("next", 2), nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListDeliveries(ctx, Filter{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, d := range got {
		targets = append(targets, d.Target)
	}
	if want := "/lost /lost /lost /next /next"; strings.Join(targets, " ") != want {
		t.Fatalf("stored %q, want %q", strings.Join(targets, " "), want)
	}
	for i, d := range got[:3] {
		if d.ID != ds[i].ID {
			t.Errorf("delivery %d: id %d reported, %d stored", i, ds[i].ID, d.ID)
		}
	}
}

// A connection lost before its COMMIT reached the server stored nothing:
// the Commit fails (capture answers 503 or commits each delivery again),
// and is not mistaken for one whose answer was lost.
func TestPostgresCommitLostBeforeTheServer(t *testing.T) {
	t.Parallel()
	app := fmt.Sprintf("hr_lostbefore_%d", time.Now().UnixNano())
	loc := testkit.PostgresSchema(t, "lostbefore") + "&application_name=" + app
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	w := writerOpen(t, s)
	testkit.PostgresExec(t, loc, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = '`+app+`' AND pid <> pg_backend_pid()`)
	d := &Delivery{Method: "POST", Target: "/gone", Raw: []byte("gone"), ReceivedAt: time.Now()}
	if err := w.Commit(ctx, []*Delivery{d}, nil); err == nil {
		t.Fatal("a commit on a terminated connection succeeded: the test did not cut the writer's connection")
	}
	got, err := s.ListDeliveries(ctx, Filter{Oldest: true})
	if err != nil || len(got) != 0 {
		t.Fatalf("after a commit that failed: %d deliveries stored, %v", len(got), err)
	}
}
