package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

func benchDelivery(i int) *Delivery {
	body := []byte(fmt.Sprintf(`{"id":"evt_%012d","type":"invoice.paid","data":{"object":{"amount_paid":5000}}}`, i))
	raw := append([]byte("POST /webhooks/stripe HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n\r\n"), body...)
	return &Delivery{ReceivedAt: time.Now(), Provider: "stripe", EventID: fmt.Sprintf("evt_%012d", i), EventType: "invoice.paid",
		Method: "POST", Target: "/webhooks/stripe", Proto: "HTTP/1.1",
		Headers: message.Headers{{Name: "Host", Value: "h"}, {Name: "Content-Type", Value: "application/json"}}, Raw: raw, Body: body}
}

// BenchmarkInsert measures committing deliveries one per transaction and
// 128 per transaction (capture's group commit), for each synchronous mode.
func BenchmarkInsert(b *testing.B) {
	for _, sync := range []Sync{SyncNormal, SyncFull} {
		for _, batch := range []int{1, 128} {
			b.Run(fmt.Sprintf("%s/batch%d", sync, batch), func(b *testing.B) {
				ctx := context.Background()
				st, err := Open(ctx, filepath.Join(b.TempDir(), "h.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				if err := st.SetSync(sync); err != nil {
					b.Fatal(err)
				}
				ds := make([]*Delivery, batch)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					for k := range ds {
						ds[k] = benchDelivery(i)
						i++
					}
					if err := st.ImportDeliveries(ctx, ds); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/delivery")
			})
		}
	}
}

// BenchmarkWriter measures capture's Writer: deliveries of a 1 KiB body
// (about a Stripe event) committed n per transaction, each with its answer
// in the same row, and with the answers recorded by the next transaction.
//
// Each runs on SQLite, and on Postgres too when HOOKREPLAY_TEST_PG names a
// server (sub-benchmarks sqlite/… and postgres/…).
func BenchmarkWriter(b *testing.B) {
	pad := bytes.Repeat([]byte("x"), 900)
	for _, backend := range benchBackends() {
		for _, batch := range []int{1, 4, 16, 128} {
			for _, later := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/batch%d/answers-later=%v", backend.name, batch, later), func(b *testing.B) {
					benchWriter(b, backend.loc(b), batch, later, pad)
				})
			}
		}
	}
}

// benchBackend is where a benchmark's store lives.
type benchBackend struct {
	name string
	loc  func(b *testing.B) string
}

func benchBackends() []benchBackend {
	out := []benchBackend{{"sqlite", func(b *testing.B) string { return filepath.Join(b.TempDir(), "h.db") }}}
	if os.Getenv("HOOKREPLAY_TEST_PG") != "" {
		out = append(out, benchBackend{"postgres", func(b *testing.B) string { return testkit.PostgresSchema(b, "bench") }})
	}
	return out
}

func benchWriter(b *testing.B, loc string, batch int, later bool, pad []byte) {
	ctx := context.Background()
	st, err := Open(ctx, loc)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	w, err := st.NewWriter(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ds := make([]*Delivery, batch)
	var rs []Response
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for k := range ds {
			d := benchDelivery(i)
			d.Body = append(d.Body, pad...)
			d.Raw = append(d.Raw, pad...)
			if !later {
				d.ResponseStatus, d.ResponseBody = 200, []byte(`{"ok":true}`)
			}
			ds[k] = d
			i++
		}
		if err := w.Commit(ctx, ds, rs); err != nil {
			b.Fatal(err)
		}
		rs = rs[:0]
		if later {
			for _, d := range ds {
				rs = append(rs, Response{ID: d.ID, Status: 200, Body: []byte(`{"ok":true}`)})
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/delivery")
}
