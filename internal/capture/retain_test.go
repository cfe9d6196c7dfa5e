package capture

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// pruneRecorder hears what retention removed and any problem.
type pruneRecorder struct {
	mu       sync.Mutex
	pruned   int64
	problems []string
}

func (r *pruneRecorder) Delivered(*store.Delivery, time.Duration) {}
func (r *pruneRecorder) Problem(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, msg)
}
func (r *pruneRecorder) Pruned(n int64, cutoff time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruned += n
}

func (r *pruneRecorder) total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pruned
}

// TestRetainPrunesWhileServing: with Retain a capture prunes what is older
// at start and again each RetainEvery, keeps what it captures meanwhile, and
// tells a PruneObserver.
func TestRetainPrunesWhileServing(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := func(n int) {
		for i := 0; i < n; i++ {
			d := &store.Delivery{ReceivedAt: time.Now().Add(-30 * 24 * time.Hour), Method: "POST", Target: "/old"}
			if err := st.InsertDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	old(700) // more than one prune batch
	rec := &pruneRecorder{}
	srv, err := New(st, Options{Retain: 7 * 24 * time.Hour, RetainEvery: 50 * time.Millisecond, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()

	req := []byte("POST /new HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	for i := 0; i < 5; i++ {
		if a, _, _ := exchange(t, ln.Addr().String(), req, 1); a[0].status != 200 {
			t.Fatalf("answer %d", a[0].status)
		}
	}
	waitPruned := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for rec.total() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := rec.total(); got != want {
			t.Fatalf("pruned %d, want %d", got, want)
		}
	}
	waitPruned(700)
	old(3) // written by someone else later: the next turn removes them
	waitPruned(703)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ds, err := st.ListDeliveries(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 5 {
		t.Fatalf("%d deliveries left, want the 5 captured", len(ds))
	}
	for _, d := range ds {
		if d.Target != "/new" {
			t.Fatalf("left %s", d.Target)
		}
	}
	if len(rec.problems) > 0 {
		t.Fatalf("problems: %v", rec.problems)
	}
}

func TestRetainBounds(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := New(st, Options{Retain: 5 * time.Minute}); err == nil || !strings.Contains(err.Error(), "shorter than 10m") {
		t.Fatalf("5m: %v", err)
	}
	for _, tc := range []struct{ keep, every time.Duration }{
		{10 * time.Minute, time.Minute},
		{7 * 24 * time.Hour, time.Hour},
	} {
		if got := retainEvery(tc.keep); got != tc.every {
			t.Errorf("%s: every %s, want %s", tc.keep, got, tc.every)
		}
	}
}
