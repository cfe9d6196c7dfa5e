package store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The answer to a Postgres COMMIT can be lost: the connection drops after
// the server committed and before its answer arrived. The transaction is
// then in the store, and the Commit failed. Capture answers the deliveries
// of a failed group commit by committing each one again on its own, so a
// group whose COMMIT answer was lost would be stored twice. committedAnyway
// asks the server, on a new connection, whether the transaction committed.

// pgLostCheckTimeout bounds that question: capture's senders are waiting.
const pgLostCheckTimeout = 10 * time.Second

// committedAnyway reports whether ds, whose pipelined commit failed with
// err, are in the store all the same, and then sets ids. Only a commit
// whose connection was lost can have committed unseen: an error the server
// sent (a refused row, the trust check) aborted the transaction. The rows
// are found by their arrival time (received_at, indexed, the nanosecond
// capture gave each) and the digest of their raw request; a transaction is
// all or nothing, so they are found all or none.
func (w *Writer) committedAnyway(ctx context.Context, err error, ds []*Delivery, recvs []time.Time, ids []int64) bool {
	var pgErr *pgconn.PgError
	if len(ds) == 0 || !w.broken || errors.As(err, &pgErr) || ctx.Err() != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, pgLostCheckTimeout)
	defer cancel()
	if w.reopen(ctx) != nil {
		return false // the next Commit reconnects; this one failed
	}
	at := make([]int64, len(recvs))
	want := make(map[int64]int, len(recvs))
	for i, r := range recvs {
		at[i] = r.UnixNano()
		want[r.UnixNano()] = i
	}
	rows, qerr := w.conn.QueryContext(ctx, `SELECT id, received_at, md5(raw_request) FROM deliveries WHERE received_at = ANY($1)`, at)
	if qerr != nil {
		w.lost()
		return false
	}
	defer rows.Close()
	found := make([]int64, len(ds))
	n := 0
	for rows.Next() {
		var id, recv int64
		var sum string
		if rows.Scan(&id, &recv, &sum) != nil {
			return false
		}
		i, ok := want[recv]
		if !ok || found[i] != 0 || sum != rawDigest(ds[i]) {
			continue // another delivery that arrived in the same nanosecond
		}
		found[i] = id
		n++
	}
	if rows.Err() != nil || n != len(ds) {
		return false
	}
	copy(ids, found)
	return true
}

// rawDigest is Postgres's md5() of d's stored raw request, in hex.
func rawDigest(d *Delivery) string {
	sum := md5.Sum(nonNilBytes(d.Raw))
	return hex.EncodeToString(sum[:])
}
