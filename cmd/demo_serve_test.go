package cmd

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// demoServeRoot is the command tree with `demo serve` attached under `demo`
// (as the lead wires it), writing stdout to a pipe the test reads.
func demoServeRoot(t *testing.T) (*iostreams.IO, *bufio.Reader, func()) {
	t.Helper()
	pr, pw := io.Pipe()
	io := &iostreams.IO{In: strings.NewReader(""), Out: pw, ErrOut: io.Discard}
	return io, bufio.NewReader(pr), func() { pw.Close() }
}

func runDemoServe(t *testing.T, args ...string) (lines *bufio.Reader, stop func() error) {
	t.Helper()
	ios, r, closeOut := demoServeRoot(t)
	root := NewRootCmd(ios)
	demo, _, err := root.Find([]string{"demo"})
	if err != nil {
		t.Fatal(err)
	}
	if sub, _, err := root.Find([]string{"demo", "serve"}); err != nil || sub.Name() != "serve" {
		demo.AddCommand(newDemoServeCmd(newFactory(ios)))
	}
	root.SetArgs(append([]string{"demo", "serve"}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); closeOut() }()
	t.Cleanup(func() { cancel(); <-done })
	return r, func() error {
		cancel()
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(15 * time.Second):
			return errors.New("demo serve did not stop")
		}
	}
}

func TestDemoServe(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "naive.db")
	// --db given before `demo` too: the wallet's own flag, not hookreplay's store.
	r, stop := runDemoServe(t, "naive", "--listen", "127.0.0.1:0", "--db", db, "-q")
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v", err)
	}
	addr, ok := strings.CutPrefix(line, "wallet naive listening on http://")
	if !ok || !strings.Contains(line, "(database sqlite:"+db+")") {
		t.Fatalf("listening line %q", line)
	}
	addr = addr[:strings.Index(addr, "/")]
	body, err := os.ReadFile("../examples/wallet/testdata/invoice_paid.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		resp, err := http.Post("http://"+addr+"/webhooks/stripe", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("delivery %d answered %d", i+1, resp.StatusCode)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// Stopped cleanly and the naive variant credited twice.
	conn, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var bal int64
	if err := conn.QueryRow("SELECT balance FROM wallets").Scan(&bal); err != nil || bal != 10000 {
		t.Fatalf("balance %d, %v; want 10000", bal, err)
	}
	if _, err := os.Stat("hookreplay.db"); err == nil {
		t.Error("demo serve created hookreplay's store in the working directory")
	}
}

func TestDemoServeUsageErrors(t *testing.T) {
	t.Setenv("HR_EMPTY_SECRET", "")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "demo serve takes one variant: naive, racy, fixed"},
		{[]string{"clever"}, `unknown variant "clever"`},
		{[]string{"fixed", "--secret", "a", "--secret-env", "X"}, "either --secret or --secret-env"},
		{[]string{"fixed", "--secret-env", "HR_EMPTY_SECRET"}, "not set or empty"},
		{[]string{"fixed", "--dsn", "mysql://u:pw@h/db"}, "use sqlite:PATH or postgres://"},
		{[]string{"fixed", "--db", "x.db", "--dsn", "sqlite:y.db"}, "either --db or --dsn"},
		{[]string{"fixed", "--listen", "256.0.0.1:1", "--db", filepath.Join(t.TempDir(), "w.db")}, "listen on 256.0.0.1:1"},
		{[]string{"fixed", "--db", "/nonexistent-dir/w.db"}, "create tables"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r, stop := runDemoServe(t, tt.args...)
			err := stop()
			_, _ = r.ReadString('\n')
			code, msg := exitCode(err)
			if code != 2 || !strings.Contains(msg, tt.want) {
				t.Fatalf("exit %d %q, want 2 and %q", code, msg, tt.want)
			}
			if strings.Contains(msg, "pw@") {
				t.Errorf("message leaks a password: %q", msg)
			}
		})
	}
}
