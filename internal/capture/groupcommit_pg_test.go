package capture

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// Capture's group commit on a Postgres team store: requests served at once
// hand their deliveries to the committer, which stores what is waiting in
// one transaction and answers each request only after that transaction
// committed (deliver.go). These tests hold the store's deliveries table
// locked from another connection so that deliveries queue behind a commit
// for certain, then decide by what the store holds and what each request
// was answered.

// pgPost sends one delivery and returns its status and, when acknowledged,
// the id capture answered.
func pgPost(t *testing.T, addr string, r pgReq) (int, int64) {
	event, pad := r.event, r.pad
	if pad == 0 {
		pad = 600
	}
	resp, err := http.Post("http://"+addr+r.target, "application/json", strings.NewReader(`{"id":"`+event+`","pad":"`+strings.Repeat("x", pad)+`"}`))
	if err != nil {
		t.Errorf("%s: %v", event, err)
		return 0, 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Logf("%s answered %d %q", event, resp.StatusCode, b)
		return resp.StatusCode, 0
	}
	var ack struct{ ID int64 }
	if err := json.Unmarshal(b, &ack); err != nil || ack.ID == 0 {
		t.Errorf("%s: acknowledged with %q", event, b)
	}
	return resp.StatusCode, ack.ID
}

// pgReq is a delivery a test sends: its target, its event id, and how
// many bytes pad its body (600 when 0).
type pgReq struct {
	target, event string
	pad           int
}

