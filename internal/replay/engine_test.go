package replay

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// fixtureDelivery builds a stored delivery from a testdata capture.
func fixtureDelivery(t testing.TB, id int64, name string) *store.Delivery {
	t.Helper()
	raw, req := loadFixture(t, name)
	ident := verify.Detect(req)
	return &store.Delivery{ID: id, Provider: ident.Provider, EventID: ident.EventID, EventType: ident.EventType,
		Method: req.Method, Target: req.Target, Proto: req.Proto, Headers: req.Headers, Raw: raw, Body: req.Body,
		ReceivedAt: time.Now().Add(-2 * time.Hour)}
}

// collect is an AttemptSink that keeps what it saw.
type collect struct {
	mu sync.Mutex
	as []store.Attempt
}

func (c *collect) Attempt(_ context.Context, a *store.Attempt) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.as = append(c.as, *a)
	return nil
}

func TestRunSeqCopiesAreIdentical(t *testing.T) {
	srv := startRecServer(t, nil)
	d := fixtureDelivery(t, 7, "stripe_invoice_paid.http")
	var sink collect
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second), Copies: 5}, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 5 || len(sink.as) != 5 {
		t.Fatalf("attempts %d, sink %d", len(res.Attempts), len(sink.as))
	}
	for i, a := range sink.as {
		if a.Copy != i+1 || a.DeliveryID != 7 || a.Phase != "replay" || a.EventID != d.EventID || a.Status != 200 {
			t.Fatalf("attempt %d: %+v", i, a)
		}
		if i > 0 && a.SentAt.Before(sink.as[i-1].CompletedAt) {
			t.Fatal("seq copies overlapped")
		}
	}
	hits := srv.arrivals()
	if len(hits) != 5 {
		t.Fatalf("%d arrivals", len(hits))
	}
	for _, h := range hits {
		if !bytes.Equal(h.Req.Body, d.Body) || !equalHeaders(endToEndHeaders(h.Req.Headers), endToEndHeaders(d.Headers)) {
			t.Fatalf("copy differs from the capture:\n%s", h.Raw)
		}
	}
	sum := Summarize(res, []*store.Delivery{d})
	if sum.Classes["2xx"] != 5 || sum.Connected != 5 || sum.Errors != 0 || len(sum.Differences) != 0 {
		t.Fatalf("summary %+v", sum)
	}
}

// eventOrder returns the event ids in the order the handler saw them.
func eventOrder(srv *recServer) []string {
	var out []string
	for _, h := range srv.arrivals() {
		out = append(out, h.Req.Headers.Get("X-Test-Event"))
	}
	return out
}

func threeDeliveries(t *testing.T) []*store.Delivery {
	var ds []*store.Delivery
	for i, ev := range []string{"a", "b", "c"} {
		d := fixtureDelivery(t, int64(i+1), "stripe_invoice_paid.http")
		d.Headers = d.Headers.Set("X-Test-Event", ev)
		ds = append(ds, d)
	}
	return ds
}

