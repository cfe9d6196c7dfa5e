package e2e

// End-to-end tests of `hookreplay replay` and `hookreplay runs`: the real
// binary against real handler servers on 127.0.0.1 that record exactly what
// arrived, with deliveries stored in a real SQLite file.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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

// replayArrival is one request as the handler server received it.
type replayArrival struct {
	Raw []byte
	Req *message.Request
	At  time.Time
}

// replayHandler is a real HTTP server recording each request's wire bytes.
type replayHandler struct {
	URL     string
	Host    string
	mu      sync.Mutex
	hits    []replayArrival
	respond func(w http.ResponseWriter, a replayArrival)
}

type replayConnKey struct{}

type replayRecConn struct {
	net.Conn
	mu  sync.Mutex
	buf []byte
}

func (c *replayRecConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.buf = append(c.buf, p[:n]...)
	c.mu.Unlock()
	return n, err
}

type replayRecListener struct{ net.Listener }

func (l replayRecListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &replayRecConn{Conn: c}, nil
}

func startReplayHandler(t *testing.T, respond func(w http.ResponseWriter, a replayArrival)) *replayHandler {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &replayHandler{URL: "http://" + l.Addr().String(), Host: l.Addr().String(), respond: respond}
	srv := &http.Server{
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, replayConnKey{}, c)
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			rc := r.Context().Value(replayConnKey{}).(*replayRecConn)
			rc.mu.Lock()
			raw := rc.buf
			rc.buf = nil
			rc.mu.Unlock()
			a := replayArrival{Raw: raw, At: time.Now()}
			a.Req, _ = message.Parse(raw)
			h.mu.Lock()
			h.hits = append(h.hits, a)
			h.mu.Unlock()
			if h.respond != nil {
				h.respond(w, a)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok":true}`))
		}),
	}
	go srv.Serve(replayRecListener{l})
	t.Cleanup(func() { srv.Close() })
	return h
}

func (h *replayHandler) arrivals() []replayArrival {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]replayArrival(nil), h.hits...)
}

// replayStore creates a database holding the testdata captures and returns
// its path and the deliveries (ids in file order).
func replayStore(t *testing.T, files ...string) (string, []*store.Delivery) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "hookreplay.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ds []*store.Delivery
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("internal", "replay", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		req, err := message.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		id := verify.Detect(req)
		d := &store.Delivery{ReceivedAt: time.Now().Add(-time.Hour), Provider: id.Provider, EventID: id.EventID, EventType: id.EventType,
			Method: req.Method, Target: req.Target, Proto: req.Proto, Headers: req.Headers, Raw: raw, Body: req.Body}
		if err := st.InsertDelivery(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	return db, ds
}

// replayDoc is the --json output.
type replayDoc struct {
	Run struct {
		ID      int64          `json:"id"`
		Seed    int64          `json:"seed"`
		Verdict string         `json:"verdict"`
		Options map[string]any `json:"options"`
	} `json:"run"`
	Warnings []string        `json:"warnings"`
	Attempts []store.Attempt `json:"attempts"`
	Summary  struct {
		Attempts   int              `json:"attempts"`
		Connected  int              `json:"connected"`
		Errors     int              `json:"errors"`
		Lost       int              `json:"lost"`
		Classes    map[string]int   `json:"classes"`
		Bursts     []map[string]any `json:"bursts"`
		NonSuccess int              `json:"non_2xx"`
		Dups       int              `json:"duplicates_rejected"`
		Diffs      []map[string]any `json:"differences"`
	} `json:"summary"`
}

func replayJSONRun(t *testing.T, db string, args ...string) (replayDoc, result) {
	t.Helper()
	return replayJSONRunEnv(t, nil, db, args...)
}

// replayJSONRunEnv is replayJSONRun with env added to replay's environment.
func replayJSONRunEnv(t *testing.T, env []string, db string, args ...string) (replayDoc, result) {
	t.Helper()
	r := runBinEnv(t, env, db, nil, append([]string{"replay", "--json"}, args...)...)
	var doc replayDoc
	if r.Code == 0 || strings.HasPrefix(strings.TrimSpace(r.Stdout), "{") {
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("replay --json output: %v\n%s\nstderr: %s", err, r.Stdout, r.Stderr)
		}
	}
	return doc, r
}

func replayEndToEnd(h message.Headers) message.Headers {
	var out message.Headers
	for _, x := range h {
		switch strings.ToLower(x.Name) {
		case "host", "content-length", "transfer-encoding":
			continue
		}
		out = append(out, x)
	}
	return out
}

