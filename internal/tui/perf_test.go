package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// TestOpenLargeStore measures how long the TUI takes from opening a store of
// HOOKREPLAY_TUI_ROWS deliveries (100000 when set to "1") to the first screen
// of the deliveries view, and fails above 300 ms. It generates the store
// first (slow), so it only runs when asked:
//
//	HOOKREPLAY_TUI_ROWS=100000 go test ./internal/tui -run TestOpenLargeStore -v
//
// HOOKREPLAY_TUI_DB=PATH writes the store there and keeps it.
func TestOpenLargeStore(t *testing.T) {
	rows := 0
	switch v := os.Getenv("HOOKREPLAY_TUI_ROWS"); v {
	case "":
		t.Skip("set HOOKREPLAY_TUI_ROWS=100000 to measure opening a large store")
	case "1":
		rows = 100000
	default:
		fmt.Sscan(v, &rows)
	}
	path := filepath.Join(t.TempDir(), "big.db")
	if keep := os.Getenv("HOOKREPLAY_TUI_DB"); keep != "" {
		path = keep // kept, to time the real binary on it
	}
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_X","object":"event","type":"invoice.paid","data":{"object":{"id":"in_1","amount_paid":5000,"customer":"cus_1","lines":"` +
		strings.Repeat("x", 1400) + `"}}}`)
	raw := append([]byte("POST /hooks/stripe HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nStripe-Signature: t=1,v1=00\r\n\r\n"), body...)
	start := time.Now()
	for i := 0; i < rows; i += 5000 {
		var ds []*store.Delivery
		for j := i; j < min(rows, i+5000); j++ {
			ds = append(ds, &store.Delivery{Method: "POST", Target: "/hooks/stripe", Provider: "stripe", EventType: "invoice.paid",
				EventID: fmt.Sprintf("evt_%07d", j), Raw: raw, Body: body, ResponseStatus: 200, ResponseBody: []byte(`{"ok":true}`),
				ReceivedAt: time.Unix(1764000000+int64(j), 0)})
		}
		if err := st.ImportDeliveries(context.Background(), ds); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	t.Logf("generated %d deliveries in %s", rows, time.Since(start).Round(time.Millisecond))

	for round := 1; round <= 3; round++ {
		start = time.Now()
		st, err = store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, st, 120, 40)
		took := time.Since(start)
		h.contains(fmt.Sprintf("1/%d deliveries", rows))
		h.keys("G")
		h.contains(fmt.Sprintf("%d/%d deliveries", rows, rows))
		t.Logf("round %d: open + first screen of %d deliveries: %s", round, rows, took.Round(time.Millisecond))
		if took > 300*time.Millisecond {
			t.Errorf("opening took %s, want under 300ms", took)
		}
		st.Close()
	}
}
