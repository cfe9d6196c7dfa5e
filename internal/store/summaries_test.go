package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestSummariesPagesAndCounts(t *testing.T) { eachBackend(t, testSummariesPagesAndCounts) }

func testSummariesPagesAndCounts(t *testing.T, loc string) {
	ctx := context.Background()
	s, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ds []*Delivery
	for i := 1; i <= 10; i++ {
		p := "stripe"
		if i%2 == 0 {
			p = "github"
		}
		ds = append(ds, &Delivery{Method: "POST", Target: "/", Provider: p, EventID: fmt.Sprint("e", i),
			Raw: []byte("raw"), Body: []byte(fmt.Sprintf(`{"n":%d,"Name":"Ada_%d%%"}`, i, i)), ReceivedAt: time.Unix(int64(i), 0)})
	}
	if err := s.ImportDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	ids := func(ss []DeliverySummary) string {
		out := ""
		for _, d := range ss {
			out += fmt.Sprint(d.ID, " ")
		}
		return out
	}
	for _, tc := range []struct {
		f    Filter
		p    Page
		want string
	}{
		{p: Page{Limit: 3}, want: "10 9 8 "},
		{p: Page{Before: 8, Limit: 3}, want: "7 6 5 "},
		{p: Page{After: 5, Limit: 2}, want: "7 6 "},
		{p: Page{Oldest: true, Limit: 3}, want: "3 2 1 "},
		{f: Filter{Provider: "github"}, p: Page{Before: 8, Limit: 2}, want: "6 4 "},
		{f: Filter{Text: "ada_1"}, want: "10 1 "},
		{f: Filter{Text: "_1%"}, want: "1 "},
	} {
		got, err := s.ListSummaries(ctx, tc.f, tc.p)
		if err != nil || ids(got) != tc.want {
			t.Errorf("%+v %+v: %q, %v; want %q", tc.f, tc.p, ids(got), err, tc.want)
		}
	}
	got, _ := s.ListSummaries(ctx, Filter{}, Page{Limit: 1})
	if d := got[0]; d.BodySize != len(ds[9].Body) || d.RawSize != 3 || d.Provider != "github" || !d.ReceivedAt.Equal(time.Unix(10, 0)) {
		t.Errorf("summary %+v", d)
	}
	if n, err := s.CountDeliveries(ctx, Filter{Provider: "stripe"}); n != 5 || err != nil {
		t.Errorf("count %d, %v", n, err)
	}
	if n, err := s.CountBefore(ctx, Filter{}, 7); n != 3 || err != nil {
		t.Errorf("count before 7: %d, %v", n, err)
	}
	for _, tc := range []struct {
		f          Filter
		after      int64
		n          int
		wantNewest int64
	}{
		{after: 0, n: 10, wantNewest: 10},
		{f: Filter{Provider: "stripe"}, after: 0, n: 5, wantNewest: 9},
		{f: Filter{Provider: "stripe"}, after: 6, n: 2, wantNewest: 9},
		{f: Filter{Provider: "github"}, after: 10, n: 0, wantNewest: 10}, // none newer: the id given back
	} {
		n, newest, err := s.CountNewer(ctx, tc.f, tc.after)
		if err != nil || n != tc.n || newest != tc.wantNewest {
			t.Errorf("count newer than %d of %+v: %d, newest %d, %v; want %d, %d", tc.after, tc.f, n, newest, err, tc.n, tc.wantNewest)
		}
	}
}

func TestWatcherSeesOtherConnections(t *testing.T) { eachBackend(t, testWatcherSeesOtherConnections) }

