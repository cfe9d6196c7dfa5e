package store

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// FuzzPostgresAnswer answers the first statement of an open with what a
// fuzzer writes (after a real startup): no panic may escape Open, and an
// open that fails says so in one line. Seeds, in
// testdata/fuzz/FuzzPostgresAnswer, run in every go test; one is the
// fuzzer's find, a bare ReadyForQuery, which made pgx panic.
func FuzzPostgresAnswer(f *testing.F) {
	rd, _ := (&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("version"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1},
		{Name: []byte("f"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}}).Encode(nil)
	dr, _ := (&pgproto3.DataRow{Values: [][]byte{[]byte("5"), nil}}).Encode(nil)
	cc, _ := (&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}).Encode(nil)
	z, _ := (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(nil)
	f.Add(append(append(append(append([]byte{}, rd...), dr...), cc...), z...))
	e, _ := (&pgproto3.ErrorResponse{Severity: "ERROR", Code: "42P01", Message: "relation does not exist"}).Encode(nil)
	f.Add(append(append([]byte{}, e...), z...))
	defer func(d time.Duration) { pgAnswerTimeout = d }(pgAnswerTimeout)
	pgAnswerTimeout = 200 * time.Millisecond
	var answer []byte
	url := testkit.FakePostgres(f, func(c net.Conn, _ pgproto3.FrontendMessage) {
		c.Write(answer)
		c.SetReadDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, c)
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		answer = b
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		s, err := Open(ctx, url)
		if err == nil {
			s.Close()
			return
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("a two-line error: %q", err)
		}
	})
}

// The fuzzer's find: a server answering the open's first statement with a
// bare ReadyForQuery made pgx hand database/sql rows without a result, and
// list died with a nil-pointer panic inside pgx. The open now fails in one
// line naming the server.
func TestPostgresBareReadyForQuery(t *testing.T) {
	z, _ := (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(nil)
	url := testkit.FakePostgres(t, func(c net.Conn, _ pgproto3.FrontendMessage) {
		c.Write(z)
		io.Copy(io.Discard, c)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, url)
	if err == nil || !strings.Contains(err.Error(), "the Postgres server at 127.0.0.1:") ||
		!strings.Contains(err.Error(), "answered in a way the Postgres driver cannot read (panic: runtime error: invalid memory address or nil pointer dereference (in github.com/jackc/pgx/v5/") {
		t.Fatalf("err = %v", err)
	}
}