// pgLock opens a transaction on loc's store that holds its deliveries table
// so that capture's inserts wait (SHARE ROW EXCLUSIVE conflicts with their
// ROW EXCLUSIVE, and lets this transaction create a trigger). The caller
// commits or rolls it back.
func pgLock(t *testing.T, loc string) (*sql.DB, *sql.Tx) {
	t.Helper()
	db, err := sql.Open("pgx", loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	// A test that stops early must not leave capture waiting on the lock:
	// its cleanup waits for the requests in flight.
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.Exec(`LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return db, tx
}

// pgWaitFor polls until cond holds (an event the test causes: a request
// waiting on the lock, deliveries queued), failing after a minute.
func pgWaitFor(t *testing.T, ts *testServer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; capture's log:\n%s", what, ts.errOut)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pgQueueBehindLock sends first and waits until its commit waits on the
// lock (capture must have stored a delivery already: its writer prepares
// its statements when it starts, which the lock would hold up too), then sends each of rest at once and waits until all of them are
// queued for the next commit. It returns the answers' channels, first's
// then rest's.
func pgQueueBehindLock(t *testing.T, ts *testServer, srv *Server, db *sql.DB, first pgReq, rest []pgReq) []chan [2]int64 {
	t.Helper()
	send := func(r pgReq) chan [2]int64 {
		ch := make(chan [2]int64, 1)
		go func() {
			code, id := pgPost(t, ts.addr, r)
			ch <- [2]int64{int64(code), id}
		}()
		return ch
	}
	out := []chan [2]int64{send(first)}
	pgWaitFor(t, ts, "the first commit to wait on the lock", func() bool {
		var n int
		err := db.QueryRow(`SELECT count(*) FROM pg_catalog.pg_locks WHERE relation = pg_catalog.to_regclass('deliveries') AND NOT granted`).Scan(&n)
		return err == nil && n > 0
	})
	for _, r := range rest {
		out = append(out, send(r))
	}
	pgWaitFor(t, ts, fmt.Sprintf("%d deliveries queued", len(rest)), func() bool { return len(srv.commits) == len(rest) })
	return out
}

// TestGroupCommitPostgresEveryAckStored: many clients sending at once on
// keep-alive connections (run it with -race); every delivery acknowledged
// is stored under the id it was acknowledged with, with its body. Then
// deliveries queued behind a commit in progress share a transaction (their
// rows' xmin), and are all acknowledged and stored.
func TestGroupCommitPostgresEveryAckStored(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	loc := testkit.PostgresSchema(t, "capgroup")
	var srv *Server
	ts := startServerAt(t, loc, Options{}, func(s *Server) { srv = s })

	const clients, each = 24, 5
	acked := make(map[int64]string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ev := fmt.Sprintf("evt_%d_%d", c, i)
				if code, id := pgPost(t, ts.addr, pgReq{target: "/hooks/x", event: ev}); code == http.StatusOK {
					mu.Lock()
					acked[id] = ev
					mu.Unlock()
				} else {
					t.Errorf("%s answered %d", ev, code)
				}
			}
		}()
	}
	wg.Wait()
	ctx := context.Background()
	for id, ev := range acked {
		d, err := ts.st.GetDelivery(ctx, id)
		if err != nil || !strings.Contains(string(d.Body), `"id":"`+ev+`"`) {
			t.Errorf("acknowledged %s as %d; stored: %v %v", ev, id, d, err)
		}
	}
	if got, _ := ts.st.ListDeliveries(ctx, store.Filter{}); len(got) != len(acked) || len(acked) != clients*each {
		t.Errorf("stored %d deliveries, acknowledged %d of %d", len(got), len(acked), clients*each)
	}

	db, tx := pgLock(t, loc)
	var rest []pgReq
	for i := range 16 {
		rest = append(rest, pgReq{target: "/hooks/x", event: fmt.Sprintf("queued_%d", i)})
	}
	answers := pgQueueBehindLock(t, ts, srv, db, pgReq{target: "/hooks/x", event: "blocked"}, rest)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, ch := range answers {
		a := <-ch
		if a[0] != http.StatusOK {
			t.Fatalf("delivery %d behind the lock answered %d", i, a[0])
		}
		if i > 0 {
			ids = append(ids, a[1])
		}
	}
	var txs int
	if err := db.QueryRow(`SELECT count(DISTINCT xmin::text) FROM deliveries WHERE id = ANY($1)`, ids).Scan(&txs); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d deliveries queued behind a commit were stored in %d transaction(s)", len(ids), txs)
	if txs >= len(ids) {
		t.Errorf("%d deliveries queued behind a commit took %d transactions: no group commit", len(ids), txs)
	}
}

// TestGroupCommitPostgresFailedCommitAcknowledgesNone: a commit that
// fails for every delivery in it — here a trigger deleting each row,
// created while deliveries wait for the commit — answers 503 to every
// request of the batch, acknowledges none of them, and stores none.
func TestGroupCommitPostgresFailedCommitAcknowledgesNone(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	loc := testkit.PostgresSchema(t, "capgroupfail")
	var srv *Server
	ts := startServerAt(t, loc, Options{}, func(s *Server) { srv = s })
	if code, _ := pgPost(t, ts.addr, pgReq{target: "/hooks/x", event: "before"}); code != http.StatusOK {
		t.Fatalf("before: %d", code)
	}
	db, tx := pgLock(t, loc)
	var rest []pgReq
	for i := range 12 {
		rest = append(rest, pgReq{target: "/hooks/x", event: fmt.Sprintf("doomed_%d", i)})
	}
	answers := pgQueueBehindLock(t, ts, srv, db, pgReq{target: "/hooks/x", event: "doomed_first"}, rest)
	for _, q := range []string{
		`CREATE FUNCTION gone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM deliveries WHERE id = NEW.id; RETURN NULL; END $$`,
		`CREATE TRIGGER gone AFTER INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION gone()`,
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for i, ch := range answers {
		if a := <-ch; a[0] != http.StatusServiceUnavailable || a[1] != 0 {
			t.Errorf("delivery %d of the failed batch answered %d (id %d), want 503", i, a[0], a[1])
		}
	}
	testkit.PostgresExec(t, loc, `DROP TRIGGER gone ON deliveries`)
	got, err := ts.st.ListDeliveries(context.Background(), store.Filter{})
	if err != nil || len(got) != 1 {
		t.Errorf("stored %d deliveries (%v), want the one before the trigger", len(got), err)
	}
	if log := ts.errOut.String(); strings.Count(log, "trigger gone on deliveries that hookreplay did not create") < len(answers) {
		t.Errorf("capture's log does not say why each was refused:\n%s", log)
	}
}

// TestGroupCommitPostgresBadDeliveryAloneRefused: one delivery the store
// refuses (a CHECK constraint on its target) in a batch with others costs
// only itself: the batch is retried a delivery at a time, the refused one
// is answered 503 and the others are acknowledged and stored.
func TestGroupCommitPostgresBadDeliveryAloneRefused(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	loc := testkit.PostgresSchema(t, "capgroupbad")
	var srv *Server
	ts := startServerAt(t, loc, Options{}, func(s *Server) { srv = s })
	testkit.PostgresExec(t, loc, `ALTER TABLE deliveries ADD CONSTRAINT not_bad CHECK (target <> '/bad')`)
	if code, _ := pgPost(t, ts.addr, pgReq{target: "/hooks/x", event: "before"}); code != http.StatusOK {
		t.Fatalf("before: %d", code)
	}
	db, tx := pgLock(t, loc)
	var rest []pgReq
	for i := range 9 {
		target := "/hooks/x"
		if i == 4 {
			target = "/bad"
		}
		rest = append(rest, pgReq{target: target, event: fmt.Sprintf("evt_%d", i)})
	}
	answers := pgQueueBehindLock(t, ts, srv, db, pgReq{target: "/hooks/x", event: "first"}, rest)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	stored := 1 // before
	for i, ch := range answers {
		a := <-ch
		bad := i > 0 && rest[i-1].target == "/bad"
		switch {
		case bad && a[0] != http.StatusServiceUnavailable:
			t.Errorf("the refused delivery answered %d, want 503", a[0])
		case !bad && a[0] != http.StatusOK:
			t.Errorf("delivery %d answered %d: the refused one cost it its acknowledgement", i, a[0])
		case !bad:
			stored++
		}
	}
	got, err := ts.st.ListDeliveries(context.Background(), store.Filter{})
	if err != nil || len(got) != stored || stored != len(answers) {
		t.Errorf("stored %d deliveries (%v), acknowledged %d, want all but the refused one of %d", len(got), err, stored, len(answers)+1)
	}
	if log := ts.errOut.String(); !strings.Contains(log, "not_bad") {
		t.Errorf("capture's log does not say why the delivery was refused:\n%s", log)
	}
}

// TestGroupCommitPostgresBatchBytesBounded: a group commit takes no more
// deliveries once they hold maxBatchBytes, so three deliveries of 3 MiB
// queued at once take two transactions (one would carry 9 MiB).
func TestGroupCommitPostgresBatchBytesBounded(t *testing.T) {
	t.Parallel() // waits on the server, not on CPU
	loc := testkit.PostgresSchema(t, "capgroupbytes")
	var srv *Server
	ts := startServerAt(t, loc, Options{}, func(s *Server) { srv = s })
	if code, _ := pgPost(t, ts.addr, pgReq{target: "/hooks/x", event: "before"}); code != http.StatusOK {
		t.Fatalf("before: %d", code)
	}
	db, tx := pgLock(t, loc)
	var rest []pgReq
	for i := range 3 {
		rest = append(rest, pgReq{target: "/hooks/x", event: fmt.Sprintf("big_%d", i), pad: 3 << 20})
	}
	answers := pgQueueBehindLock(t, ts, srv, db, pgReq{target: "/hooks/x", event: "first"}, rest)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, ch := range answers {
		a := <-ch
		if a[0] != http.StatusOK {
			t.Fatalf("delivery %d answered %d", i, a[0])
		}
		if i > 0 {
			ids = append(ids, a[1])
		}
	}
	var txs int
	if err := db.QueryRow(`SELECT count(DISTINCT xmin::text) FROM deliveries WHERE id = ANY($1)`, ids).Scan(&txs); err != nil {
		t.Fatal(err)
	}
	if txs < 2 {
		t.Errorf("3 deliveries of 3 MiB queued at once took %d transaction(s), want 2 or more (%d bytes at most per commit)", txs, maxBatchBytes)
	}
}
