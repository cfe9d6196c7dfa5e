package tui

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/store"
)

// TestFirstWindowBeforeCount: the newest rows are drawn before the matches
// are counted (a count of 1M rows took longer than the first screen may),
// the status bar says the count is still coming, and moves made meanwhile
// past the drawn rows are kept and made once the count is in.
func TestFirstWindowBeforeCount(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "many.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 500
	ds := make([]*store.Delivery, n)
	for i := range ds {
		ds[i] = &store.Delivery{Method: "POST", Target: "/h", Provider: "generic", Raw: []byte("x"), Body: []byte("{}"),
			ReceivedAt: time.Date(2026, 12, 1, 0, 0, i, 0, time.UTC)}
	}
	if err := st.ImportDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 80, 24)
	h.contains("1/500 deliveries")

	// A reload of the newest rows: its window comes without a count.
	_, cmd := h.m.Update(changedMsg{})
	w, ok := cmd().(windowMsg)
	if !ok || !w.uncounted || len(w.rows) != pageSize {
		t.Fatalf("first window: %T uncounted=%v rows=%d, want a window of %d rows without a count", w, w.uncounted, len(w.rows), pageSize)
	}
	_, count := h.m.Update(w)
	h.contains("1/120+ deliveries")

	// Ten pages down (past the 120 rows drawn) before the count arrives.
	var cmds []tea.Cmd
	for range 10 {
		_, c := h.m.Update(keyMsg("pgdown"))
		cmds = append(cmds, c)
	}
	h.run(count)
	for _, c := range cmds {
		h.run(c)
	}
	h.contains("191/500 deliveries")
	h.keys("G")
	h.contains("500/500 deliveries")
	h.keys("g")
	h.contains("1/500 deliveries")
}
