package store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"time"
)

// The answer to a Postgres COMMIT can be lost: the connection drops after
// the server committed and before its answer arrived (a network cut, the
// server stopping: a fast shutdown or pg_terminate_backend during the
// commit's flush commits first, then ends the connection with FATAL).
// The transaction is then in the store, and the Commit failed. Capture
// answers the deliveries of a failed group commit by committing each one
// again on its own, so a group whose COMMIT answer was lost would be
// stored twice. committedAnyway asks the server, on a new connection,
// whether the transaction committed.

// pgLostCheckTimeout bounds that question: capture's senders are waiting.
const pgLostCheckTimeout = 10 * time.Second

// pgLostPoll is how often the question looks again whether the lost
// connection's backend is done with its transaction.
const pgLostPoll = 20 * time.Millisecond

// committedAnyway reports whether ds, whose pipelined commit failed on a
// connection now lost (an error the server sent on a connection that
// stays open aborted the transaction), are in the store all the same, and
// then sets ids.
//
// The lost connection's backend may still be working on the commit (a
// flush that stalls, COMMIT bytes still on their way): its rows show only
// once it is done, so it is waited for first, while pg_stat_activity
// shows it inside a transaction, within pgLostCheckTimeout (a backend the
// role cannot see, or behind a pooler, is not waited for). Then the rows
// are looked up by their arrival time (received_at, indexed, the
// nanosecond capture gave each) and the digest of their raw request; a
// transaction is all or nothing, so they are found all or none, and none
// (or the bound reached) is the failure it was.
func (w *Writer) committedAnyway(ctx context.Context, ds []*Delivery, recvs []time.Time, ids []int64) bool {
	if len(ds) == 0 || !w.broken {
		return false
	}
	// Resolved even when the commit's own context ended: the question is
	// what the store holds.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgLostCheckTimeout)
	defer cancel()
	pid := w.pid
	if w.reopen(ctx) != nil {
		return false // the next Commit reconnects; this one failed
	}
	if !w.backendDone(ctx, pid) {
		return false
	}
	type arrival struct {
		at  int64
		sum string
	}
	at := make([]int64, len(recvs))
	want := make(map[arrival][]int, len(recvs))
	for i, r := range recvs {
		at[i] = r.UnixNano()
		k := arrival{r.UnixNano(), rawDigest(ds[i])}
		want[k] = append(want[k], i)
	}
	rows, err := w.conn.QueryContext(ctx, `SELECT id, received_at, md5(raw_request) FROM deliveries WHERE received_at = ANY($1) ORDER BY id`, at)
	if err != nil {
		w.lost()
		return false
	}
	defer rows.Close()
	found := make([]int64, len(ds))
	n := 0
	for rows.Next() {
		var id int64
		var k arrival
		if rows.Scan(&id, &k.at, &k.sum) != nil {
			return false
		}
		if is := want[k]; len(is) > 0 {
			found[is[0]] = id
			want[k] = is[1:]
			n++
		}
	}
	if rows.Err() != nil || n != len(ds) {
		return false
	}
	copy(ids, found)
	return true
}

// backendDone waits until backend pid is no longer inside a transaction
// (gone, idle, or not shown to this role), and reports whether it is
// within ctx.
func (w *Writer) backendDone(ctx context.Context, pid uint32) bool {
	for {
		var busy bool
		err := w.conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity WHERE pid = $1
			AND state IN ('active', 'idle in transaction', 'fastpath function call'))`, int64(pid)).Scan(&busy)
		if err != nil {
			w.lost()
			return false
		}
		if !busy {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pgLostPoll):
		}
	}
}

// rawDigest is Postgres's md5() of d's stored raw request, in hex.
func rawDigest(d *Delivery) string {
	sum := md5.Sum(nonNilBytes(d.Raw))
	return hex.EncodeToString(sum[:])
}