func TestRunOrdersShuffleReproducibleBySeed(t *testing.T) {
	ds := threeDeliveries(t)
	order := func(o Order, seed int64) ([]string, int64) {
		srv := startRecServer(t, nil)
		res, err := Run(context.Background(), Plan{Deliveries: ds, Target: srv.target(5 * time.Second), Copies: 3, Order: o, Seed: seed}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return eventOrder(srv), res.Seed
	}
	seq, _ := order(OrderSeq, 0)
	if strings.Join(seq, "") != "aaabbbccc" {
		t.Fatalf("seq %v", seq)
	}
	rev, _ := order(OrderReverse, 0)
	if strings.Join(rev, "") != "cccbbbaaa" {
		t.Fatalf("reverse %v", rev)
	}
	s1, seed1 := order(OrderShuffle, 42)
	s2, _ := order(OrderShuffle, 42)
	if seed1 != 42 || !slices.Equal(s1, s2) {
		t.Fatalf("seed 42 not reproducible: %v vs %v", s1, s2)
	}
	if got := slices.Sorted(slices.Values(s1)); strings.Join(got, "") != "aaabbbccc" {
		t.Fatalf("shuffle lost copies: %v", s1)
	}
	differs := false
	for seed := int64(1); seed < 6 && !differs; seed++ {
		s, _ := order(OrderShuffle, seed)
		differs = !slices.Equal(s, s1)
	}
	if !differs {
		t.Fatal("every seed gives the same order")
	}
	r, random := order(OrderShuffle, 0)
	if random == 0 || len(r) != 9 {
		t.Fatalf("random seed %d not reported", random)
	}
	again, _ := order(OrderShuffle, random)
	if !slices.Equal(r, again) {
		t.Fatal("reported seed does not repeat the run")
	}
}

func TestRunLoseResponseProcessedButRecordedLost(t *testing.T) {
	var processed atomic.Int32
	srv := startRecServer(t, func(w http.ResponseWriter, a arrival) {
		processed.Add(1)
		w.Write([]byte(`{"ok":true}`))
	})
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second), Copies: 3, LoseResponse: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if processed.Load() != 3 {
		t.Fatalf("handler processed %d copies, want 3", processed.Load())
	}
	for _, a := range res.Attempts {
		lost := a.Copy <= 2
		if a.Lost != lost || (lost && a.Status != 0) || (!lost && a.Status != 200) {
			t.Fatalf("copy %d: %+v", a.Copy, a)
		}
	}
	// -n 1 --lose-response 1: a retry still follows.
	job, err := Prepare(Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(time.Second), Copies: 1, LoseResponse: 1})
	if err != nil || job.Planned() != 2 || !strings.Contains(strings.Join(job.Warnings, "\n"), "a retry follows") {
		t.Fatalf("planned %d, warnings %v, err %v", job.Planned(), job.Warnings, err)
	}
}

func TestRunScheduleRetriesUntilSuccess(t *testing.T) {
	var n atomic.Int32
	srv := startRecServer(t, func(w http.ResponseWriter, a arrival) {
		if n.Add(1) <= 2 {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(200)
	})
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	const speedup = 600 // slack: 1 s, 1 min, 5 min → 1.7 ms, 100 ms, 500 ms
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second),
		Copies: 1, Schedule: "slack", Speedup: speedup}, nil)
	if err != nil {
		t.Fatal(err)
	}
	as := res.Attempts
	if len(as) != 3 {
		t.Fatalf("%d attempts, want 3 (500, 500, 200)", len(as))
	}
	want := []time.Duration{0, time.Second, time.Minute}
	for i, a := range as {
		if a.StandsFor != want[i] || a.Copy != i+1 {
			t.Fatalf("attempt %d: stands for %v copy %d", i, a.StandsFor, a.Copy)
		}
		if gap := a.SentAt.Sub(as[0].SentAt); gap < want[i]/speedup {
			t.Fatalf("retry %d sent after %v, before its time %v", i, gap, want[i]/speedup)
		}
	}
	if as[2].Status != 200 || as[2].Detail["retry"] != 2 {
		t.Fatalf("last %+v", as[2])
	}

	// A handler that never succeeds exhausts the timetable.
	bad := startRecServer(t, func(w http.ResponseWriter, a arrival) { w.WriteHeader(503) })
	res, err = Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: bad.target(5 * time.Second),
		Copies: 1, Schedule: "twilio:3", Speedup: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 4 || res.Attempts[3].Detail["schedule_exhausted"] == nil {
		t.Fatalf("twilio:3 → %d attempts, last %+v", len(res.Attempts), res.Attempts[len(res.Attempts)-1])
	}
}

func TestRunBurstOrder(t *testing.T) {
	const n = 10
	var inside atomic.Int32
	all := make(chan struct{})
	var once sync.Once
	srv := startRecServer(t, func(w http.ResponseWriter, a arrival) {
		if inside.Add(1) == n {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
			w.WriteHeader(200)
		case <-time.After(5 * time.Second):
			w.WriteHeader(503)
		}
	})
	d := fixtureDelivery(t, 3, "stripe_invoice_paid.http")
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(10 * time.Second), Copies: n, Order: OrderBurst, LoseResponse: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bursts) != 1 || res.Bursts[0].Completed != n || res.Bursts[0].Spread <= 0 {
		t.Fatalf("bursts %+v", res.Bursts)
	}
	for _, a := range res.Attempts {
		if a.Copy == 1 {
			if !a.Lost || a.Status != 0 {
				t.Fatalf("copy 1 not lost: %+v", a)
			}
		} else if a.Status != 200 {
			t.Fatalf("copy %d: %+v", a.Copy, a)
		}
	}
}

