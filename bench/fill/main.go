// Command fill writes N realistic deliveries into a hookreplay store quickly,
// for bench/store.sh: Stripe, GitHub and Shopify-like requests with distinct
// event ids, ~1.5 KB bodies and answered responses, in batched transactions.
// With -tui it instead times the store queries the TUI's deliveries view runs
// before its first render (the count and the first window of 120 rows);
// with -list, what `hookreplay list` asks of the store (open it, read the
// newest 50 summaries), without the process start.
//
//	fill -db /tmp/h.db -n 1000000
//	fill -db /tmp/h.db -tui
//	fill -db /tmp/h.db -list
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

func main() {
	db := flag.String("db", "", "store to fill (created when absent)")
	n := flag.Int("n", 100000, "deliveries to write")
	tui := flag.Bool("tui", false, "time the TUI's first queries (ms) instead of filling")
	list := flag.Bool("list", false, "time list's store work, open and the newest 50 (ms), instead of filling")
	flag.Parse()
	run := func() error { return fill(*db, *n) }
	switch {
	case *tui:
		run = func() error { return tuiQuery(*db) }
	case *list:
		run = func() error { return listQuery(*db) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fill:", err)
		os.Exit(1)
	}
}

var kinds = []struct{ provider, path, typ string }{
	{"stripe", "/webhooks/stripe", "invoice.paid"},
	{"stripe", "/webhooks/stripe", "payment_intent.succeeded"},
	{"github", "/webhooks/github", "push"},
	{"shopify", "/webhooks/shopify", "orders/create"},
}

func fill(path string, n int) error {
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	pad := make([]byte, 1200)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	start := time.Now().Add(-time.Duration(n) * time.Second)
	const batch = 5000
	ds := make([]*store.Delivery, 0, batch)
	for i := 0; i < n; i++ {
		k := kinds[i%len(kinds)]
		evt := fmt.Sprintf("evt_%012d", i)
		body := []byte(fmt.Sprintf(`{"id":%q,"type":%q,"created":%d,"data":{"object":{"customer":"cus_%06d","amount":%d,"note":%q}}}`,
			evt, k.typ, start.Unix()+int64(i), i%5000, 100+i%9000, pad))
		hs := message.Headers{{Name: "Host", Value: "hooks.example.test"}, {Name: "User-Agent", Value: "Stripe/1.0"},
			{Name: "Content-Type", Value: "application/json"}, {Name: "Content-Length", Value: fmt.Sprint(len(body))},
			{Name: "Stripe-Signature", Value: fmt.Sprintf("t=%d,v1=%064x", start.Unix()+int64(i), i)}}
		raw := []byte("POST " + k.path + " HTTP/1.1\r\n")
		for _, h := range hs {
			raw = append(raw, h.Name+": "+h.Value+"\r\n"...)
		}
		raw = append(append(raw, "\r\n"...), body...)
		ds = append(ds, &store.Delivery{ReceivedAt: start.Add(time.Duration(i) * time.Second), Source: "bench",
			RemoteAddr: "127.0.0.1:50000", Provider: k.provider, EventID: evt, EventType: k.typ,
			Method: "POST", Target: k.path, Proto: "HTTP/1.1", Headers: hs, Raw: raw, Body: body,
			ResponseStatus: 200, ResponseHeaders: message.Headers{{Name: "Content-Type", Value: "application/json"}},
			ResponseBody: []byte(`{"ok":true}`), Latency: 2 * time.Millisecond})
		if len(ds) == batch || i == n-1 {
			if err := st.ImportDeliveries(ctx, ds); err != nil {
				return err
			}
			ds = ds[:0]
		}
	}
	return nil
}

// tuiQuery prints the milliseconds the TUI's first load takes in the store:
// opening it, counting the deliveries and reading the newest 120 summaries.
func tuiQuery(path string) error {
	return timeQueries(path, func(ctx context.Context, st *store.Store) error {
		if _, err := st.CountDeliveries(ctx, store.Filter{}); err != nil {
			return err
		}
		_, err := st.ListSummaries(ctx, store.Filter{}, store.Page{Limit: 120})
		return err
	})
}

// listQuery times what `hookreplay list` asks of the store: open it and
// read the newest 50 summaries (list reads them twice, to measure its
// columns and then to print).
func listQuery(path string) error {
	return timeQueries(path, func(ctx context.Context, st *store.Store) error {
		for range 2 {
			if err := st.EachSummary(ctx, store.Filter{}, store.Page{Limit: 50}, func(store.DeliverySummary) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
}

// timeQueries prints the milliseconds of opening the store at path and
// running queries on it.
func timeQueries(path string, queries func(context.Context, *store.Store) error) error {
	ctx := context.Background()
	start := time.Now()
	st, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := queries(ctx, st); err != nil {
		return err
	}
	fmt.Printf("%.2f\n", float64(time.Since(start).Microseconds())/1000)
	return nil
}
