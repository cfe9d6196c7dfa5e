package store

import (
	"context"
	"slices"
	"testing"
)

// A delivery batching several events (a WhatsApp POST of three messages)
// is found by any of its event ids once BatchEventIDs has resolved them, as
// check --event-id finds it: list and export --event-id said "no
// deliveries match" for all but the first. An id is matched whole, never as
// a prefix or a glob.
func TestFilterEventIDFindsABatchByAnyOfItsIDs(t *testing.T) { eachBackend(t, testFilterEventIDBatch) }

func testFilterEventIDBatch(t *testing.T, loc string) {
	s := deliveriesOpen(t, loc)
	ctx := context.Background()
	batch := &Delivery{Provider: "whatsapp", EventID: "wamid.A1", EventType: "messages", Method: "POST", Target: "/w",
		Identity: map[string]string{"event_ids": "wamid.A1 wamid.B2 wamid.C3"}, Raw: []byte("POST /w HTTP/1.1\r\n\r\n")}
	other := &Delivery{Provider: "whatsapp", EventID: "wamid.B", EventType: "messages", Method: "POST", Target: "/w",
		Raw: []byte("POST /w HTTP/1.1\r\n\r\n")}
	for _, d := range []*Delivery{batch, other} {
		if err := s.InsertDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		ids  []string
		want []int64
	}{
		{[]string{"wamid.A1"}, []int64{batch.ID}},
		{[]string{"wamid.B2"}, []int64{batch.ID}},
		{[]string{"wamid.C3"}, []int64{batch.ID}},
		{[]string{"wamid.B"}, []int64{other.ID}},
		{[]string{"wamid.C"}, nil},
		{[]string{"wamid.*"}, nil},
		{[]string{"wamid.B", "wamid.C3"}, []int64{other.ID, batch.ID}},
	} {
		resolved, err := s.BatchEventIDs(ctx, tc.ids)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ListDeliveries(ctx, Filter{EventIDs: resolved})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, d := range got {
			ids = append(ids, d.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("--event-id %v: deliveries %v, want %v", tc.ids, ids, tc.want)
		}
	}
}
