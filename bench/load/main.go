// Command load is the load generator behind bench/capture.sh. It serves a
// minimal webhook handler and sends the same delivery to several URLs,
// reporting requests/s and p50/p99 latency of each as a ratio against the first.
//
//	load serve -addr-file /tmp/handler.addr
//	load run -c 8 -n 4000 -body payload.json direct=http://H/hook capture=http://C/hook
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: load serve|run [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q (serve or run)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// serve runs the handler every target ends at: it reads the body, spends
// -delay on it and answers 200 with a small JSON body.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	addrFile := fs.String("addr-file", "", "write the listening address here")
	delay := fs.Duration("delay", 0, "time the handler spends on each delivery (its own work)")
	fs.Parse(args)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile+".tmp", []byte(ln.Addr().String()), 0o600); err != nil {
			return err
		}
		if err := os.Rename(*addrFile+".tmp", *addrFile); err != nil {
			return err
		}
	}
	// GET /spread answers "COUNT SPREAD_NS" of the bodies fully received
	// since the last GET /spread (bench/burst.sh) and starts over.
	var mu sync.Mutex
	var lo, hi time.Time
	count := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/spread" {
			mu.Lock()
			fmt.Fprintf(w, "%d %d\n", count, hi.Sub(lo).Nanoseconds())
			lo, hi, count = time.Time{}, time.Time{}, 0
			mu.Unlock()
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		at := time.Now()
		mu.Lock()
		if count == 0 || at.Before(lo) {
			lo = at
		}
		if at.After(hi) {
			hi = at
		}
		count++
		mu.Unlock()
		time.Sleep(*delay)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"received":%d}`, n)
	})}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

type target struct {
	name, url string
	lat       []time.Duration
	elapsed   time.Duration
	errors    int64
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	conc := fs.Int("c", 8, "concurrent connections (keep-alive)")
	n := fs.Int("n", 3000, "requests per target")
	rounds := fs.Int("rounds", 3, "interleave targets over this many rounds, so drift in machine load hits each alike")
	bodyFile := fs.String("body", "", "request body file")
	fs.Parse(args)
	if fs.NArg() == 0 {
		return fmt.Errorf("give targets as name=url")
	}
	body := []byte(`{"id":"evt_bench","type":"bench.test"}`)
	if *bodyFile != "" {
		b, err := os.ReadFile(*bodyFile)
		if err != nil {
			return err
		}
		body = b
	}
	var ts []*target
	for _, a := range fs.Args() {
		name, url, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("target %q is not name=url", a)
		}
		ts = append(ts, &target{name: name, url: url})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc, MaxConnsPerHost: *conc, DisableCompression: true}}
	var seq atomic.Int64
	send := func(t *target) (time.Duration, error) {
		id := seq.Add(1)
		req, _ := http.NewRequest("POST", t.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Stripe-Signature", fmt.Sprintf("t=%d,v1=%064x", time.Now().Unix(), id))
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode/100 != 2 {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(start), err
	}
	for _, t := range ts { // warm up connections and caches
		for i := 0; i < 100; i++ {
			if _, err := send(t); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
		}
	}
	per := *n / *rounds
	for r := 0; r < *rounds; r++ {
		for _, t := range ts {
			var mu sync.Mutex
			var wg sync.WaitGroup
			var left atomic.Int64
			left.Store(int64(per))
			start := time.Now()
			for w := 0; w < *conc; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine []time.Duration
					for left.Add(-1) >= 0 {
						d, err := send(t)
						if err != nil {
							atomic.AddInt64(&t.errors, 1)
							continue
						}
						mine = append(mine, d)
					}
					mu.Lock()
					t.lat = append(t.lat, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			t.elapsed += time.Since(start)
		}
	}
	base := ts[0]
	bRPS, bP50, bP99 := stats(base)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "target\trequests\terrors\treq/s\tp50\tp99\treq/s ratio\tp50 ratio\tp99 ratio\t\n")
	for _, t := range ts {
		rps, p50, p99 := stats(t)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%.2f\t%.2f\t%.2f\t\n", t.name, len(t.lat), t.errors, rps,
			ms(p50), ms(p99), rps/bRPS, float64(p50)/float64(bP50), float64(p99)/float64(bP99))
	}
	tw.Flush()
	fmt.Printf("\n%d connections, %d requests per target in %d interleaved rounds, %d-byte body; ratios are against %q\n",
		*conc, per**rounds, *rounds, len(body), base.name)
	return nil
}

func stats(t *target) (rps float64, p50, p99 time.Duration) {
	if len(t.lat) == 0 {
		return 0, 0, 0
	}
	sort.Slice(t.lat, func(i, j int) bool { return t.lat[i] < t.lat[j] })
	pct := func(p float64) time.Duration { return t.lat[int(p*float64(len(t.lat)-1))] }
	return float64(len(t.lat)) / t.elapsed.Seconds(), pct(0.50), pct(0.99)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }
