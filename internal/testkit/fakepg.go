package testkit

import (
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// FakePostgres serves just enough of the Postgres protocol on 127.0.0.1:0
// for a client to connect (no TLS, trust authentication), then hands each
// connection to answer with the first message the client sent after the
// handshake (a query, or a Parse): answer writes whatever it wants on c,
// raw (a hostile length, a message that never ends), and returning closes
// the connection. It returns the server's postgres:// URL. Tests use it
// for what a real server never sends.
func FakePostgres(t testing.TB, answer func(c net.Conn, first pgproto3.FrontendMessage)) string {
	t.Helper()
	addr := fakeServer(t, func(c net.Conn) {
		b := pgproto3.NewBackend(c, c)
		m, err := b.ReceiveStartupMessage()
		if _, ok := m.(*pgproto3.SSLRequest); ok && err == nil {
			c.Write([]byte("N"))
			m, err = b.ReceiveStartupMessage()
		}
		if _, ok := m.(*pgproto3.StartupMessage); !ok || err != nil {
			return
		}
		b.Send(&pgproto3.AuthenticationOk{})
		b.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "17.0"})
		b.Send(&pgproto3.ParameterStatus{Name: "client_encoding", Value: "UTF8"})
		b.Send(&pgproto3.ParameterStatus{Name: "standard_conforming_strings", Value: "on"})
		b.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 2}})
		b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		if b.Flush() != nil {
			return
		}
		first, err := b.Receive()
		if err != nil {
			return
		}
		answer(c, first)
	})
	return "postgres://hookreplay@" + addr + "/hookreplay?sslmode=disable"
}
