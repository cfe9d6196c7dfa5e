package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// The streamed array is byte for byte what encoding the whole slice printed.
func TestDeliveriesJSONStreamMatchesWholeArray(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		var ds []*store.Delivery
		var sums []DeliverySummary
		for i := range n {
			d := &store.Delivery{ID: int64(i + 1), ReceivedAt: time.Unix(1700000000, int64(i)), Provider: "stripe",
				EventID: "evt_<&>", EventType: "invoice.paid", Method: "POST", Target: "/hooks?a=1&b=<2>",
				Identity: map[string]string{"k": "v"}, Body: []byte("{}"), Raw: []byte("POST / HTTP/1.1\r\n\r\n{}")}
			ds = append(ds, d)
			sums = append(sums, SummarizeDelivery(d))
		}
		var whole, streamed bytes.Buffer
		if sums == nil {
			sums = []DeliverySummary{}
		}
		if err := writeJSON(&whole, sums, false); err != nil {
			t.Fatal(err)
		}
		js := NewDeliveriesJSON(&streamed)
		for _, d := range ds {
			if err := js.Add(d.Summary()); err != nil {
				t.Fatal(err)
			}
		}
		if err := js.Close(); err != nil {
			t.Fatal(err)
		}
		if whole.String() != streamed.String() {
			t.Fatalf("%d deliveries: streamed\n%s\nwant\n%s", n, streamed.String(), whole.String())
		}
	}
}
