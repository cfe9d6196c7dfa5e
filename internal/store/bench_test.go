package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
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
