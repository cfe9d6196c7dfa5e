package store

import (
	"context"
	"strings"
	"testing"
)

// A one-letter password must not turn every "o" of a message into xxxxx,
// and must still never be printed as part of the URL or a password=
// parameter; a normal password is replaced wherever it occurs.
func TestPostgresRedactShortAndNormalPasswords(t *testing.T) {
	short := postgresDialect{secrets: []string{"o"}}
	for _, c := range []struct{ in, want string }{
		{"failed to connect to host: connection refused", "failed to connect to host: connection refused"},
		{"dial postgres://bob:o@db.example/app failed", "dial postgres://bob:xxxxx@db.example/app failed"},
		{"conninfo host=db password=o user=bob", "conninfo host=db password=xxxxx user=bob"},
		{"password=o", "password=xxxxx"},
		{"password=onion stays", "password=onion stays"},
	} {
		if got := short.redact(c.in); got != c.want {
			t.Errorf("short: redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	normal := postgresDialect{secrets: []string{"hunter22", "hunter2"}}
	for _, c := range []struct{ in, want string }{
		{"auth failed for hunter22 at postgres://bob:hunter22@db/app", "auth failed for xxxxx at postgres://bob:xxxxx@db/app"},
		{"no password here", "no password here"},
	} {
		if got := normal.redact(c.in); got != c.want {
			t.Errorf("normal: redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Through Open: a refused connection with a one-letter password keeps its
// words readable and never shows the password.
func TestOpenPostgresShortPasswordError(t *testing.T) {
	_, err := Open(context.Background(), "postgres://bob:o@127.0.0.1:1/app?sslmode=disable&connect_timeout=2")
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "xxxxx") && !strings.Contains(msg, ":xxxxx@") || strings.Contains(msg, "bob:o@") {
		t.Fatalf("error mangled or leaked the password: %s", msg)
	}
	if !strings.Contains(msg, "127.0.0.1") {
		t.Fatalf("error lost its words: %s", msg)
	}
	t.Log(msg)
}
