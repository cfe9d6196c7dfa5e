package e2e

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

// A Postgres server that answers the first statement of list or capture
// with a 64 MiB notice, or with notices forever: pgx read the one whole (a
// 256 MiB notice took list to 811 MB resident) and the other forever, and
// the command never ended. It now stops at the first message past the
// bounds docs/reliability.md gives: one line naming the server, exit 2, at
// once.
func TestListAgainstAHostilePostgres(t *testing.T) {
	t.Parallel() // waits on the binary, not on CPU: see TestMain
	for name, tc := range map[string]struct {
		answer func(c net.Conn)
		want   string
	}{
		"huge notice": {func(c net.Conn) {
			b, _ := (&pgproto3.NoticeResponse{Severity: "NOTICE", Code: "00000", Message: strings.Repeat("x", 64<<20)}).Encode(nil)
			c.Write(b)
		}, "sent a notice of 67108882 bytes"},
		"notices forever": {func(c net.Conn) {
			b, _ := (&pgproto3.NoticeResponse{Severity: "NOTICE", Code: "00000", Message: "hello"}).Encode(nil)
			for {
				if _, err := c.Write(b); err != nil {
					return
				}
			}
		}, "sent more than 1000 notices"},
		// FuzzPostgresAnswer's find: pgx panicked (a nil pointer) on it.
		"bare ReadyForQuery": {func(c net.Conn) {
			b, _ := (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(nil)
			c.Write(b)
		}, "answered in a way the Postgres driver cannot read (panic: runtime error: invalid memory address or nil pointer dereference"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := testkit.FakePostgres(t, func(c net.Conn, _ pgproto3.FrontendMessage) {
				tc.answer(c)
				io.Copy(io.Discard, c) // then silent, until the test ends
			})
			for _, args := range [][]string{{"list"}, {"capture", "--listen", "127.0.0.1:0"}} {
				start := time.Now()
				r := runBin(t, "", nil, append(args, "--db", url)...)
				lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
				if r.Code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "hookreplay: open store postgres://hookreplay@127.0.0.1:") ||
					!strings.Contains(lines[0], "the Postgres server at 127.0.0.1:") || !strings.Contains(lines[0], tc.want) {
					t.Fatalf("%s: want exit 2 and one line naming the server, got %d\n%s", args[0], r.Code, r.Stderr)
				}
				if took := time.Since(start); took > 30*time.Second {
					t.Fatalf("%s took %s", args[0], took)
				}
			}
		})
	}
}