func TestReplayE2ECopiesIdenticalAndRecorded(t *testing.T) {
	t.Parallel()
	h := startReplayHandler(t, nil)
	db, ds := replayStore(t, "stripe_invoice_paid.http", "github_pr_chunked.http")
	for _, d := range ds {
		doc, r := replayJSONRun(t, db, fmt.Sprint(d.ID), "--to", h.URL, "-n", "5")
		if r.Code != 0 || len(doc.Attempts) != 5 || doc.Summary.Classes["2xx"] != 5 || doc.Run.Verdict != "ok" {
			t.Fatalf("replay %d: code %d, %+v\n%s", d.ID, r.Code, doc.Summary, r.Stderr)
		}
		for i, a := range doc.Attempts {
			if a.Copy != i+1 || a.DeliveryID != d.ID || a.ConnID == 0 || a.SentAt.IsZero() || a.CompletedAt.IsZero() || a.Latency <= 0 {
				t.Fatalf("attempt %+v", a)
			}
		}
	}
	hits := h.arrivals()
	if len(hits) != 10 {
		t.Fatalf("handler saw %d requests, want 10", len(hits))
	}
	for i, hit := range hits {
		d := ds[i/5]
		if !bytes.Equal(hit.Req.Body, d.Body) {
			t.Fatalf("copy %d body differs from the capture", i)
		}
		if got, want := replayEndToEnd(hit.Req.Headers), replayEndToEnd(d.Headers); !slices.Equal(got, want) {
			t.Fatalf("copy %d headers (order/case) differ:\n got %v\nwant %v", i, got, want)
		}
		if hit.Req.Target != d.Target || hit.Req.Headers.Get("Host") != h.Host {
			t.Fatalf("target %s host %s", hit.Req.Target, hit.Req.Headers.Get("Host"))
		}
	}
	// Both runs are in the store.
	r := runBin(t, db, nil, "runs", "--json")
	var runs []struct {
		ID       int64  `json:"id"`
		Kind     string `json:"kind"`
		Attempts int    `json:"attempts"`
		Verdict  string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &runs); err != nil || len(runs) != 2 || runs[0].Attempts != 5 || runs[0].Kind != "replay" {
		t.Fatalf("runs --json: %v %s", err, r.Stdout)
	}
	r = runBin(t, db, nil, "runs", "show", fmt.Sprint(runs[1].ID))
	if r.Code != 0 || strings.Count(r.Stdout, "replay  ") < 5 || !strings.Contains(r.Stdout, "summary 5 attempts") {
		t.Fatalf("runs show:\n%s\n%s", r.Stdout, r.Stderr)
	}
	r = runBin(t, db, nil, "runs", "show", "99")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no run 99") {
		t.Fatalf("runs show 99: %+v", r)
	}
	// Human output: a line per copy and the summary.
	r = runBin(t, db, nil, "replay", "--last", "--to", h.URL+"/other/path", "-n", "2")
	if r.Code != 0 || !strings.Contains(r.Stdout, "copy 2 ") || !strings.Contains(r.Stdout, "latency       p50") {
		t.Fatalf("human output:\n%s\n%s", r.Stdout, r.Stderr)
	}
	if last := h.arrivals(); last[len(last)-1].Req.Target != "/other/path" {
		t.Fatalf("--to path not used: %s", last[len(last)-1].Req.Target)
	}
}

