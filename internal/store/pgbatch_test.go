package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestWriterGroupIDsAreTheirDeliveries: each delivery of a group commit
// gets the id of its own row — 70 of them (three INSERTs of many rows on
// Postgres, matched to the deliveries by when each arrived), and a group
// in which every delivery arrived in the same nanosecond (one INSERT a
// row).
func TestWriterGroupIDsAreTheirDeliveries(t *testing.T) { eachBackend(t, testWriterGroupIDs) }

func testWriterGroupIDs(t *testing.T, loc string) {
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	w, err := s.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	for _, tc := range []struct {
		name string
		at   func(i int) time.Time
	}{
		{"distinct arrivals, newest first", func(i int) time.Time { return start.Add(time.Duration(1000-i) * time.Microsecond) }},
		{"one nanosecond", func(int) time.Time { return start }},
	} {
		ds := make([]*Delivery, 70)
		for i := range ds {
			ds[i] = benchDelivery(i)
			ds[i].EventID = fmt.Sprintf("%s %d", tc.name, i)
			ds[i].ReceivedAt = tc.at(i)
		}
		if err := w.Commit(ctx, ds, nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		seen := map[int64]bool{}
		for _, d := range ds {
			if d.ID == 0 || seen[d.ID] {
				t.Fatalf("%s: delivery %s has id %d (seen: %v)", tc.name, d.EventID, d.ID, seen[d.ID])
			}
			seen[d.ID] = true
			got, err := s.GetDelivery(ctx, d.ID)
			if err != nil || got.EventID != d.EventID || !got.ReceivedAt.Equal(d.ReceivedAt) || string(got.Body) != string(d.Body) {
				t.Fatalf("%s: delivery %d holds %v (%v), want %s", tc.name, d.ID, got, err, d.EventID)
			}
		}
	}
}
