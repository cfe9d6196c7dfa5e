package tui

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/store"
)

// TestPagingDoesNotRecount: paging through a body-text filter's matches
// costs less than a few counts of them. Each window used to count every
// match again (a scan of every body) and its place among them: 60 pages on
// 5000 deliveries took about 28 counts.
func TestPagingDoesNotRecount(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "text.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 5000
	body := append([]byte(`{"note":"needle"}`), bytes.Repeat([]byte(" "), 8000)...)
	ds := make([]*store.Delivery, n)
	for i := range ds {
		ds[i] = &store.Delivery{Method: "POST", Target: "/h", Provider: "generic", Raw: []byte("x"), Body: body,
			ReceivedAt: time.Date(2026, 12, 1, 0, 0, i, 0, time.UTC)}
	}
	if err := st.ImportDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 80, 24)
	h.keys("/")
	h.typeText("needle")
	h.keys("enter")
	start := time.Now()
	if _, err := st.CountDeliveries(context.Background(), h.m.views[0].(*deliveriesModel).filter); err != nil {
		t.Fatal(err)
	}
	count := time.Since(start)

	start = time.Now()
	var cmds []tea.Cmd
	for range 60 {
		_, cmd := h.m.Update(keyMsg("pgdown")) // the loads run after, as when keys come fast
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		h.run(c)
	}
	took := time.Since(start)
	h.contains(fmt.Sprintf("%d/%d deliveries", 60*19+1, n))
	t.Logf("one count of the matches %s, 60 pages %s", count, took)
	if took > 5*count {
		t.Errorf("60 pages took %s, over 5 counts of the matches (%s each): windows count again", took, count)
	}
}