func TestReplayE2EResignedCopiesVerify(t *testing.T) {
	t.Parallel()
	const secret = "whsec_e2e_replay_secret"
	h := startReplayHandler(t, nil)
	db, ds := replayStore(t, "stripe_invoice_paid.http")
	// Without a secret: the stored signature is kept and its age is flagged.
	doc, r := replayJSONRun(t, db, fmt.Sprint(ds[0].ID), "--to", h.URL)
	if r.Code != 0 || len(doc.Warnings) == 0 || !strings.Contains(doc.Warnings[0], "tolerance") {
		t.Fatalf("no stale-signature warning: %+v %s", doc.Warnings, r.Stderr)
	}
	if got := h.arrivals()[0].Req.Headers.Get("Stripe-Signature"); got != ds[0].Headers.Get("Stripe-Signature") {
		t.Fatal("signature changed without --secret")
	}
	doc, r = replayJSONRunEnv(t, []string{"HOOKREPLAY_E2E_SECRET=" + secret}, db, fmt.Sprint(ds[0].ID), "--to", h.URL, "-n", "3", "--secret-env", "HOOKREPLAY_E2E_SECRET",
		"--json-set", "data.object.amount_paid=9900", "--set-header", "X-Replay: yes")
	if r.Code != 0 || len(doc.Attempts) != 3 {
		t.Fatalf("resign: %d %s", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stdout, secret) {
		t.Fatal("secret leaked into the output")
	}
	for _, hit := range h.arrivals()[1:] {
		res, err := verify.Verify(hit.Req, "stripe", secret, verify.Options{Now: hit.At})
		if err != nil || !res.Valid {
			t.Fatalf("re-signed copy does not verify: %+v %v", res, err)
		}
		if !bytes.Contains(hit.Req.Body, []byte(`"amount_paid": 9900,`)) || hit.Req.Headers.Get("X-Replay") != "yes" {
			t.Fatalf("edits not applied:\n%s", hit.Raw)
		}
	}
	if !strings.Contains(doc.Attempts[0].Edit, "json-set data.object.amount_paid=9900") {
		t.Fatalf("edit not recorded: %q", doc.Attempts[0].Edit)
	}
}

func TestReplayE2EBurstInFlightTogether(t *testing.T) {
	t.Parallel()
	const n = 12
	var inside atomic.Int32
	all := make(chan struct{})
	var once sync.Once
	h := startReplayHandler(t, func(w http.ResponseWriter, a replayArrival) {
		if inside.Add(1) == n {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
			w.Write([]byte(`{"ok":true}`))
		case <-time.After(5 * time.Second):
			w.WriteHeader(503)
		}
	})
	db, ds := replayStore(t, "stripe_invoice_paid.http")
	doc, r := replayJSONRun(t, db, fmt.Sprint(ds[0].ID), "--to", h.URL, "-n", fmt.Sprint(n), "--order", "burst")
	if r.Code != 0 || doc.Summary.Classes["2xx"] != n {
		t.Fatalf("burst: not all copies were in flight together: %+v\n%s", doc.Summary, r.Stderr)
	}
	if len(doc.Summary.Bursts) != 1 || doc.Summary.Bursts[0]["spread_ns"].(float64) <= 0 {
		t.Fatalf("burst spread not reported: %+v", doc.Summary.Bursts)
	}
	r = runBin(t, db, nil, "replay", "1", "--to", h.URL, "-n", "3", "--order", "burst")
	if !strings.Contains(r.Stdout, "burst spread") {
		t.Fatalf("human output lacks the burst spread:\n%s", r.Stdout)
	}
}

func TestReplayE2ERawIsByteExact(t *testing.T) {
	t.Parallel()
	h := startReplayHandler(t, nil)
	db, ds := replayStore(t, "github_pr_chunked.http", "stripe_invoice_paid.http")
	for _, d := range ds {
		_, r := replayJSONRun(t, db, fmt.Sprint(d.ID), "--to", h.URL, "--raw")
		if r.Code != 0 {
			t.Fatalf("raw: %+v", r)
		}
	}
	for i, hit := range h.arrivals() {
		want := bytes.Replace(ds[i].Raw, []byte("Host: "+ds[i].Headers.Get("Host")+"\r\n"), []byte("Host: "+h.Host+"\r\n"), 1)
		if !bytes.Equal(hit.Raw, want) {
			t.Fatalf("raw copy %d differs:\n%q\nwant\n%q", i, hit.Raw, want)
		}
	}
	if r := runBin(t, db, nil, "replay", "1", "--to", h.URL, "--raw", "--secret", "x"); r.Code != 2 {
		t.Fatalf("--raw --secret: %+v", r)
	}
}

func TestReplayE2ELostResponsesWereProcessed(t *testing.T) {
	t.Parallel()
	var processed atomic.Int32
	h := startReplayHandler(t, func(w http.ResponseWriter, a replayArrival) {
		processed.Add(1)
		w.Write([]byte(`{"ok":true}`))
	})
	db, ds := replayStore(t, "stripe_invoice_paid.http")
	doc, r := replayJSONRun(t, db, fmt.Sprint(ds[0].ID), "--to", h.URL, "-n", "3", "--lose-response", "2")
	if r.Code != 0 || processed.Load() != 3 || doc.Summary.Lost != 2 {
		t.Fatalf("processed %d, summary %+v", processed.Load(), doc.Summary)
	}
	for _, a := range doc.Attempts {
		if (a.Copy <= 2) != a.Lost || (a.Lost && a.Status != 0) {
			t.Fatalf("%+v", a)
		}
	}
}

func TestReplayE2EScheduleCompressed(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	h := startReplayHandler(t, func(w http.ResponseWriter, a replayArrival) {
		if n.Add(1) <= 2 {
			w.WriteHeader(500)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	})
	db, ds := replayStore(t, "stripe_invoice_paid.http")
	start := time.Now()
	doc, r := replayJSONRun(t, db, fmt.Sprint(ds[0].ID), "--to", h.URL, "--schedule", "slack", "--speedup", "600")
	if r.Code != 0 || len(doc.Attempts) != 3 {
		t.Fatalf("schedule: %d attempts\n%s", len(doc.Attempts), r.Stderr)
	}
	want := []time.Duration{0, time.Second, time.Minute}
	for i, a := range doc.Attempts {
		if a.StandsFor != want[i] {
			t.Fatalf("attempt %d stands for %v, want %v", i, a.StandsFor, want[i])
		}
		if gap := a.SentAt.Sub(doc.Attempts[0].SentAt); gap < want[i]/600 {
			t.Fatalf("retry %d after %v, too early", i, gap)
		}
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("schedule not compressed")
	}
	r = runBin(t, db, nil, "replay", "1", "--to", h.URL, "--schedule", "stripe", "--speedup", "1000000")
	if !strings.Contains(r.Stdout, "docs.stripe.com") {
		t.Fatalf("schedule source not shown:\n%s", r.Stdout)
	}
}

func TestReplayE2EShuffleReproducible(t *testing.T) {
	t.Parallel()
	h := startReplayHandler(t, nil)
	db, _ := replayStore(t, "stripe_invoice_paid.http", "github_pr_chunked.http")
	order := func(args ...string) ([]string, int64) {
		before := len(h.arrivals())
		doc, r := replayJSONRun(t, db, append([]string{"1", "2", "--to", h.URL, "-n", "4", "--order", "shuffle"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("%+v", r)
		}
		var o []string
		for _, hit := range h.arrivals()[before:] {
			o = append(o, hit.Req.Target)
		}
		return o, doc.Run.Seed
	}
	a, seed := order()
	if seed == 0 {
		t.Fatal("random seed not reported")
	}
	b, _ := order("--seed", fmt.Sprint(seed))
	if !slices.Equal(a, b) || len(a) != 8 {
		t.Fatalf("seed %d did not repeat the order:\n%v\n%v", seed, a, b)
	}
}

func TestReplayE2EHandlerDownAndUsage(t *testing.T) {
	t.Parallel()
	db, _ := replayStore(t, "stripe_invoice_paid.http")
	down := "http://" + freeAddr(t)
	doc, r := replayJSONRun(t, db, "1", "--to", down, "-n", "3", "--timeout", "2s")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no copy could reach") || doc.Summary.Errors != 3 || doc.Summary.Connected != 0 {
		t.Fatalf("handler down: %+v %+v", r, doc.Summary)
	}
	if doc.Run.Verdict != "errors" || !strings.Contains(doc.Attempts[0].Err, "connection refused") {
		t.Fatalf("errors not recorded: %+v", doc.Attempts)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"replay", "1"}, "--to URL is required"},
		{[]string{"replay", "--to", "http://x"}, "which delivery"},
		{[]string{"replay", "1", "--to", "ftp://x"}, "--to ftp://x: want a URL (http://localhost:3000/webhooks), a port (3000) or host:port"},
		{[]string{"replay", "1", "--to", "http://x", "--order", "zigzag"}, "unknown order"},
		{[]string{"replay", "1", "--to", "http://x", "--schedule", "paypal"}, "unknown schedule"},
		{[]string{"replay", "9", "--to", "http://x"}, "no delivery 9"},
		{[]string{"replay", "abc", "--to", "http://x"}, "not a delivery id"},
		{[]string{"replay", "1", "--to", "http://x", "--set-header", "broken"}, "Name: value"},
		{[]string{"replay", "--event-id", "evt_nope", "--to", "http://x"}, "no captured delivery has event id"},
		{[]string{"replay", "1", "--to", "http://x", "--json-set", "data.nope.x=1"}, "no key"},
		{[]string{"runs", "--kind", "weird"}, "want replay, check or keycheck"},
	} {
		r := runBin(t, db, nil, c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.msg) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%v: code %d stderr %q, want %q", c.args, r.Code, r.Stderr, c.msg)
		}
	}
}

