package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

func deliveriesOpen(t *testing.T, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writerOpen opens a Writer on s, closed at the test's end (before s).
func writerOpen(t *testing.T, s *Store) *Writer {
	t.Helper()
	w, err := s.NewWriter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestMigrationsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	for i := 0; i < 3; i++ {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		var v int
		if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) {
			t.Fatalf("user_version %d (%v), want %d", v, err, len(migrations))
		}
		var mode string
		if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Fatalf("journal_mode %q %v", mode, err)
		}
		if i == 0 {
			d := &Delivery{Method: "POST", Target: "/", Raw: []byte("x"), Body: []byte("y")}
			if err := s.InsertDelivery(context.Background(), d); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.GetDelivery(context.Background(), 1); err != nil {
			t.Fatalf("reopen %d lost the delivery: %v", i+1, err)
		}
		s.Close()
	}
}

func TestOpenRejectsNewerSchemaAndNonDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.db")
	s := deliveriesOpen(t, path)
	if _, err := s.db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer schema: %v", err)
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, bytes.Repeat([]byte("junk"), 2000), 0o600)
	if _, err := Open(context.Background(), junk); err == nil || !strings.Contains(err.Error(), "not a hookreplay database") {
		t.Fatalf("junk file: %v", err)
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "missing", "x.db")); err == nil {
		t.Fatal("missing directory opened")
	}
	// A store cut short (a copy that stopped half way) is named damaged, not
	// with the driver's "read database header: … (11)".
	cut := filepath.Join(dir, "cut.db")
	s = deliveriesOpen(t, cut)
	for i := range 50 {
		if err := s.InsertDelivery(context.Background(), &Delivery{Method: "POST", Target: "/h", Raw: bytes.Repeat([]byte{byte(i)}, 4000)}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if err := os.Truncate(cut, 8192); err != nil {
		t.Fatal(err)
	}
	os.Remove(cut + "-wal")
	os.Remove(cut + "-shm")
	if _, err := Open(context.Background(), cut); err == nil || !strings.Contains(err.Error(), "the database file is damaged") {
		t.Fatalf("truncated store: %v", err)
	}
}

func TestDeliveryRoundTrip(t *testing.T) { eachBackend(t, testDeliveryRoundTrip) }

func testDeliveryRoundTrip(t *testing.T, loc string) {
	s := deliveriesOpen(t, loc)
	ctx := context.Background()
	at := time.Unix(1700000000, 123456789)
	raw := []byte("POST /a HTTP/1.1\r\nX-A: 1\r\nx-a: 2\r\n\r\n\x00\xff")
	d := &Delivery{ReceivedAt: at, Source: "src", RemoteAddr: "127.0.0.1:1", Provider: "shopify", EventID: "e1",
		EventType: "orders/create", Identity: map[string]string{"shopify_webhook_id": "w1"}, Method: "POST", Target: "/a",
		Proto: "HTTP/1.1", Headers: message.Headers{{Name: "X-A", Value: "1"}, {Name: "x-a", Value: "2"}},
		Raw: raw, Body: []byte{0, 0xff}, Verification: "valid (shopify, sha256)"}
	if err := s.InsertDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.SetResponse(ctx, d.ID, 201, message.Headers{{Name: "B", Value: "1"}}, []byte("ok"), 0, 3*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetDelivery(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.ReceivedAt.Equal(at) || !bytes.Equal(got.Raw, raw) || !bytes.Equal(got.Body, d.Body) || got.Identity["shopify_webhook_id"] != "w1" ||
		len(got.Headers) != 2 || got.Headers[1].Name != "x-a" || got.ResponseStatus != 201 || string(got.ResponseBody) != "ok" ||
		got.Latency != 3*time.Millisecond || got.Verification != d.Verification || got.Source != "src" {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := s.GetDelivery(ctx, 42); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no delivery 42") {
		t.Fatalf("missing id: %v", err)
	}
	last, err := s.LastDelivery(ctx)
	if err != nil || last.ID != d.ID {
		t.Fatalf("last: %v %v", last, err)
	}
}

func TestListFiltersDeleteAndPrune(t *testing.T) { eachBackend(t, testListFiltersDeleteAndPrune) }

func testListFiltersDeleteAndPrune(t *testing.T, loc string) {
	s := deliveriesOpen(t, loc)
	ctx := context.Background()
	now := time.Now()
	rows := []struct {
		age      time.Duration
		provider string
		typ      string
		id       string
		source   string
	}{
		{30 * 24 * time.Hour, "stripe", "invoice.paid", "evt_1", "staging"},
		{2 * 24 * time.Hour, "stripe", "invoice.created", "evt_2", "laptop"},
		{3 * time.Hour, "github", "issues.opened", "gh_1", "staging"},
		{time.Minute, "stripe", "charge.succeeded", "evt_3", ""},
		{time.Second, "stripe", "invoice.paid", "evt_1", "Staging"}, // a retry of evt_1
	}
	for _, r := range rows {
		d := &Delivery{ReceivedAt: now.Add(-r.age), Provider: r.provider, EventType: r.typ, EventID: r.id, Method: "POST", Target: "/", Source: r.source}
		if err := s.InsertDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(f Filter) string {
		ds, err := s.ListDeliveries(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, d.EventID)
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		f    Filter
		want string
	}{
		{Filter{}, "evt_1,evt_3,gh_1,evt_2,evt_1"},
		{Filter{Oldest: true}, "evt_1,evt_2,gh_1,evt_3,evt_1"},
		{Filter{Provider: "github"}, "gh_1"},
		{Filter{TypeGlob: "invoice.*"}, "evt_1,evt_2,evt_1"},
		{Filter{TypeGlob: "invoice.paid"}, "evt_1,evt_1"},
		{Filter{EventID: "evt_1"}, "evt_1,evt_1"},
		{Filter{Since: now.Add(-4 * time.Hour)}, "evt_1,evt_3,gh_1"},
		{Filter{Limit: 2}, "evt_1,evt_3"},
		{Filter{Provider: "stripe", Since: now.Add(-3 * 24 * time.Hour), TypeGlob: "invoice.*"}, "evt_1,evt_2"},
		{Filter{Provider: "slack"}, ""},
		{Filter{Source: "staging"}, "gh_1,evt_1"},
		{Filter{Source: "staging", Provider: "stripe"}, "evt_1"},
		{Filter{Source: "Staging", Limit: 1}, "evt_1"},
		{Filter{Source: "nowhere"}, ""},
	}
	for _, tc := range cases {
		if got := ids(tc.f); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.f, got, tc.want)
		}
	}
	n, err := s.PruneDeliveries(ctx, now.Add(-7*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if got := ids(Filter{}); got != "evt_1,evt_3,gh_1,evt_2" {
		t.Fatalf("after prune: %s", got)
	}
	n, err = s.DeleteDeliveries(ctx, 2, 3, 99)
	if err != nil || n != 2 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if got := ids(Filter{}); got != "evt_1,evt_3" {
		t.Fatalf("after delete: %s", got)
	}
}

// A reader in another connection sees committed rows while a writer inserts.
func TestConcurrentWritersAndReaders(t *testing.T) { eachBackend(t, testConcurrentWritersAndReaders) }

func testConcurrentWritersAndReaders(t *testing.T, loc string) {
	path := loc
	w := deliveriesOpen(t, path)
	r := deliveriesOpen(t, path)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if err := w.InsertDelivery(ctx, &Delivery{Method: "POST", Target: "/", Raw: []byte("r")}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			if _, err := r.ListDeliveries(ctx, Filter{Limit: 10}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	ds, err := r.ListDeliveries(ctx, Filter{})
	if err != nil || len(ds) != 100 {
		t.Fatalf("%d deliveries, %v", len(ds), err)
	}
}

func TestSetSync(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.Synchronous(ctx); err != nil || v != 1 {
		t.Fatalf("default synchronous = %d, %v; want 1 (normal)", v, err)
	}
	if err := st.SetSync(SyncFull); err != nil {
		t.Fatal(err)
	}
	if v, err := st.Synchronous(ctx); err != nil || v != 2 {
		t.Fatalf("after SetSync(full) synchronous = %d, %v; want 2", v, err)
	}
	d := &Delivery{Method: "POST", Target: "/", Raw: []byte("POST / HTTP/1.1\r\n\r\n")}
	if err := st.InsertDelivery(ctx, d); err != nil || d.ID == 0 {
		t.Fatalf("insert after SetSync: id %d, %v", d.ID, err)
	}
	if _, err := ParseSync("off"); err == nil {
		t.Error("ParseSync(off) accepted")
	}
}

// TestDerivedFromAndSettings: an edited copy keeps the delivery it came
// from through insert, get, summaries and JSONL; a setting is replaced.
func TestDerivedFromAndSettings(t *testing.T) {
	eachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		st, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		derivedFromAndSettings(t, ctx, st)
	})
}

func derivedFromAndSettings(t *testing.T, ctx context.Context, st *Store) {
	orig := &Delivery{Method: "POST", Target: "/h", Raw: []byte("POST /h HTTP/1.1\r\n\r\n")}
	if err := st.InsertDelivery(ctx, orig); err != nil {
		t.Fatal(err)
	}
	edited := &Delivery{Method: "POST", Target: "/h", Raw: []byte("POST /h HTTP/1.1\r\n\r\n"), DerivedFrom: orig.ID}
	if err := st.InsertDelivery(ctx, edited); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetDelivery(ctx, edited.ID)
	if err != nil || got.DerivedFrom != orig.ID {
		t.Fatalf("derived_from %v, %v; want %d", got, err, orig.ID)
	}
	sums, err := st.ListSummaries(ctx, Filter{}, Page{Limit: 10})
	if err != nil || len(sums) != 2 || sums[0].DerivedFrom != orig.ID || sums[1].DerivedFrom != 0 {
		t.Fatalf("summaries %+v, %v", sums, err)
	}
	var b bytes.Buffer
	if err := WriteJSONL(&b, []*Delivery{got}); err != nil || !strings.Contains(b.String(), fmt.Sprintf(`"derived_from":%d`, orig.ID)) {
		t.Fatalf("jsonl %s, %v", b.String(), err)
	}
	if _, ok, err := st.Setting(ctx, "tui.check"); ok || err != nil {
		t.Fatalf("setting before any: %v %v", ok, err)
	}
	for _, v := range []string{`{"a":1}`, `{"a":2}`} {
		if err := st.SetSetting(ctx, "tui.check", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := st.Setting(ctx, "tui.check"); !ok || err != nil || v != `{"a":2}` {
		t.Fatalf("setting %q %v %v", v, ok, err)
	}
}

// TestStatusAndHeaderFilters: status ranges and header matches select the
// same deliveries on both backends (the TUI's status: and header:).
func TestStatusAndHeaderFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		st, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, d := range []*Delivery{
			{Method: "POST", Target: "/a", ResponseStatus: 502, Headers: message.Headers{{Name: "X-GitHub-Event", Value: "push"}}},
			{Method: "POST", Target: "/b", ResponseStatus: 200, Headers: message.Headers{{Name: "x-github-event", Value: "Push"}}},
			{Method: "POST", Target: "/c", Headers: message.Headers{{Name: "Content-Type", Value: "push"}}},
		} {
			d.Raw = []byte("POST " + d.Target + " HTTP/1.1\r\n\r\n")
			if err := st.InsertDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			f    Filter
			want []string
		}{
			{Filter{Status: &StatusRange{500, 599}}, []string{"/a"}},
			{Filter{Status: &StatusRange{200, 200}}, []string{"/b"}},
			{Filter{Status: &StatusRange{}}, []string{"/c"}},
			{Filter{Headers: []HeaderMatch{{Name: "X-Github-Event", Value: "push"}}}, []string{"/a"}},
			{Filter{Headers: []HeaderMatch{{Name: "x-github-event", AnyValue: true}}}, []string{"/b", "/a"}},
			{Filter{Headers: []HeaderMatch{{Name: "x-github-event", AnyValue: true}, {Name: "content-type", AnyValue: true}}}, nil},
		} {
			ds, err := st.ListSummaries(ctx, tc.f, Page{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range ds {
				got = append(got, d.Target)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("%+v: %v, want %v", tc.f, got, tc.want)
			}
		}
	})
}
