package store

import (
	"context"
	"testing"
	"time"
)

func TestChecksRoundTrip(t *testing.T) { eachBackend(t, testChecksRoundTrip) }

func testChecksRoundTrip(t *testing.T, loc string) {
	ctx := context.Background()
	s, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := &Run{Kind: "check", Target: "http://127.0.0.1:1/"}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	n := 5000.0
	from := time.Unix(0, 1_700_000_000_123_456_789)
	for _, r := range []*ProbeReading{
		{RunID: run.ID, DeliveryID: 1, Phase: "first", Point: "before", Probe: "sql: x", Value: "5000", Numeric: &n,
			SettleFrom: from, ChangedAt: from.Add(time.Millisecond), ReadAt: from.Add(time.Second)},
		{RunID: run.ID, DeliveryID: 1, Phase: "first", Point: "after", Probe: "http: y", Value: "active"},
	} {
		if err := s.InsertProbeReading(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.ListProbeReadings(ctx, run.ID)
	if err != nil || len(rs) != 2 {
		t.Fatalf("readings %v %v", rs, err)
	}
	if rs[0].Numeric == nil || *rs[0].Numeric != 5000 || rs[1].Numeric != nil || rs[1].Value != "active" {
		t.Fatalf("readings round trip: %+v %+v", rs[0], rs[1])
	}
	// The settle window comes back to the nanosecond; unrecorded, it is zero.
	if !rs[0].SettleFrom.Equal(from) || !rs[0].ChangedAt.Equal(from.Add(time.Millisecond)) || !rs[1].SettleFrom.IsZero() || !rs[1].ChangedAt.IsZero() {
		t.Fatalf("settle window round trip: %+v %+v", rs[0], rs[1])
	}
	if err := s.InsertVerdict(ctx, &VerdictRow{RunID: run.ID, DeliveryID: 1, Phase: "dups", Status: "fail", Message: "copy 2"}); err != nil {
		t.Fatal(err)
	}
	vs, err := s.ListVerdicts(ctx, run.ID)
	if err != nil || len(vs) != 1 || vs[0].Status != "fail" || string(vs[0].Detail) != "{}" {
		t.Fatalf("verdicts %+v %v", vs, err)
	}
	if err := s.InsertEffect(ctx, &EffectRow{RunID: run.ID, Phase: "first", Method: "POST", Path: "/send", Body: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
	es, err := s.ListEffects(ctx, run.ID)
	if err != nil || len(es) != 1 || string(es[0].Body) != "hi" || es[0].Path != "/send" {
		t.Fatalf("effects %+v %v", es, err)
	}
}
