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

	// A reload of the newest rows once the last count is older than
	// recount: its window comes without a count.
	later := h.env.now().Add(recount)
	h.env.now = func() time.Time { return later }
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

// TestChangeCountsOnlyTheNewer: a change counts the matches newer than the
// last count and adds them (a whole count of a team store's 1M deliveries
// is half a second of the server's time, for every open TUI on every
// delivery); a delivery another process deleted meanwhile leaves the count
// once the store is quiet and the last whole count is recount old.
func TestChangeCountsOnlyTheNewer(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "live.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	add := func(n int) {
		ds := make([]*store.Delivery, n)
		for i := range ds {
			ds[i] = &store.Delivery{Method: "POST", Target: "/h", Provider: "generic", Raw: []byte("x"), Body: []byte("{}")}
		}
		if err := st.ImportDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
	}
	add(300)
	h := newHarness(t, st, 80, 24)
	h.contains("1/300 deliveries")

	add(3) // another process captures
	_, cmd := h.m.Update(changedMsg{})
	w, ok := cmd().(windowMsg)
	if !ok || w.uncounted || w.total != 303 || !w.tally.partial || w.tally.newest != 303 {
		t.Fatalf("reload after a change: %T uncounted=%v total=%d tally=%+v; want 303 counted from the last count", w, w.uncounted, w.total, w.tally)
	}
	h.send(w)
	h.contains("1/303 deliveries")

	// Another process deletes two: a change, counted from the last count.
	if _, err := st.DeleteDeliveries(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	h.send(changedMsg{})
	h.contains("1/303 deliveries")
	h.send(quietMsg{}) // quiet, but the whole count is not recount old yet
	h.contains("1/303 deliveries")

	later := h.env.now().Add(recount)
	h.env.now = func() time.Time { return later }
	h.send(quietMsg{})
	h.contains("1/301 deliveries")
	h.send(quietMsg{}) // counted whole: nothing more to do
	h.contains("1/301 deliveries")
}
