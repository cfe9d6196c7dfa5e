package e2e

// Redis, queues and outboxes (issue 20 §2): handlers that deduplicate with
// SET NX EX, hand the work to an RQ-style queue a worker drains, or write an
// outbox row a worker sends — each correct and buggy — checked through
// --probe-redis and --probe-sql, with the worker's effect waited for.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// correctRepeats is how many times the correct handlers' checks run: once
// in the default suite, more under the slow tag (no false positive, run
// after run).
var correctRepeats = 1

// repeats is how often a check of a handler expected to pass (code 0) runs.
func repeats(code int) int {
	if code == 0 {
		return correctRepeats
	}
	return 1
}

// startWorker runs work until the test ends, and waits for it.
func startWorker(t *testing.T, work func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); work(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// redisClient connects to url for a handler under test.
func redisClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// eventID reads a Stripe event's id.
func eventID(r *http.Request) (string, bool) {
	var ev struct {
		ID string `json:"id"`
	}
	if json.NewDecoder(r.Body).Decode(&ev) != nil || ev.ID == "" {
		return "", false
	}
	return ev.ID, true
}

// redisDedupeHandler credits once per event: "setnx" claims the event with
// SET evt:<id> 1 NX EX ttl before the work (correct); "getset" looks the id
// up, works, then records it (a check-then-act race: concurrent copies all
// see it missing).
type redisDedupeHandler struct {
	c       *redis.Client
	px      string
	variant string
	ttl     time.Duration
	mu      sync.Mutex
	done    map[string]bool
}

func (h *redisDedupeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := eventID(r)
	if !ok {
		http.Error(w, "bad event", 400)
		return
	}
	ctx, key := r.Context(), h.px+"evt:"+id
	switch h.variant {
	case "setnx":
		claimed, err := h.c.SetNX(ctx, key, "1", h.ttl).Result()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		if !claimed {
			return // a duplicate: 200, nothing done
		}
	case "guarded":
		// A short-lived key as a fast path, and a durable record behind it
		// (here in memory, standing for a processed_events table).
		if claimed, err := h.c.SetNX(ctx, key, "1", h.ttl).Result(); err != nil || !claimed {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.done[id] {
			return
		}
		if h.done == nil {
			h.done = map[string]bool{}
		}
		h.done[id] = true
	case "getset":
		n, err := h.c.Exists(ctx, key).Result()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		if n > 0 {
			return
		}
		time.Sleep(30 * time.Millisecond) // the work between the look-up and the record
		defer h.c.Set(context.Background(), key, "1", h.ttl)
	}
	h.c.IncrBy(ctx, h.px+"credits", 5000)
}

func redisCheckArgs(base string, id int64, extra ...string) []string {
	return append([]string{"--to", base + "/webhooks/stripe", "--secret", checkSecret, "-n", "3", "--burst", "8",
		"--settle", "100ms", "--phases", "first,dups,burst", fmt.Sprint(id)}, extra...)
}

// SET NX EX before the work passes; a look-up then a later SET does the
// work twice under a burst, and the Redis probe sees it.
func TestCheckRedisSetNXDedupe(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	url, px := testkit.Redis(t)
	for _, tc := range []struct {
		variant string
		code    int
	}{{"setnx", 0}, {"getset", 1}} {
		t.Run(tc.variant, func(t *testing.T) {
			t.Parallel()
			px := px + tc.variant + ":"
			base := serveHandler(t, &redisDedupeHandler{c: redisClient(t, url), px: px, variant: tc.variant, ttl: time.Hour})
			for range repeats(tc.code) {
				db := filepath.Join(t.TempDir(), "h.db")
				id := checkStripeDelivery(t, db)
				r, c := checkRunJSON(t, db, redisCheckArgs(base, id,
					"--probe-redis", "credits="+url+" GET "+px+"credits", "--probe-redis", "seen="+url+" KEYS-COUNT '"+px+"evt:*'")...)
				if r.Code != tc.code || c == nil {
					t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
				}
				e := c.Deliveries[0].Effect
				if len(e) != 2 || e[0].Probe != "credits" || e[0].Delta == nil || *e[0].Delta != 5000 || e[1].Probe != "seen" || e[1].Delta == nil || *e[1].Delta != 1 {
					t.Fatalf("first's effect: %+v", e)
				}
				if tc.code == 1 && checkPhase(t, c, "burst").Status != report.Fail {
					t.Fatalf("burst should fail: %s", checkDump(c))
				}
			}
		})
	}
}

// rqHandler enqueues a job per event on an RQ-style list (rq:queue:default)
// that a worker drains, sending a receipt (INCR receipts) 60 ms later:
// "dedupe" enqueues only the first delivery of an event id (SET NX EX),
// "naive" every delivery.
type rqHandler struct {
	c      *redis.Client
	px     string
	dedupe bool
}

func (h *rqHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := eventID(r)
	if !ok {
		http.Error(w, "bad event", 400)
		return
	}
	if h.dedupe {
		if claimed, err := h.c.SetNX(r.Context(), h.px+"evt:"+id, "1", 72*time.Hour).Result(); err != nil || !claimed {
			return
		}
	}
	h.c.LPush(r.Context(), h.px+"rq:queue:default", `{"event":"`+id+`"}`)
	w.WriteHeader(202)
}

// work drains the queue until ctx ends: each job sends one receipt.
func (h *rqHandler) work(ctx context.Context) {
	for ctx.Err() == nil {
		if _, err := h.c.BRPop(ctx, time.Second, h.px+"rq:queue:default").Result(); err != nil {
			continue
		}
		time.Sleep(60 * time.Millisecond)
		h.c.Incr(context.Background(), h.px+"receipts")
	}
}

// A queue on Redis with a worker: the worker's effect lands after the
// answer, the report says so, and the naive handler's duplicate jobs are
// counted once the worker has done them.
func TestCheckRedisQueueWorker(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	url, px := testkit.Redis(t)
	for _, tc := range []struct {
		name   string
		dedupe bool
		code   int
	}{{"dedupe", true, 0}, {"naive", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &rqHandler{c: redisClient(t, url), px: px + tc.name + ":", dedupe: tc.dedupe}
			startWorker(t, h.work)
			base := serveHandler(t, h)
			for range repeats(tc.code) {
				db := filepath.Join(t.TempDir(), "h.db")
				id := checkStripeDelivery(t, db)
				r, c := checkRunJSON(t, db, redisCheckArgs(base, id,
					"--probe-redis", "receipts="+url+" GET "+h.px+"receipts", "--probe-redis", "queued="+url+" LLEN "+h.px+"rq:queue:default")...)
				if r.Code != tc.code || c == nil {
					t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
				}
				if !strings.Contains(strings.Join(c.Notes, "\n"), "effects were still arriving") {
					t.Fatalf("the report should say the work is done behind the answer: %q", c.Notes)
				}
				if e := c.Deliveries[0].Effect; e[0].Delta == nil || *e[0].Delta != 1 || e[1].Changed {
					t.Fatalf("first's effect should be one receipt and an empty queue again: %+v", e)
				}
				if tc.code == 1 {
					// The worker did each duplicate job: the receipts count, not
					// only the queue a copy was read on while its job waited.
					v := checkPhase(t, c, "dups").Violations
					if !slices.ContainsFunc(v, func(v report.Violation) bool { return v.Probe == "receipts" }) {
						t.Fatalf("dups should count the receipts the worker sent for the duplicates: %+v", v)
					}
				}
			}
		})
	}
}

// outboxHandler writes an outbox row per event in the handler's SQLite
// database and a worker sends each unsent row (a row in sent): "unique"
// keys the outbox on the event id (INSERT OR IGNORE), "naive" inserts a row
// per delivery.
type outboxHandler struct {
	db     *sql.DB
	unique bool
}

func (h *outboxHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := eventID(r)
	if !ok {
		http.Error(w, "bad event", 400)
		return
	}
	q := "INSERT INTO outbox (event_id) VALUES (?)"
	if h.unique {
		q = "INSERT OR IGNORE INTO outbox (event_id) VALUES (?)"
	}
	if _, err := h.db.ExecContext(r.Context(), q, id); err != nil {
		http.Error(w, err.Error(), 500)
	}
}

// work polls the outbox every 30 ms and sends what is unsent.
func (h *outboxHandler) work(ctx context.Context) {
	tick := time.NewTicker(30 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// Send and mark in one transaction: a row inserted between the two
		// statements would otherwise be marked sent and never sent.
		tx, err := h.db.BeginTx(ctx, nil)
		if err != nil {
			continue
		}
		_, _ = tx.Exec(`INSERT INTO sent (outbox_id) SELECT id FROM outbox WHERE sent = 0`)
		_, _ = tx.Exec(`UPDATE outbox SET sent = 1 WHERE sent = 0`)
		_ = tx.Commit()
	}
}

// The outbox recipe: probe the outbox rows and the worker's effect; the
// worker's sends land after the answer and are waited for.
func TestCheckOutboxWorker(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		name   string
		unique bool
		code   int
	}{{"unique", true, 0}, {"naive", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			appDB := filepath.Join(dir, "app.db")
			adb, err := sql.Open("sqlite", appDB+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
			if err != nil {
				t.Fatal(err)
			}
			adb.SetMaxOpenConns(1) // one writer: the handler and the worker take turns
			t.Cleanup(func() { adb.Close() })
			if _, err := adb.Exec(`CREATE TABLE outbox (id INTEGER PRIMARY KEY, event_id TEXT ` + map[bool]string{true: "UNIQUE", false: ""}[tc.unique] + `, sent INTEGER NOT NULL DEFAULT 0);
				CREATE TABLE sent (outbox_id INTEGER NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			h := &outboxHandler{db: adb, unique: tc.unique}
			startWorker(t, h.work)
			base := serveHandler(t, h)
			for i := range repeats(tc.code) {
				db := filepath.Join(dir, fmt.Sprintf("h%d.db", i))
				id := checkStripeDelivery(t, db)
				r, c := checkRunJSON(t, db, redisCheckArgs(base, id, "--dsn", "sqlite:"+appDB,
					"--probe-sql", "outbox=SELECT count(*) FROM outbox", "--probe-sql", "sent=SELECT count(*) FROM sent")...)
				if r.Code != tc.code || c == nil {
					t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
				}
				if e := c.Deliveries[0].Effect; e[0].Delta == nil || *e[0].Delta != 1 || e[1].Delta == nil || *e[1].Delta != 1 {
					t.Fatalf("first's effect should be one outbox row, sent once: %+v", e)
				}
			}
		})
	}
}

// Retention (issue 20 §3): a dedupe key kept 24 h fails against Stripe's 3
// days of retries, read from the TTL of the key a fresh event creates or as
// declared; kept 4 days it passes. --forget-cmd proves it: the late retry
// after DEL does the work again — unless a durable record stands behind the
// key, which then passes.
func TestCheckRetention(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	url, px := testkit.Redis(t)
	cli, cliErr := exec.LookPath("redis-cli")
	for _, tc := range []struct {
		name, variant string
		ttl           time.Duration
		extra         []string
		forget        bool
		code          int
		want          string
	}{
		{"short", "setnx", 24 * time.Hour, nil, false, 1, "event ids are forgotten after 24h (the fresh event"},
		{"long", "setnx", 96 * time.Hour, nil, false, 0, "event ids are kept 4d"},
		{"declared", "setnx", 96 * time.Hour, []string{"--dedupe-ttl", "24h"}, false, 1, "event ids are forgotten after 24h (as declared with --dedupe-ttl), but stripe retries for up to 3d"},
		{"forget", "setnx", 24 * time.Hour, nil, true, 1, "its late retry did the work again (credits 10000 → 15000 (+5000))"},
		{"guarded", "guarded", 24 * time.Hour, nil, true, 0, "its late retry changed nothing: another guard holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			px := px + tc.name + ":"
			base := serveHandler(t, &redisDedupeHandler{c: redisClient(t, url), px: px, variant: tc.variant, ttl: tc.ttl})
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			args := []string{"--to", base + "/webhooks/stripe", "--secret", checkSecret, "-n", "2", "--settle", "100ms",
				"--phases", "first,retention", "--probe-redis", "credits=" + url + " GET " + px + "credits",
				"--probe-redis", "seen=" + url + " KEYS-COUNT '" + px + "evt:*'", fmt.Sprint(id)}
			if tc.forget {
				if cliErr != nil {
					t.Skip("redis-cli is not installed")
				}
				args = append(args, "--forget-cmd", cli+" -u "+url+" DEL "+px+"evt:$HOOKREPLAY_EVENT_ID")
			}
			r, c := checkRunJSON(t, db, append(args, tc.extra...)...)
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			if ph := checkPhase(t, c, "retention"); !strings.Contains(ph.Message, tc.want) {
				t.Fatalf("retention: %s %q, want %q", ph.Status, ph.Message, tc.want)
			}
		})
	}
}