func TestRunResignedCopiesVerify(t *testing.T) {
	const secret = "whsec_test_replay"
	srv := startRecServer(t, nil)
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	// The stored signature is two hours old: a warning without --secret.
	job, err := Prepare(Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Warnings) != 1 || !strings.Contains(job.Warnings[0], "tolerance") {
		t.Fatalf("warnings %v", job.Warnings)
	}
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second), Copies: 3,
		Secret: secret, Edits: Edits{JSONSet: []string{"data.object.amount_paid=9900"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 3 {
		t.Fatalf("%d attempts", len(res.Attempts))
	}
	for _, h := range srv.arrivals() {
		r, err := verify.Verify(h.Req, "stripe", secret, verify.Options{Now: h.At})
		if err != nil || !r.Valid {
			t.Fatalf("re-signed copy does not verify: %+v %v\n%s", r, err, h.Raw)
		}
		if !bytes.Contains(h.Req.Body, []byte(`"amount_paid": 9900,`)) {
			t.Fatalf("edit not applied: %s", h.Req.Body)
		}
	}
	if !strings.Contains(res.Attempts[0].Edit, "json-set data.object.amount_paid=9900") {
		t.Fatalf("edit not recorded: %q", res.Attempts[0].Edit)
	}
}

func TestRunEditsHeadersAndBody(t *testing.T) {
	srv := startRecServer(t, nil)
	d := fixtureDelivery(t, 1, "github_pr_chunked.http")
	body := filepath.Join(t.TempDir(), "b.json")
	os.WriteFile(body, []byte(`{"replaced":true}`), 0o600)
	b, _ := os.ReadFile(body)
	_, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second),
		Edits: Edits{SetHeaders: []message.Header{{Name: "X-GitHub-Event", Value: "issues"}, {Name: "X-New", Value: "1"}},
			DropHeaders: []string{"user-agent"}, Body: b, BodyFile: body}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := srv.arrivals()[0].Req
	if got.Headers.Has("User-Agent") || got.Headers.Get("X-GitHub-Event") != "issues" || got.Headers[len(got.Headers)-2].Name != "X-New" {
		t.Fatalf("headers %v", got.Headers)
	}
	// X-GitHub-Event kept its position.
	if i := slices.IndexFunc(got.Headers, func(h message.Header) bool { return h.Name == "X-GitHub-Event" }); i != 3 {
		t.Fatalf("X-GitHub-Event moved to %d: %v", i, got.Headers)
	}
	if string(got.Body) != `{"replaced":true}` {
		t.Fatalf("body %q", got.Body)
	}
	if _, err := Prepare(Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(time.Second), Edits: Edits{DropHeaders: []string{"X-Nope"}}}); err == nil {
		t.Fatal("dropping a missing header should fail")
	}
	if _, err := Prepare(Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(time.Second), Raw: true, Edits: Edits{DropHeaders: []string{"Accept"}}}); err == nil {
		t.Fatal("--raw with edits should fail")
	}
}

func TestRunCancelStopsNewSendsAndKeepsInFlight(t *testing.T) {
	started := make(chan struct{}, 100)
	srv := startRecServer(t, func(w http.ResponseWriter, a arrival) {
		started <- struct{}{}
		time.Sleep(300 * time.Millisecond)
		w.WriteHeader(200)
	})
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		<-started // two copies in flight
		cancel()
	}()
	res, err := Run(ctx, Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second), Copies: 50, Concurrency: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Attempts) < 2 || len(res.Attempts) > 4 {
		t.Fatalf("interrupted=%v attempts=%d", res.Interrupted, len(res.Attempts))
	}
	for _, a := range res.Attempts {
		if a.Status != 200 {
			t.Fatalf("in-flight copy not finished: %+v", a)
		}
	}
}

