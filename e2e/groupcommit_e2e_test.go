package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCaptureE2EManyClientsEveryAckStored: 32 clients send to one capture
// at once, 6 deliveries each on a keep-alive connection, so capture's group
// commit stores many of them per transaction. Every delivery acknowledged
// (200 {"id":N}) is in the store, under that id and with the target it was
// sent to, and nothing else is: on SQLite and on a Postgres team store.
func TestCaptureE2EManyClientsEveryAckStored(t *testing.T) {
	t.Parallel()
	for _, backend := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "hr.db") }},
		{"postgres", func(t *testing.T) string { return pgStore(t, "e2egroup") }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			db := backend.db(t)
			_, addr := captureStart(t, db, "--quiet")
			const clients, each = 32, 6
			var mu sync.Mutex
			acked := map[int64]string{}
			var wg sync.WaitGroup
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					client := &http.Client{Transport: &http.Transport{}}
					defer client.CloseIdleConnections()
					for i := range each {
						target := fmt.Sprintf("/hooks/c%d_%d", c, i)
						resp, err := client.Post("http://"+addr+target, "application/json",
							strings.NewReader(fmt.Sprintf(`{"client":%d,"n":%d,"pad":%q}`, c, i, strings.Repeat("x", 800))))
						if err != nil {
							t.Errorf("%s: %v", target, err)
							return
						}
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						var ack struct{ ID int64 }
						if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &ack) != nil || ack.ID == 0 {
							t.Errorf("%s answered %d %q", target, resp.StatusCode, b)
							continue
						}
						mu.Lock()
						if prev, dup := acked[ack.ID]; dup {
							t.Errorf("id %d acknowledged for %s and %s", ack.ID, prev, target)
						}
						acked[ack.ID] = target
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			r := runBin(t, db, nil, "list", "--limit", "0", "--json", "id,target")
			if r.Code != 0 {
				t.Fatalf("list: %+v", r)
			}
			var stored []struct {
				ID     int64
				Target string
			}
			if err := json.Unmarshal([]byte(r.Stdout), &stored); err != nil {
				t.Fatalf("list --json: %v\n%s", err, r.Stdout)
			}
			got := map[int64]string{}
			for _, d := range stored {
				got[d.ID] = d.Target
			}
			for id, target := range acked {
				if got[id] != target {
					t.Errorf("acknowledged %s as id %d; the store has %q there", target, id, got[id])
				}
			}
			if len(stored) != len(acked) || len(acked) != clients*each {
				t.Errorf("%d deliveries stored, %d acknowledged, %d sent", len(stored), len(acked), clients*each)
			}
		})
	}
}