func testWatcherSeesOtherConnections(t *testing.T, loc string) {
	ctx := context.Background()
	path := loc
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	v1, _ := w.Version(ctx)
	if v, _ := w.Version(ctx); v != v1 {
		t.Fatalf("version moved without a write: %d → %d", v1, v)
	}
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.InsertDelivery(ctx, &Delivery{Method: "POST", Target: "/", Raw: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	// Postgres's notification arrives a moment after the commit: Wait for it.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v2, err := w.Wait(wctx, v1)
	if err != nil || v2 == v1 {
		t.Fatalf("a commit by another process did not change the data version: %d → %d, %v", v1, v2, err)
	}
	if v, _ := w.Version(ctx); v != v2 {
		t.Fatalf("Version %d after Wait returned %d", v, v2)
	}
}

func TestDeliveryAttempts(t *testing.T) { eachBackend(t, testDeliveryAttempts) }

func testDeliveryAttempts(t *testing.T, loc string) {
	ctx := context.Background()
	s, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		r := &Run{Kind: "replay"}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		for _, did := range []int64{1, 2, 1} {
			if err := s.InsertAttempt(ctx, &Attempt{RunID: r.ID, DeliveryID: did, Status: 200}); err != nil {
				t.Fatal(err)
			}
		}
	}
	as, err := s.DeliveryAttempts(ctx, 1, 3)
	if err != nil || len(as) != 3 || as[0].ID != 6 || as[2].ID != 3 {
		t.Fatalf("attempts %v, %v", as, err)
	}
	counts, err := s.AttemptCounts(ctx)
	if err != nil || counts[1] != 3 || counts[2] != 3 {
		t.Fatalf("counts %v, %v", counts, err)
	}
	for _, run := range []int64{1, 2, 3} {
		if n, err := s.CountAttempts(ctx, run); err != nil || n != counts[run] {
			t.Errorf("run %d: CountAttempts %d, %v; AttemptCounts %d", run, n, err, counts[run])
		}
	}
}

// TestSummaryIsTheDeliveryWithoutBytes: what EachSummary reads (without the
// bytes) is what Delivery.Summary says of the whole row, every field, and
// EachSummary walks in the query's order, stopping at fn's error.
func TestSummaryIsTheDeliveryWithoutBytes(t *testing.T) {
	eachBackend(t, testSummaryIsTheDeliveryWithoutBytes)
}

func testSummaryIsTheDeliveryWithoutBytes(t *testing.T, loc string) {
	ctx := context.Background()
	s, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ds := []*Delivery{
		{Method: "POST", Target: "/a", Provider: "shopify", EventID: "e1", EventType: "orders/create", Source: "capture",
			RemoteAddr: "10.0.0.1:4000", Identity: map[string]string{"shopify_webhook_id": "w1"}, Raw: []byte("raw bytes"),
			Body: []byte("body"), Verification: "valid (shopify)", ResponseStatus: 201, Latency: 3 * time.Millisecond,
			ForwardError: "", Origin: "har:x.har", ReceivedAt: time.Unix(5, 6)},
		{Method: "PUT", Target: "/b", Raw: []byte("r"), ForwardError: "connection refused", ReceivedAt: time.Unix(7, 0)},
	}
	if err := s.ImportDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	var got []DeliverySummary
	stop := errors.New("stop")
	err = s.EachSummary(ctx, Filter{}, Page{Oldest: true}, func(d DeliverySummary) error {
		got = append(got, d)
		if len(got) == 2 {
			return stop
		}
		return nil
	})
	if err != stop || len(got) != 2 {
		t.Fatalf("walk: %d rows, %v", len(got), err)
	}
	for i, d := range got {
		full, err := s.GetDelivery(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := full.Summary()
		if len(want.Identity) == 0 {
			want.Identity = nil // "{}" is read as no map
		}
		if !reflect.DeepEqual(d, want) || d.ID != int64(i+1) {
			t.Errorf("summary %d:\n%+v\nwant\n%+v", i, d, want)
		}
	}
	if got[0].Identity["shopify_webhook_id"] != "w1" || got[0].Latency != 3*time.Millisecond || got[0].Origin != "har:x.har" ||
		got[0].RemoteAddr != "10.0.0.1:4000" || got[0].RawSize != 9 || got[1].ForwardError != "connection refused" {
		t.Errorf("summaries %+v", got)
	}
}
