package replay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/panics"
	"github.com/hookreplay/hookreplay/internal/store"
)

// A panic in the sink (the drain's goroutine) or in a burst's sender (one
// goroutine per copy) used to end the process: the caller's recover runs on
// another goroutine. Run now stops sending and raises it on the caller's
// goroutine, naming where it happened, once every sender is done; pool,
// burst and barrier orders alike, without leaving a sender blocked.
func TestRunRaisesAGoroutinesPanicOnItsCaller(t *testing.T) {
	t.Setenv("HOOKREPLAY_TRACEBACK", "")
	for _, o := range []Order{OrderSeq, OrderShuffle, OrderBurst} {
		t.Run(string(o), func(t *testing.T) {
			srv := startRecServer(t, nil)
			d := fixtureDelivery(t, 7, "stripe_invoice_paid.http")
			calls := 0
			sink := SinkFunc(func(context.Context, *store.Attempt) error {
				calls++
				var m map[string]int
				m["x"]++ // the sink's bug
				return nil
			})
			err := catchRun(func() {
				Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second), Copies: 20, Concurrency: 4, Order: o}, sink)
			})
			var pe *panics.Error
			if !errors.As(err, &pe) || !strings.Contains(pe.Error(), "assignment to entry in nil map") || !strings.Contains(pe.Where, "TestRunRaisesAGoroutinesPanicOnItsCaller") {
				t.Fatalf("err = %v, want the sink's panic raised on the caller", err)
			}
			if calls != 1 {
				t.Fatalf("the sink was called %d times after its panic, want once", calls)
			}
		})
	}
}

func catchRun(f func()) (err error) {
	defer panics.Catch(&err)
	f()
	return nil
}