func TestRunHandlerDown(t *testing.T) {
	srv := startRecServer(t, nil)
	u := *srv.URL
	srv.URL.Host = "127.0.0.1:1" // nothing listens on port 1
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: Target{URL: srv.URL, Timeout: time.Second}, Copies: 3}, nil)
	srv.URL = &u
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(res, nil)
	if sum.Attempts != 3 || sum.Errors != 3 || sum.Connected != 0 || sum.ErrorKinds["connect: connection refused"] != 3 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestSummarizeDifferences(t *testing.T) {
	var n atomic.Int32
	srv := startRecServer(t, func(w http.ResponseWriter, a arrival) {
		if n.Add(1) == 1 {
			w.Write([]byte(`{"ok":true}`))
			return
		}
		w.WriteHeader(409)
		w.Write([]byte(`{"error":"duplicate"}`))
	})
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	d.ResponseStatus, d.ResponseBody = 200, []byte(`{ "ok": true }`)
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second), Copies: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(res, []*store.Delivery{d})
	if sum.NonSuccess != 2 || sum.DuplicatesRejected != 2 {
		t.Fatalf("non-2xx %d, duplicates rejected %d", sum.NonSuccess, sum.DuplicatesRejected)
	}
	// copies 2 and 3 differ from copy 1 and from the capture; copy 1 equals the capture (JSON-equal).
	if len(sum.Differences) != 4 {
		t.Fatalf("differences %+v", sum.Differences)
	}
	for _, df := range sum.Differences {
		if df.Copy == 1 || df.Status != 409 || df.RefStatus != 200 {
			t.Fatalf("difference %+v", df)
		}
	}
	if sum.LatencyMax <= 0 || sum.LatencyP50 > sum.LatencyP95 || sum.LatencyP95 > sum.LatencyMax {
		t.Fatalf("latencies %v %v %v", sum.LatencyP50, sum.LatencyP95, sum.LatencyMax)
	}
}

func TestEditInEditor(t *testing.T) {
	_, req := loadFixture(t, "stripe_invoice_paid.http")
	// The "editor" rewrites the amount and drops a header, like a person would.
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "sed -i -e 's/4200/9900/' -e '/^Cache-Control/d'")
	edited, desc, err := EditInEditor(req, nil, os.Stderr, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if edited.Headers.Has("Cache-Control") || !bytes.Contains(edited.Body, []byte(`"amount_paid": 9900`)) {
		t.Fatalf("edit lost: %v\n%s", edited.Headers, edited.Body)
	}
	if len(edited.Body) != len(req.Body) {
		t.Fatalf("body length changed %d → %d", len(req.Body), len(edited.Body))
	}
	if desc != "editor: removed Cache-Control, body 450→450 bytes" && !strings.Contains(desc, "removed Cache-Control") {
		t.Fatalf("desc %q", desc)
	}
	t.Setenv("EDITOR", "true")
	same, desc, err := EditInEditor(req, nil, os.Stderr, os.Stderr)
	if err != nil || desc != "" || !bytes.Equal(same.Body, req.Body) {
		t.Fatalf("untouched edit changed something: %q %v", desc, err)
	}
}

func TestLookupSchedule(t *testing.T) {
	for name, want := range map[string]int{"stripe": 16, "github": 8, "shopify": 19, "slack": 4, "twilio": 2, "twilio:3": 4, "svix": 8, "none": 1, "": 1} {
		s, err := LookupSchedule(name)
		if err != nil || s.Attempts() != want {
			t.Errorf("%s: %d attempts, want %d (%v)", name, s.Attempts(), want, err)
		}
		if name != "none" && name != "" && s.Source == "" {
			t.Errorf("%s has no source", name)
		}
		for i := 1; i < len(s.Retries); i++ {
			if s.Retries[i] < s.Retries[i-1] {
				t.Errorf("%s: retries not increasing", name)
			}
		}
	}
	if s, _ := LookupSchedule("stripe"); s.Retries[len(s.Retries)-1] != 72*time.Hour {
		t.Error("stripe horizon")
	}
	// Svix's published timetable: the fourth attempt ~35 min 5 s after the first, the last 27 h 35 min 5 s.
	if s, _ := LookupSchedule("svix"); s.Retries[2] != 35*time.Minute+5*time.Second || s.Retries[len(s.Retries)-1] != 27*time.Hour+35*time.Minute+5*time.Second {
		t.Errorf("svix timetable %v", s.Retries)
	}
	for _, bad := range []string{"paypal", "stripe:3", "twilio:9"} {
		if _, err := LookupSchedule(bad); err == nil {
			t.Errorf("%s should fail", bad)
		}
	}
}
