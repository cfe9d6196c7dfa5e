package e2e

// Choosing what to check without listing ids, and splitting it across CI
// jobs, through the real binary: --since/--one-per-type pick the newest of
// each event type, --shard K/N deals them out the same way from a SQLite
// store, from an export and from Postgres, and 'report merge' joins the
// shards' reports into what the unsplit check reports, refusing reports
// that are not one check's shards.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/testkit"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// selectHandler is an idempotent handler: it does its work (counts) once
// per event (its body and the id headers of GitHub and Shopify), and
// /count says how many.
func selectHandler(t *testing.T) string {
	var mu sync.Mutex
	seen := map[[32]byte]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		b = append(b, r.Header.Get("X-GitHub-Delivery")+r.Header.Get("X-Shopify-Webhook-Id")+r.Header.Get("X-Shopify-Event-Id")...)
		mu.Lock()
		seen[sha256.Sum256(b)] = true
		mu.Unlock()
	})
	mux.HandleFunc("/count", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(w, len(seen))
	})
	return serveHandler(t, mux)
}

// selectFill stores deliveries of several types in db: two of stripe's
// invoice.payment_succeeded (the newer is the one picked), one each of
// three other types, one of a fourth received two days ago, and a stray
// request with no event type. It returns the event ids --since 24h
// --one-per-type picks, by provider and type.
func selectFill(t *testing.T, db string) []string {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	var want []string
	for i, d := range []struct {
		provider, event string
		ago             time.Duration
		picked          bool
	}{
		{"stripe", "invoice.payment_succeeded", 3 * time.Hour, false},
		{"stripe", "invoice.paid", 48 * time.Hour, false},
		{"github", "push", 2 * time.Hour, true},
		{"stripe", "invoice.payment_succeeded", time.Hour, true},
		{"stripe", "charge.refunded", 30 * time.Minute, true},
		{"shopify", "orders/create", 20 * time.Minute, true},
	} {
		req, err := verify.BuildDeliveryTo(d.provider, d.event, checkSecret, "http://example.com/hook", now.Add(-d.ago))
		if err != nil {
			t.Fatal(err)
		}
		id := verify.Detect(req)
		sd := &store.Delivery{Source: fmt.Sprint("cap", i%2), ReceivedAt: now.Add(-d.ago), Provider: id.Provider, EventID: id.EventID, EventType: id.EventType,
			Method: req.Method, Target: req.Target, Proto: "HTTP/1.1", Headers: req.Headers, Body: req.Body, Raw: req.Encode("example.com", req.Target)}
		if err := st.InsertDelivery(context.Background(), sd); err != nil {
			t.Fatal(err)
		}
		if d.picked {
			want = append(want, id.EventID)
		}
	}
	stray := []byte("GET /favicon.ico HTTP/1.1\r\nHost: example.com\r\n\r\n")
	if err := st.InsertDelivery(context.Background(), &store.Delivery{ReceivedAt: now, Method: "GET", Target: "/favicon.ico", Proto: "HTTP/1.1", Raw: stray}); err != nil {
		t.Fatal(err)
	}
	// By provider and event type, as check orders them.
	return []string{want[0], want[3], want[2], want[1]}
}

// selectCheck runs check of --since 24h --one-per-type against the counting
// handler with extra flags, writing the JSON report to path.
func selectCheck(t *testing.T, db, url, path string, extra ...string) result {
	t.Helper()
	args := append([]string{"check", "--since", "24h", "--one-per-type", "--to", url + "/hook", "--probe-http", "n=" + url + "/count",
		"--secret", checkSecret, "--phases", "first,dups", "-n", "2", "--settle", "50ms", "--quiet", "--report", "json=" + path}, extra...)
	return runBin(t, db, nil, args...)
}

