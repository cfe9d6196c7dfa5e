package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// teamSources runs two captures into one store, one named with --source and
// one left to its default (the host name), and checks that list, show, export,
// import and the TUI tell them apart. db is a SQLite path or a Postgres URL.
func teamSources(t *testing.T, db, other string) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Fatalf("host name: %q %v", host, err)
	}
	_, staging := captureStart(t, db, "--source", "staging", "--quiet")
	_, laptop := captureStart(t, db, "--quiet")
	gh := mustRead(t, "testdata/export/github.http")
	stagingID := captureAckID(t, captureExchange(t, staging, gh, 1)[0])
	laptopID := captureAckID(t, captureExchange(t, laptop, gh, 1)[0])
	if stagingID == laptopID {
		t.Fatalf("two captures into one store gave the same id %d", stagingID)
	}

	sources := map[int64]string{}
	for _, d := range captureList(t, db) {
		sources[d.ID] = d.Source
	}
	if sources[stagingID] != "staging" || sources[laptopID] != host {
		t.Fatalf("list --json sources %v, want %d staging and %d %s", sources, stagingID, laptopID, host)
	}
	if l := captureList(t, db, "--source", "staging"); len(l) != 1 || l[0].ID != stagingID {
		t.Fatalf("list --source staging: %+v", l)
	}
	if l := captureList(t, db, "--source", host); len(l) != 1 || l[0].ID != laptopID {
		t.Fatalf("list --source %s: %+v", host, l)
	}
	r := runBin(t, db, nil, "list", "--source", "nowhere")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "no deliveries match") {
		t.Fatalf("list --source nowhere: %+v", r)
	}
	r = runBin(t, db, nil, "show", strconv.FormatInt(stagingID, 10), "--json")
	var shown struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &shown); err != nil || shown.Source != "staging" {
		t.Fatalf("show --json: source %q (%v)\n%s", shown.Source, err, r.Stdout)
	}
	r = runBin(t, db, nil, "show", strconv.FormatInt(stagingID, 10))
	if !strings.Contains(r.Stdout, "(source staging)") {
		t.Fatalf("show does not name the source:\n%s", r.Stdout)
	}

	// Shared onwards as JSONL, the source goes with it.
	r = runBin(t, db, nil, "export", "--source", "staging", "--format", "jsonl")
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 1 || !strings.Contains(r.Stdout, `"source":"staging"`) {
		t.Fatalf("export --source staging: %+v", r)
	}
	if imp := runBin(t, other, []byte(r.Stdout), "import", "-", "--format", "jsonl"); imp.Code != 0 {
		t.Fatalf("import: %+v", imp)
	}
	if l := captureList(t, other, "--source", "staging"); len(l) != 1 || l[0].Source != "staging" {
		t.Fatalf("imported: %+v", l)
	}

	// The TUI starts filtered by list's --source, and source: filters in it.
	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db '%s' tui --source staging; sleep 600", binPath, db))
	tm.waitFor("1/1 deliveries matching source:staging", fmt.Sprintf("> %d ", stagingID))
	tm.keys("/", "C-u")
	tm.text("source:" + host)
	tm.keys("Enter")
	tm.waitFor("1/1 deliveries matching source:"+host, fmt.Sprintf("> %d ", laptopID))
	tm.keys("q")
}

func TestTeamSourcesSQLite(t *testing.T) {
	t.Parallel() // waits on processes and the store; asserts no timing
	dir := t.TempDir()
	teamSources(t, filepath.Join(dir, "team.db"), filepath.Join(dir, "mine.db"))
}

// seedOld writes n deliveries received 30 days ago into db from this
// process: another writer, as a second capture would be.
func seedOld(t *testing.T, db string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := st.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for n > 0 {
		k := min(n, 1000)
		ds := make([]*store.Delivery, k)
		for i := range ds {
			ds[i] = &store.Delivery{ReceivedAt: time.Now().Add(-30 * 24 * time.Hour), Method: "POST", Target: "/old",
				Raw: []byte("POST /old HTTP/1.1\r\n\r\n")}
		}
		if err := w.Commit(ctx, ds, nil); err != nil {
			t.Fatal(err)
		}
		n -= k
	}
}

