package store

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// flights counts the round trips of the connections through it: each time
// the client sends after the server has answered (or first) is one.
type flights struct {
	mu   sync.Mutex
	n    int
	last map[net.Conn]bool // true: the server spoke last on this connection
}

// pgProxy forwards loopback connections to the server of dsn and counts
// their round trips; it returns the proxy's address.
func pgProxy(t *testing.T, dsn string, f *flights) string {
	t.Helper()
	f.last = map[net.Conn]bool{}
	return pgProxyEach(t, dsn, func(c, s net.Conn) {
		f.mu.Lock()
		f.last[c] = true
		f.mu.Unlock()
		pipe := func(dst, src net.Conn, client bool) {
			buf := make([]byte, 64<<10)
			for {
				n, err := src.Read(buf)
				if n > 0 {
					f.mu.Lock()
					if client && f.last[c] {
						f.n++
					}
					f.last[c] = !client
					f.mu.Unlock()
					dst.Write(buf[:n])
				}
				if err != nil {
					dst.Close()
					return
				}
			}
		}
		go pipe(s, c, true)
		go pipe(c, s, false)
	})
}

// pgProxyEach accepts loopback connections, dials the server of dsn for
// each and hands both to serve (on the accepting goroutine: serve starts
// its own); it returns the proxy's address.
func pgProxyEach(t *testing.T, dsn string, serve func(client, server net.Conn)) string {
	t.Helper()
	network, addr, ln := proxyListen(t, dsn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial(network, addr)
			if err != nil {
				c.Close()
				continue
			}
			serve(c, s)
		}
	}()
	return ln.Addr().String()
}

// proxyListen is a proxy's listener on loopback and the server of dsn it
// forwards to (a Unix socket when dsn names a directory as its host).
func proxyListen(t *testing.T, dsn string) (network, addr string, ln net.Listener) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	network, addr = "tcp", fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return network, addr, ln
}

// viaProxy is dsn's store reached through the proxy at addr.
func viaProxy(t *testing.T, dsn, addr string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: addr, Path: "/" + cfg.Database,
		RawQuery: "sslmode=disable&search_path=" + url.QueryEscape(cfg.RuntimeParams["search_path"])}
	return u.String()
}

// TestPostgresOpenAndListRoundTrips: opening a store whose schema is
// current costs the connection's start-up and one round trip (9 in all
// before: a ping, then the version and the trust check read as prepared
// statements, each a prepare and an execute), and a page of list one more
// (3 before: the pool's ping of a connection just opened, a prepare, an
// execute).
func TestPostgresOpenAndListRoundTrips(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	loc := testkit.PostgresSchema(t, "openrt")
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	if err := s.ImportDeliveries(ctx, []*Delivery{benchDelivery(1), benchDelivery(2)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var f flights
	proxied := viaProxy(t, loc, pgProxy(t, loc, &f))
	count := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.n
	}
	s, err := Open(ctx, proxied)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The start-up (with trust authentication: one exchange) and the query.
	if n := count(); n != 2 {
		t.Errorf("opening a current store took %d round trips, want 2 (start-up, then one statement)", n)
	}
	for page := 1; page <= 2; page++ {
		rows := 0
		if err := s.EachSummary(ctx, Filter{Provider: "stripe"}, Page{Limit: 50}, func(DeliverySummary) error { rows++; return nil }); err != nil || rows != 2 {
			t.Fatalf("page %d: %d rows, %v", page, rows, err)
		}
		if n := count(); n != 2+page {
			t.Errorf("after page %d of list: %d round trips in all, want %d (one per page)", page, n, 2+page)
		}
	}
}