func selectReport(t *testing.T, path string) *report.Check {
	t.Helper()
	var c report.Check
	if err := json.Unmarshal(reportRead(t, path), &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &c
}

func selectEvents(c *report.Check) []string {
	var out []string
	for _, d := range c.Deliveries {
		out = append(out, d.EventID)
	}
	return out
}

func TestCheckOnePerTypeShardAndMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	want := selectFill(t, db)
	url := selectHandler(t)

	// list shows what check will pick.
	r := runBin(t, db, nil, "list", "--since", "24h", "--one-per-type", "--json")
	var listed []struct {
		EventID string `json:"event_id"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &listed) != nil || len(listed) != len(want) {
		t.Fatalf("list --one-per-type: exit %d, %d rows, want %d\n%s%s", r.Code, len(listed), len(want), r.Stdout, r.Stderr)
	}

	whole := filepath.Join(dir, "whole.json")
	if r := selectCheck(t, db, url, whole); r.Code != 0 {
		t.Fatalf("check --one-per-type: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := selectEvents(selectReport(t, whole)); !slices.Equal(got, want) {
		t.Fatalf("check --since 24h --one-per-type checked %v, want %v (the newest of each type, in provider/type order)", got, want)
	}

	// Three shards of four deliveries: sizes 2, 1, 1, every delivery once.
	var shards []string
	var union []string
	for k := 1; k <= 3; k++ {
		p := filepath.Join(dir, fmt.Sprintf("shard-%d.json", k))
		junit := filepath.Join(dir, fmt.Sprintf("shard-%d.xml", k))
		if r := selectCheck(t, db, url, p, "--shard", fmt.Sprintf("%d/3", k), "--report", "junit="+junit); r.Code != 0 {
			t.Fatalf("--shard %d/3: exit %d\n%s%s", k, r.Code, r.Stdout, r.Stderr)
		}
		c := selectReport(t, p)
		if c.Options["shard"] != fmt.Sprintf("%d/3", k) || c.Options["selected"] != float64(4) {
			t.Errorf("shard %d/3 records %v of %v", k, c.Options["shard"], c.Options["selected"])
		}
		if n := len(c.Deliveries); n != map[int]int{1: 2, 2: 1, 3: 1}[k] {
			t.Errorf("shard %d/3 checked %d deliveries", k, n)
		}
		union = append(union, selectEvents(c)...)
		shards = append(shards, p)
	}
	if slices.Sort(union); !slices.Equal(union, slices.Sorted(slices.Values(want))) {
		t.Fatalf("the shards checked %v, want each of %v once", union, want)
	}

	// The same split from an export imported elsewhere, and from Postgres.
	export := filepath.Join(dir, "day.jsonl")
	if r := runBin(t, db, nil, "export", "--since", "24h", "--one-per-type", "-o", export); r.Code != 0 {
		t.Fatalf("export --one-per-type: exit %d %s", r.Code, r.Stderr)
	}
	other := filepath.Join(dir, "other.db")
	if r := runBin(t, other, nil, "check", "--from", export, "--shard", "1/3", "--to", url+"/hook", "--probe-http", "n="+url+"/count", "--secret", checkSecret, "--phases", "first", "--settle", "50ms", "--quiet", "--json"); r.Code != 0 {
		t.Fatalf("check --from --shard 1/3: exit %d %s", r.Code, r.Stderr)
	} else {
		var c report.Check
		if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil {
			t.Fatal(err)
		}
		if got, first := selectEvents(&c), selectEvents(selectReport(t, shards[0])); !slices.Equal(got, first) {
			t.Errorf("shard 1/3 of the export checked %v, of the store %v", got, first)
		}
		if c.Options["selection"] != selectReport(t, shards[0]).Options["selection"] {
			t.Errorf("selection of the export %v, of the store %v", c.Options["selection"], selectReport(t, shards[0]).Options["selection"])
		}
	}
	// A CI job over a whole export: --one-per-type picks from the file.
	all := filepath.Join(dir, "all.jsonl")
	if r := runBin(t, db, nil, "export", "-o", all); r.Code != 0 {
		t.Fatalf("export: exit %d %s", r.Code, r.Stderr)
	}
	if r := runBin(t, filepath.Join(dir, "ci.db"), nil, "check", "--from", all, "--since", "24h", "--one-per-type", "--shard", "1/3", "--to", url+"/hook",
		"--probe-http", "n="+url+"/count", "--secret", checkSecret, "--phases", "first", "--settle", "50ms", "--quiet", "--json"); r.Code != 0 {
		t.Fatalf("check --from --one-per-type --shard 1/3: exit %d %s", r.Code, r.Stderr)
	} else {
		var c report.Check
		if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil {
			t.Fatal(err)
		}
		first := selectReport(t, shards[0])
		if got, want := selectEvents(&c), selectEvents(first); !slices.Equal(got, want) || c.Options["selection"] != first.Options["selection"] {
			t.Errorf("--one-per-type over the whole export, shard 1/3: %v (selection %v), of the store %v (%v)", got, c.Options["selection"], want, first.Options["selection"])
		}
	}
	if os.Getenv("HOOKREPLAY_TEST_PG") != "" {
		pg := testkit.PostgresSchema(t, "shard")
		if r := runBin(t, pg, nil, "import", export); r.Code != 0 {
			t.Fatalf("import into postgres: exit %d %s", r.Code, r.Stderr)
		}
		p := filepath.Join(dir, "pg-2.json")
		if r := selectCheck(t, pg, url, p, "--shard", "2/3"); r.Code != 0 {
			t.Fatalf("postgres --shard 2/3: exit %d %s", r.Code, r.Stderr)
		}
		if got, want := selectEvents(selectReport(t, p)), selectEvents(selectReport(t, shards[1])); !slices.Equal(got, want) {
			t.Errorf("shard 2/3 on Postgres checked %v, on SQLite %v", got, want)
		}
	}

	// The merge is the whole check's report, in every format.
	merged := filepath.Join(dir, "merged.xml")
	r = runBin(t, "", nil, "report", "merge", shards[2], shards[0], shards[1], "--json", "--report", "junit="+merged)
	if r.Code != 0 {
		t.Fatalf("report merge: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var m report.Check
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatal(err)
	}
	wc := selectReport(t, whole)
	if m.SchemaVersion != report.SchemaVersion || m.Verdict != wc.Verdict || m.Target != wc.Target || len(m.Shards) != 3 || !slices.Equal(m.Probes, wc.Probes) {
		t.Errorf("merged: schema %d verdict %s target %s, %d shards, probes %v; whole: %s %s %v", m.SchemaVersion, m.Verdict, m.Target, len(m.Shards), m.Probes, wc.Verdict, wc.Target, wc.Probes)
	}
	if got := selectEvents(&m); len(got) != 4 || !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("merged deliveries %v", got)
	}
	var mj, wj reportJUnit
	wholeXML := filepath.Join(dir, "whole.xml")
	if r := runBin(t, "", nil, "report", "merge", whole, "--report", "junit="+wholeXML); r.Code != 0 {
		t.Fatalf("merge of one report: exit %d %s", r.Code, r.Stderr)
	}
	if xml.Unmarshal(reportRead(t, merged), &mj) != nil || xml.Unmarshal(reportRead(t, wholeXML), &wj) != nil || mj.Tests != wj.Tests || mj.Failures != 0 || mj.Tests == 0 {
		t.Errorf("merged JUnit: %d tests %d failures; whole %d tests", mj.Tests, mj.Failures, wj.Tests)
	}

	// What is not one check's shards is refused in one line.
	bad := filepath.Join(dir, "narrower.json")
	if r := selectCheck(t, db, url, bad, "--shard", "3/3", "--provider", "stripe"); r.Code != 0 {
		t.Fatalf("stripe shard: exit %d %s", r.Code, r.Stderr)
	}
	notJSON := filepath.Join(dir, "shard-1.xml")
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{shards[0], shards[1]}, "shard 3/3 missing"},
		{[]string{shards[0], shards[0], shards[1], shards[2]}, "are both shard 1/3"},
		{[]string{shards[0], shards[1], bad}, "selected 4 deliveries"},
		{[]string{shards[0], shards[1], shards[2], whole}, "is not a shard's report"},
		{[]string{shards[0], notJSON}, "not a JSON check report"},
		{[]string{whole, whole}, "both judged delivery"},
	} {
		r := runBin(t, "", nil, append([]string{"report", "merge"}, tc.files...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("merge %v: exit %d %q, want one line with %q", tc.files, r.Code, r.Stderr, tc.want)
		}
	}
}

// TestCheckShardEmptyAndBadSpec: a shard no delivery falls to passes with
// a report that says so; a malformed --shard or filters with nothing to
// narrow are usage errors.
func TestCheckShardEmptyAndBadSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	selectFill(t, db)
	url := selectHandler(t)
	p := filepath.Join(dir, "s5.json")
	r := selectCheck(t, db, url, p, "--shard", "5/5")
	if r.Code != 0 {
		t.Fatalf("--shard 5/5 of 4: exit %d %s", r.Code, r.Stderr)
	}
	if c := selectReport(t, p); len(c.Deliveries) != 0 || c.Verdict != report.VerdictPass || len(c.Notes) == 0 || !strings.Contains(c.Notes[0], "none of the 4 selected deliveries") {
		t.Errorf("empty shard report: %+v", c)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/4"}, "K must be 1 to N"},
		{[]string{"--shard", "5/4"}, "K must be 1 to N"},
		{[]string{"--shard", "two"}, "want K/N"},
	} {
		r := selectCheck(t, db, url, p, tc.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, r.Code, r.Stderr)
		}
	}
	r = runBin(t, db, nil, "check", "--since", "24h", "--to", url+"/hook", "--probe-http", url+"/count")
	if r.Code != 2 || !strings.Contains(r.Stderr, "narrow --last, --event-id and --one-per-type") {
		t.Errorf("--since alone: exit %d %q", r.Code, r.Stderr)
	}
	r = runBin(t, db, nil, "check", "--one-per-type", "--since", "10m", "--to", url+"/hook", "--probe-http", url+"/count")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no captured delivery with an event type matches") {
		t.Errorf("nothing in 10m: exit %d %q", r.Code, r.Stderr)
	}
}