// pruneWhileCapturing loads a capture --retain 7d with senders while old
// deliveries are pruned under it, by the capture's own retention and by
// prune processes, and checks that every delivery capture acknowledged is
// kept, every old one is gone and every request was answered 200.
func pruneWhileCapturing(t *testing.T, db string) {
	seedOld(t, db, 3000)
	_, addr := captureStart(t, db, "--retain", "7d", "--quiet")

	var mu sync.Mutex
	var acked []int64
	var failures []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 20 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Post("http://"+addr+"/load", "application/json", strings.NewReader(fmt.Sprintf(`{"n":%d}`, i)))
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				var v struct {
					ID int64 `json:"id"`
				}
				err = json.NewDecoder(resp.Body).Decode(&v)
				resp.Body.Close()
				mu.Lock()
				if resp.StatusCode != 200 || err != nil || v.ID == 0 {
					failures = append(failures, fmt.Sprintf("answer %d (%v)", resp.StatusCode, err))
				} else {
					acked = append(acked, v.ID)
				}
				mu.Unlock()
			}
		}()
	}
	// Meanwhile: more old rows from another writer, and prune processes.
	time.Sleep(300 * time.Millisecond)
	seedOld(t, db, 1000)
	for i := 0; i < 2; i++ {
		if r := runBin(t, db, nil, "prune", "--older-than", "7d"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "removed ") {
			t.Errorf("prune while capturing: %+v", r)
		}
	}
	seedOld(t, db, 1000)
	if r := runBin(t, db, nil, "prune", "--older-than", "7d"); r.Code != 0 {
		t.Errorf("prune while capturing: %+v", r)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d requests failed while pruning, first: %s", len(failures), failures[0])
	}
	if len(acked) < 50 {
		t.Fatalf("only %d deliveries acknowledged: no load", len(acked))
	}

	left := map[int64]bool{}
	old := 0
	for _, d := range captureList(t, db, "--limit", "0") {
		left[d.ID] = true
		if d.Target == "/old" {
			old++
		}
	}
	for _, id := range acked {
		if !left[id] {
			t.Fatalf("delivery %d was acknowledged and is gone (%d acknowledged)", id, len(acked))
		}
	}
	if old != 0 {
		t.Fatalf("%d old deliveries left after prune", old)
	}
	t.Logf("%d deliveries acknowledged while 5000 old ones were pruned; all kept", len(acked))
}

func TestPruneWhileCapturingSQLite(t *testing.T) {
	t.Parallel() // waits on processes and the store; asserts no timing
	pruneWhileCapturing(t, filepath.Join(t.TempDir(), "team.db"))
}

func TestTeamSourcesPostgres(t *testing.T) {
	t.Parallel() // waits on processes and the store; asserts no timing
	teamSources(t, testkit.PostgresSchema(t, "team_sources"), filepath.Join(t.TempDir(), "mine.db"))
}

