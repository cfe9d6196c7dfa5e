package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestBodyStoredOnce: a body that is the raw request's tail is stored once
// (body empty, body_at set) and reads back exactly — by GetDelivery, the
// summaries' length and the text filter — while a chunked body, which is not
// the raw tail, keeps its own column.
func TestBodyStoredOnce(t *testing.T) { eachBackend(t, testBodyStoredOnce) }

func testBodyStoredOnce(t *testing.T, loc string) {
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	plain := &Delivery{Method: "POST", Target: "/a",
		Raw:  []byte("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 13\r\n\r\n{\"x\":\"\xff\x00é\"}"),
		Body: []byte("{\"x\":\"\xff\x00é\"}")}
	chunked := &Delivery{Method: "POST", Target: "/b",
		Raw:  []byte("POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
		Body: []byte("hello")}
	empty := &Delivery{Method: "GET", Target: "/c", Raw: []byte("GET /c HTTP/1.1\r\nHost: h\r\n\r\n"), Body: []byte{}}
	w, err := s.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, []*Delivery{plain, chunked}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertDelivery(ctx, empty); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*Delivery{plain, chunked, empty} {
		got, err := s.GetDelivery(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Body) != string(want.Body) || string(got.Raw) != string(want.Raw) {
			t.Errorf("delivery %d: body %q raw %q, want %q %q", want.ID, got.Body, got.Raw, want.Body, want.Raw)
		}
	}
	var bodyAt, stored int
	if err := s.db.QueryRowContext(ctx, `SELECT body_at, length(body) FROM deliveries WHERE id=?`, plain.ID).Scan(&bodyAt, &stored); err != nil {
		t.Fatal(err)
	}
	if bodyAt != len(plain.Raw)-len(plain.Body) || stored != 0 {
		t.Errorf("plain body: body_at %d, body column %d bytes; want %d and 0", bodyAt, stored, len(plain.Raw)-len(plain.Body))
	}
	if err := s.db.QueryRowContext(ctx, `SELECT body_at, length(body) FROM deliveries WHERE id=?`, chunked.ID).Scan(&bodyAt, &stored); err != nil {
		t.Fatal(err)
	}
	if bodyAt != -1 || stored != 5 {
		t.Errorf("chunked body: body_at %d, body column %d bytes; want -1 and 5", bodyAt, stored)
	}
	sums, err := s.ListSummaries(ctx, Filter{}, Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range sums {
		var want int
		switch sum.ID {
		case plain.ID:
			want = len(plain.Body)
		case chunked.ID:
			want = len(chunked.Body)
		}
		if sum.BodySize != want {
			t.Errorf("summary of %d: body size %d, want %d", sum.ID, sum.BodySize, want)
		}
	}
	for text, want := range map[string]int64{"hello": chunked.ID, `"x"`: plain.ID} {
		ds, err := s.ListDeliveries(ctx, Filter{Text: text, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].ID != want {
			var ids []string
			for _, d := range ds {
				ids = append(ids, d.Target)
			}
			t.Errorf("text %q matched %s, want only delivery %d", text, strings.Join(ids, ","), want)
		}
	}
}

// prune while a capture commits: neither fails, the old rows go, and every
// row the writer committed after the cutoff is still there.
func TestPruneWhileCapturing(t *testing.T) { eachBackend(t, testPruneWhileCapturing) }

func testPruneWhileCapturing(t *testing.T, loc string) {
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	other := deliveriesOpen(t, loc) // prune runs in another process
	old := time.Now().Add(-48 * time.Hour)
	for i := 0; i < 50; i++ {
		if err := s.InsertDelivery(ctx, &Delivery{ReceivedAt: old, Method: "POST", Target: "/old", Raw: []byte("o")}); err != nil {
			t.Fatal(err)
		}
	}
	w := writerOpen(t, s)
	cutoff := time.Now().Add(-time.Hour)
	var committed []int64
	done := make(chan struct{})
	var pruned int64
	var pruneErr error
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			n, err := other.PruneDeliveries(ctx, cutoff)
			if err != nil {
				pruneErr = err
				return
			}
			pruned += n
		}
	}()
	for i := 0; i < 40; i++ {
		batch := make([]*Delivery, 5)
		for j := range batch {
			batch[j] = &Delivery{Method: "POST", Target: "/new", Raw: []byte("n")}
		}
		if err := w.Commit(ctx, batch, nil); err != nil {
			t.Fatalf("commit while pruning: %v", err)
		}
		for _, d := range batch {
			committed = append(committed, d.ID)
		}
	}
	<-done
	if pruneErr != nil {
		t.Fatalf("prune while capturing: %v", pruneErr)
	}
	if n, err := other.PruneDeliveries(ctx, cutoff); err != nil {
		t.Fatal(err)
	} else {
		pruned += n
	}
	if pruned != 50 {
		t.Errorf("pruned %d, want the 50 old deliveries", pruned)
	}
	got, err := s.ListDeliveries(ctx, Filter{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(committed) {
		t.Fatalf("%d deliveries left, %d committed after the cutoff", len(got), len(committed))
	}
	for i, d := range got {
		if d.ID != committed[i] || d.Target != "/new" {
			t.Fatalf("row %d is #%d %s, want #%d /new", i, d.ID, d.Target, committed[i])
		}
	}
}

// A Commit that fails (here: its context is cancelled) stores none of its
// rows, and the Writer commits the next batch as if nothing happened.
func TestWriterRecoversAfterFailedCommit(t *testing.T) {
	eachBackend(t, testWriterRecoversAfterFailedCommit)
}

func testWriterRecoversAfterFailedCommit(t *testing.T, loc string) {
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	w := writerOpen(t, s)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	batch := []*Delivery{{Method: "POST", Target: "/lost", Raw: []byte("a")}, {Method: "POST", Target: "/lost", Raw: []byte("b")}}
	if err := w.Commit(gone, batch, nil); err == nil {
		t.Fatal("a commit with a cancelled context succeeded")
	}
	for i := 0; i < 3; i++ {
		d := &Delivery{Method: "POST", Target: "/kept", Raw: []byte("c")}
		if err := w.Commit(ctx, []*Delivery{d}, []Response{{ID: d.ID, Status: 200}}); err != nil {
			t.Fatalf("commit %d after the failed one: %v", i+1, err)
		}
		if err := w.Commit(ctx, nil, []Response{{ID: d.ID, Status: 201}}); err != nil {
			t.Fatalf("answer %d after the failed one: %v", i+1, err)
		}
	}
	got, err := s.ListDeliveries(ctx, Filter{})
	if err != nil || len(got) != 3 {
		t.Fatalf("%d deliveries, %v; want the 3 kept ones", len(got), err)
	}
	for _, d := range got {
		if d.Target != "/kept" || d.ResponseStatus != 201 {
			t.Fatalf("delivery %d: %s answered %d", d.ID, d.Target, d.ResponseStatus)
		}
	}
}