func TestReplayE2EInterruptKeepsWhatWasDone(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1000)
	h := startReplayHandler(t, func(w http.ResponseWriter, a replayArrival) {
		arrived <- struct{}{}
		time.Sleep(100 * time.Millisecond)
		w.Write([]byte(`{"ok":true}`))
	})
	db, _ := replayStore(t, "stripe_invoice_paid.http")
	p := startBin(t, db, "replay", "1", "--to", h.URL, "-n", "200", "--concurrency", "2")
	for i := 0; i < 4; i++ {
		select {
		case <-arrived:
		case <-time.After(15 * time.Second):
			t.Fatal("no copies arrived")
		}
	}
	p.stop(10 * time.Second) // SIGTERM: exit 128 + 15
	if code := p.cmd.ProcessState.ExitCode(); code != 143 {
		out, errOut := p.Output()
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	got := len(h.arrivals())
	r := runBin(t, db, nil, "runs", "show", "1", "--json")
	var doc struct {
		Run struct {
			Verdict string `json:"verdict"`
		} `json:"run"`
		Attempts []store.Attempt `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err, r.Stdout)
	}
	if doc.Run.Verdict != "interrupted" || len(doc.Attempts) != got || got >= 200 {
		t.Fatalf("verdict %q, %d attempts recorded, %d arrived", doc.Run.Verdict, len(doc.Attempts), got)
	}
	for _, a := range doc.Attempts {
		if a.Status != 200 {
			t.Fatalf("an in-flight copy was not completed: %+v", a)
		}
	}
}

func TestReplayE2EEditsEventIDAndEditor(t *testing.T) {
	t.Parallel()
	h := startReplayHandler(t, nil)
	db, ds := replayStore(t, "stripe_invoice_paid.http", "github_pr_chunked.http")
	// --event-id picks the capture of that event.
	doc, r := replayJSONRun(t, db, "--event-id", ds[1].EventID, "--to", h.URL, "--drop-header", "User-Agent",
		"--body-file", filepath.Join("internal", "replay", "testdata", "replacement_body.json"))
	if r.Code != 0 || len(doc.Attempts) != 1 || doc.Attempts[0].DeliveryID != ds[1].ID {
		t.Fatalf("--event-id: %+v %s", doc.Attempts, r.Stderr)
	}
	want, _ := os.ReadFile(filepath.Join("internal", "replay", "testdata", "replacement_body.json"))
	hit := h.arrivals()[0]
	if hit.Req.Headers.Has("User-Agent") || !bytes.Equal(hit.Req.Body, want) {
		t.Fatalf("edits not applied:\n%s", hit.Raw)
	}
	if !strings.Contains(doc.Attempts[0].Edit, "drop-header User-Agent") || !strings.Contains(doc.Attempts[0].Edit, "body-file") {
		t.Fatalf("edit not recorded: %q", doc.Attempts[0].Edit)
	}
	// GitHub signs the body: an edited copy without --secret is flagged.
	if len(doc.Warnings) == 0 || !strings.Contains(strings.Join(doc.Warnings, " "), "no longer matches") {
		t.Fatalf("no warning about the stale signature of an edited copy: %v", doc.Warnings)
	}

	// --edit runs $EDITOR on the request text; here a sed script plays the person.
	c := exec.Command(binPath, "--db", db, "replay", fmt.Sprint(ds[0].ID), "--to", h.URL, "--edit")
	c.Env = binEnv("VISUAL=", "EDITOR=sed -i -e s/4200/1234/ -e /^Cache-Control/d")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("--edit: %v\n%s", err, out)
	}
	hit = h.arrivals()[1]
	if hit.Req.Headers.Has("Cache-Control") || !bytes.Contains(hit.Req.Body, []byte(`"amount_paid": 1234,`)) || len(hit.Req.Body) != len(ds[0].Body) {
		t.Fatalf("editor changes not sent:\n%s", hit.Raw)
	}
	if !strings.Contains(string(out), "edited: editor: removed Cache-Control") {
		t.Fatalf("edit not shown:\n%s", out)
	}
}

func TestReplayE2EReverseOrder(t *testing.T) {
	t.Parallel()
	h := startReplayHandler(t, nil)
	db, ds := replayStore(t, "stripe_invoice_paid.http", "github_pr_chunked.http")
	_, r := replayJSONRun(t, db, "1", "2", "--to", h.URL, "-n", "2", "--order", "reverse")
	if r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	var got []string
	for _, hit := range h.arrivals() {
		got = append(got, hit.Req.Target)
	}
	want := []string{ds[1].Target, ds[1].Target, ds[0].Target, ds[0].Target}
	if !slices.Equal(got, want) {
		t.Fatalf("reverse order %v, want %v", got, want)
	}
}