// TestTeamLiveTUIPostgres: two processes, one Postgres store. A TUI open on
// it shows a delivery another process captures within a second (the
// watcher's LISTEN wakes it), and a replay run by a third process appears in
// its runs view.
func TestTeamLiveTUIPostgres(t *testing.T) {
	db := testkit.PostgresSchema(t, "team_live")
	_, addr := captureStart(t, db, "--source", "staging", "--quiet")
	gh := mustRead(t, "testdata/export/github.http")
	first := captureAckID(t, captureExchange(t, addr, gh, 1)[0])

	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db '%s' tui; sleep 600", binPath, db))
	tm.waitFor("1/1 deliveries", fmt.Sprintf("> %d ", first))

	var worst time.Duration
	for i := 0; i < 3; i++ {
		sent := time.Now()
		id := captureAckID(t, captureExchange(t, addr, gh, 1)[0])
		tm.waitFor(fmt.Sprintf("1/%d deliveries", i+2), fmt.Sprintf("> %d ", id))
		worst = max(worst, time.Since(sent))
	}
	t.Logf("a delivery captured by another process appeared in the TUI within %s (worst of 3, screen read every 100 ms)", worst.Round(10*time.Millisecond))
	if worst > time.Second {
		t.Errorf("a delivery captured by another process took %s to appear, want under a second", worst)
	}

	// A replay by someone else appears in the runs view, which is open.
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer handler.Close()
	tm.keys("R")
	tm.waitFor("no runs")
	if r := runBin(t, db, nil, "replay", strconv.FormatInt(first, 10), "--to", handler.URL+"/hooks/github"); r.Code != 0 {
		t.Fatalf("replay: %+v", r)
	}
	ran := time.Now()
	tm.waitFor("1/1 runs", "replay", "✓ ok")
	if took := time.Since(ran); took > time.Second {
		t.Errorf("a replay run by another process took %s to appear in the runs view, want under a second", took)
	}
	tm.keys("q")
}

// TestTeamReadOnlyRolePostgres: a Postgres role granted only SELECT on
// hookreplay's schema (docs/team.md's browsing role) can list, show, export
// and open the TUI, and every command that writes is refused with one line
// saying the store is read-only for it, its password never shown.
func TestTeamReadOnlyRolePostgres(t *testing.T) {
	t.Parallel() // waits on processes and the server; asserts no timing
	owner := testkit.PostgresSchema(t, "team_ro")
	if r := runBin(t, owner, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import as the owner: %+v", r)
	}
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	role := "hr_reader_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	db, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'reader-pw-123'",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + role,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		db.Exec("DROP OWNED BY " + role)
		db.Exec("DROP ROLE " + role)
	})
	// The owner's URL as the reader: same server (its socket or address) and
	// schema, the reader's name and password.
	ru := *u
	ru.User = url.UserPassword(role, "reader-pw-123")
	reader := ru.String()

	if l := captureList(t, reader); len(l) != 6 {
		t.Fatalf("the reader lists %d deliveries, want 6", len(l))
	}
	for _, args := range [][]string{{"show", "1"}, {"show", "2", "--raw"}, {"export", "--last"}, {"runs"}} {
		if r := runBin(t, reader, nil, args...); r.Code != 0 || r.Stdout == "" {
			t.Fatalf("reader %v: %+v", args, r)
		}
	}
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the reader's %s %s reached the handler", r.Method, r.URL)
	}))
	defer handler.Close()
	for _, args := range [][]string{
		{"delete", "1"},
		{"prune", "--older-than", "1d"},
		{"replay", "1", "--to", handler.URL},
		{"import", "-"},
		{"capture", "--listen", "127.0.0.1:0"},
		{"check", "1", "--to", handler.URL, "--probe-cmd", "echo 1"},
	} {
		var stdin []byte
		if args[0] == "import" {
			stdin = mustRead(t, "internal/tui/testdata/deliveries.jsonl")
		}
		r := runBin(t, reader, stdin, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "database is read-only") || !strings.Contains(r.Stderr, "the Postgres role may read but not write") ||
			strings.Count(strings.TrimSpace(r.Stderr), "\n") > 1 || strings.Contains(r.Stdout+r.Stderr, "reader-pw-123") {
			t.Errorf("reader %v: exit %d\nstdout: %s\nstderr: %s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	if l := captureList(t, owner); len(l) != 6 {
		t.Fatalf("the owner now sees %d deliveries, want the 6 untouched", len(l))
	}

	// The TUI opens and shows them (its watcher LISTENs: any role may).
	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db '%s' tui; sleep 600", binPath, reader))
	tm.waitFor("1/6 deliveries", "> 6 ")
	tm.keys("d")
	tm.waitFor("delete")
	tm.keys("y")
	tm.waitFor("read-only")
	tm.keys("q")
}
