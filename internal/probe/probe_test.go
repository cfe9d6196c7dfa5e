package probe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTextValue(t *testing.T) {
	tests := []struct {
		in    string
		text  string
		num   float64
		isNum bool
	}{
		{"42\n", "42", 42, true},
		{"  -3.5 ", "-3.5", -3.5, true},
		{"5000.00", "5000.00", 5000, true},
		{"1e3", "1e3", 1000, true},
		{"inf", "inf", 0, false},
		{"NaN", "NaN", 0, false},
		{"0x10", "0x10", 0, false},
		{"1_000", "1_000", 0, false},
		{"", "", 0, false},
		{"active", "active", 0, false},
		{"1\n2", "1\n2", 0, false},
	}
	for _, tt := range tests {
		v := TextValue(tt.in)
		if v.Text != tt.text || v.IsNum != tt.isNum || v.Num != tt.num {
			t.Errorf("TextValue(%q) = %+v, want text %q num %v isNum %v", tt.in, v, tt.text, tt.num, tt.isNum)
		}
	}
}

func TestValueEqualDelta(t *testing.T) {
	tests := []struct {
		name          string
		before, after Value
		equal         bool
		delta         float64
		deltaOK       bool
	}{
		{"same number different text", TextValue("5000"), TextValue("5000.0"), true, 0, true},
		{"numbers differ", TextValue("5000"), TextValue("10000"), false, 5000, true},
		{"no rows then number", Value{Text: NoRows}, TextValue("5000"), false, 5000, true},
		{"number then no rows", TextValue("700"), Value{Text: NoRows}, false, -700, true},
		{"no rows both", Value{Text: NoRows}, Value{Text: NoRows}, true, 0, false},
		{"text same", TextValue("active"), TextValue("active"), true, 0, false},
		{"text differs", TextValue("active"), TextValue("canceled"), false, 0, false},
		{"text vs number", TextValue("12a"), TextValue("12"), false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.before.Equal(tt.after); got != tt.equal {
				t.Errorf("Equal = %v, want %v", got, tt.equal)
			}
			d, ok := Delta(tt.before, tt.after)
			if ok != tt.deltaOK || d != tt.delta {
				t.Errorf("Delta = %v, %v; want %v, %v", d, ok, tt.delta, tt.deltaOK)
			}
			if d2, ok2 := tt.before.Delta(tt.after); d2 != d || ok2 != ok {
				t.Errorf("method Delta = %v, %v; function gave %v, %v", d2, ok2, d, ok)
			}
		})
	}
}

func TestCmdProbe(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "count")
	if err := os.WriteFile(counter, []byte("7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cmd     string
		want    Value
		wantErr []string
	}{
		{"number", "cat " + counter, Value{Text: "7", Num: 7, IsNum: true}, nil},
		{"trimmed text", "printf '  hello world \\n\\n'", Value{Text: "hello world"}, nil},
		{"multi line text", "printf 'a\\nb\\n'", Value{Text: "a\nb"}, nil},
		{"empty output", "true", Value{Text: ""}, nil},
		{"non-zero exit names probe and stderr", "echo partial; echo 'first problem' >&2; echo second >&2; exit 3",
			Value{}, []string{"probe cmd: echo partial", "exit status 3", "first problem"}},
		{"missing command", "hookreplay-no-such-command-xyz", Value{}, []string{"exit status 127", "not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewCmd(tt.cmd)
			v, err := p.Read(context.Background())
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Read = %+v, want an error", v)
				}
				var pe *Error
				if !errors.As(err, &pe) || pe.Probe != p.Name() {
					t.Errorf("error %v is not a probe error naming %q", err, p.Name())
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if strings.HasSuffix(err.Error(), "second") {
					t.Errorf("error %q should carry only stderr's first line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v != tt.want {
				t.Errorf("Read = %+v, want %+v", v, tt.want)
			}
		})
	}
}

func TestCmdProbeTimeout(t *testing.T) {
	p := NewCmd("sleep 5")
	p.Timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := p.Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("timeout took %s", el)
	}
}

func TestHTTPProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "want GET", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/balance":
			fmt.Fprintln(w, "5000")
		case "/status":
			fmt.Fprint(w, `{"status":"active"}`)
		case "/broken":
			http.Error(w, "database is locked\nmore detail", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// A port that refuses connections: listen, note the address, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/x"
	ln.Close()

	tests := []struct {
		name    string
		url     string
		want    Value
		wantErr []string
	}{
		{"numeric body", srv.URL + "/balance", Value{Text: "5000", Num: 5000, IsNum: true}, nil},
		{"json body", srv.URL + "/status", Value{Text: `{"status":"active"}`}, nil},
		{"500 is an error", srv.URL + "/broken", Value{}, []string{"probe http: " + srv.URL + "/broken", "500", "database is locked"}},
		{"404 is an error", srv.URL + "/nope", Value{}, []string{"404"}},
		{"connection refused", refused, Value{}, []string{"probe http: " + refused, "refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewHTTP(tt.url)
			defer p.Close()
			v, err := p.Read(context.Background())
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Read = %+v, want an error", v)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v != tt.want {
				t.Errorf("Read = %+v, want %+v", v, tt.want)
			}
		})
	}
	// Refused is worded once, in hookreplay's words, not as Go's client error.
	p := NewHTTP(refused)
	defer p.Close()
	_, err = p.Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "nothing is listening there (connect: connection refused)") ||
		strings.Contains(err.Error(), `Get "`) || strings.Contains(err.Error(), "dial tcp") {
		t.Errorf("refused GET worded %q", err)
	}
}

// sqliteDB creates a WAL SQLite file loaded with testdata/wallets.sql, as a
// handler would, and returns its path and an open writer connection.
func sqliteDB(t testing.TB) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "handler.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	stmts, err := os.ReadFile("testdata/wallets.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(stmts)); err != nil {
		t.Fatal(err)
	}
	return path, db
}

// sqlCases are run against SQLite and Postgres loaded with testdata/wallets.sql.
var sqlCases = []struct {
	name    string
	query   string
	want    Value
	wantErr string
}{
	{"single numeric cell", "SELECT balance FROM wallets WHERE customer = 'cus_a'", Value{Text: "5000", Num: 5000, IsNum: true}, ""},
	{"aggregate", "SELECT COALESCE(SUM(balance), 0) FROM wallets", Value{Text: "5700", Num: 5700, IsNum: true}, ""},
	{"single text cell", "SELECT customer FROM wallets WHERE balance = 700", Value{Text: "cus_b"}, ""},
	{"no rows", "SELECT balance FROM wallets WHERE customer = 'nobody'", Value{Text: NoRows}, ""},
	{"null cell", "SELECT NULL", Value{Text: "NULL"}, ""},
	{"rows sorted whatever the order", "SELECT customer, balance FROM wallets ORDER BY balance DESC",
		Value{Text: "customer=cus_a, balance=5000\ncustomer=cus_b, balance=700"}, ""},
	{"rows sorted the other way too", "SELECT customer, balance FROM wallets ORDER BY balance ASC",
		Value{Text: "customer=cus_a, balance=5000\ncustomer=cus_b, balance=700"}, ""},
	{"bad sql is an error", "SELECT balance FROM no_such_table", Value{}, "no_such_table"},
	{"writes are refused", "UPDATE wallets SET balance = 0", Value{}, "read"},
}

func TestSQLProbeSQLite(t *testing.T) {
	path, _ := sqliteDB(t)
	for _, tt := range sqlCases {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewSQL("sqlite:"+path, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			checkSQLRead(t, p, tt.want, tt.wantErr)
		})
	}
}

func TestSQLProbePostgres(t *testing.T) {
	dsn := pgSchema(t, "testdata/wallets.sql")
	for _, tt := range sqlCases {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewSQL(dsn, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			checkSQLRead(t, p, tt.want, tt.wantErr)
		})
	}
}

func checkSQLRead(t *testing.T, p *SQLProbe, want Value, wantErr string) {
	t.Helper()
	v, err := p.Read(context.Background())
	if wantErr != "" {
		if err == nil {
			t.Fatalf("Read = %+v, want an error", v)
		}
		if !strings.Contains(strings.ToLower(err.Error()), wantErr) || !strings.HasPrefix(err.Error(), "probe sql: ") {
			t.Errorf("error %q: want it to name the probe and contain %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if v != want {
		t.Errorf("Read = %+v, want %+v", v, want)
	}
}

func TestSQLProbeSQLiteSeesWritesAndRecreation(t *testing.T) {
	path, db := sqliteDB(t)
	p, err := NewSQL("sqlite:"+path, "SELECT COALESCE(SUM(balance), 0) FROM wallets")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	read := func() float64 {
		t.Helper()
		v, err := p.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v.Num
	}
	if got := read(); got != 5700 {
		t.Fatalf("start = %v", got)
	}
	// The handler writes while the probe is polled: each reading is fresh and
	// no write waits on the probe.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if _, err := p.Read(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for i := 0; i < 50; i++ {
		start := time.Now()
		if _, err := db.Exec("UPDATE wallets SET balance = balance + 1 WHERE customer = 'cus_a'"); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("write %d waited %s on the probe", i, el)
		}
	}
	close(stop)
	wg.Wait()
	if got := read(); got != 5750 {
		t.Fatalf("after 50 writes = %v, want 5750", got)
	}
	// A reset that deletes and recreates the file is seen by the next reading.
	db.Close()
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	db2, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, err := db2.Exec("CREATE TABLE wallets (customer TEXT, balance INTEGER); INSERT INTO wallets VALUES ('x', 1)"); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != 1 {
		t.Fatalf("after recreate = %v, want 1", got)
	}
}

func TestSQLProbeSQLiteOddPathAndName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my data #1 ?50%")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "wallet.db")
	db, err := sql.Open("sqlite", "file:"+strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE wallets (balance INTEGER); INSERT INTO wallets VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	p, err := NewSQL("sqlite:"+path, "SELECT balance\n  FROM wallets\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "sql: SELECT balance FROM wallets" {
		t.Errorf("name %q, want the query on one line", p.Name())
	}
	v, err := p.Read(context.Background())
	if err != nil || v.Num != 42 {
		t.Fatalf("read %+v, %v", v, err)
	}
}

func TestSQLProbeSQLiteMissingFileNotCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	p, err := NewSQL("sqlite:"+path, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "typo.db") {
		t.Fatalf("err = %v, want an error naming the file", err)
	}
	if _, serr := os.Stat(path); serr == nil {
		t.Error("the probe created the missing database file")
	}
}

func TestNewSQLBadDSN(t *testing.T) {
	tests := []struct {
		dsn, query, want string
	}{
		{"mysql://u:hunter2@h/db", "SELECT 1", "unsupported dsn"},
		{"sqlite:", "SELECT 1", "no file path"},
		{"sqlite:x.db", "  ", "empty query"},
	}
	for _, tt := range tests {
		_, err := NewSQL(tt.dsn, tt.query)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewSQL(%q, %q) = %v, want %q", tt.dsn, tt.query, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}

func TestSQLProbePostgresBadPasswordNotLeaked(t *testing.T) {
	// Nothing listens on this port: the connection error must still not carry the password.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err := NewSQL("postgres://u:s3cr3tpw@"+addr+"/db?connect_timeout=2", "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Read(context.Background())
	if err == nil {
		t.Fatal("want a connection error")
	}
	if strings.Contains(err.Error(), "s3cr3tpw") {
		t.Errorf("error leaks the password: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "probe sql: SELECT 1") {
		t.Errorf("error %q does not name the probe", err)
	}
	// pgx lists each address it tried on a line of its own.
	want := "cannot reach " + addr + " (connect: connection refused)"
	if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q: want one line with %q", err, want)
	}
}

func TestSink(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := StartSink(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := s.Probe()
	if !strings.HasPrefix(p.Name(), "sink: 127.0.0.1:") {
		t.Errorf("name %q", p.Name())
	}
	v, err := p.Read(ctx)
	if err != nil || !v.IsNum || v.Num != 0 {
		t.Fatalf("empty sink reads %+v, %v", v, err)
	}
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		if _, err := fmt.Fprint(&b, readAll(t, resp)); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || b.String() != `{"ok":true}` {
			t.Fatalf("sink answered %d %q", resp.StatusCode, b.String())
		}
	}
	post("/v3/mail/send?x=1", `{"to":"a@example.com"}`)
	n := s.Len()
	// Concurrent calls are all recorded.
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post("/charges", fmt.Sprintf(`{"i":%d}`, i))
		}()
	}
	wg.Wait()
	v, err = p.Read(ctx)
	if err != nil || v.Num != 21 {
		t.Fatalf("after 21 calls the probe reads %+v, %v", v, err)
	}
	calls := s.Calls()
	if len(calls) != 21 || calls[0].Method != "POST" || calls[0].Path != "/v3/mail/send?x=1" || string(calls[0].Body) != `{"to":"a@example.com"}` {
		t.Fatalf("first call %+v (of %d)", calls[0], len(calls))
	}
	if calls[0].At.IsZero() {
		t.Error("call time not recorded")
	}
	since := s.CallsSince(n)
	if len(since) != 20 || since[0].Path != "/charges" {
		t.Fatalf("CallsSince(%d) = %d calls", n, len(since))
	}
	if got := s.CallsSince(100); got != nil {
		t.Errorf("CallsSince past the end = %v", got)
	}
	// Closing the sink (here by cancelling its context) stops it; calls stay.
	cancel()
	deadline := time.Now().Add(3 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("sink still accepting after its context was cancelled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if len(s.Calls()) != 21 {
		t.Error("calls lost on close")
	}
}

func TestStartSinkAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = StartSink(context.Background(), ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "start sink on "+ln.Addr().String()) {
		t.Fatalf("err = %v", err)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// counterServer serves a number over HTTP that a background worker bumps
// `steps` times, every `every`, after `delay` — an asynchronous handler's effect.
func counterServer(t *testing.T, delay, every time.Duration, steps int) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, n.Load())
	}))
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-time.After(delay):
		case <-stop:
			return
		}
		for i := 0; i < steps; i++ {
			n.Add(1)
			select {
			case <-time.After(every):
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done; srv.Close() })
	return srv.URL
}

func TestSettle(t *testing.T) {
	ctx := context.Background()
	t.Run("waits for an asynchronous effect", func(t *testing.T) {
		url := counterServer(t, 60*time.Millisecond, 30*time.Millisecond, 5)
		still := NewCmd("echo same")
		start := time.Now()
		vals, err := Settle(ctx, []Probe{NewHTTP(url), still}, 200*time.Millisecond, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if vals[0].Num != 5 || vals[1].Text != "same" {
			t.Fatalf("settled on %+v", vals)
		}
		// 60 ms + 4 × 30 ms of changes, then 200 ms of stillness.
		if el := time.Since(start); el < 380*time.Millisecond || el > 4*time.Second {
			t.Errorf("settled after %s", el)
		}
	})
	t.Run("still probes settle after one settle period", func(t *testing.T) {
		start := time.Now()
		vals, err := Settle(ctx, []Probe{NewCmd("echo 3")}, 100*time.Millisecond, time.Second)
		if err != nil || vals[0].Num != 3 {
			t.Fatalf("%+v, %v", vals, err)
		}
		if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
			t.Errorf("took %s", el)
		}
	})
	t.Run("never settles", func(t *testing.T) {
		url := counterServer(t, 0, 20*time.Millisecond, 1000)
		start := time.Now()
		vals, err := Settle(ctx, []Probe{NewHTTP(url), NewCmd("echo 1")}, 150*time.Millisecond, 500*time.Millisecond)
		if !errors.Is(err, ErrNotSettled) {
			t.Fatalf("err = %v, want ErrNotSettled", err)
		}
		var ns *NotSettledError
		if !errors.As(err, &ns) || len(ns.Probes) != 1 || ns.Probes[0] != "http: "+url {
			t.Errorf("not-settled error %v should name only the moving probe", err)
		}
		if len(vals) != 2 || vals[0].Num < 5 {
			t.Errorf("last values %+v", vals)
		}
		if el := time.Since(start); el < 500*time.Millisecond || el > 3*time.Second {
			t.Errorf("gave up after %s, want about 500ms", el)
		}
	})
	t.Run("a probe error stops it with the probe's name", func(t *testing.T) {
		bad := NewCmd("echo nope >&2; exit 1")
		_, err := Settle(ctx, []Probe{NewCmd("echo 1"), bad}, 0, 0)
		var pe *Error
		if !errors.As(err, &pe) || pe.Probe != bad.Name() || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a probe that breaks midway stops it", func(t *testing.T) {
		flag := filepath.Join(t.TempDir(), "ok")
		os.WriteFile(flag, []byte("1"), 0o644)
		p := NewCmd("cat " + flag)
		go func() { time.Sleep(80 * time.Millisecond); os.Remove(flag) }()
		_, err := Settle(ctx, []Probe{p}, 300*time.Millisecond, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), "probe cmd: cat") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		start := time.Now()
		if _, err := Settle(ctx, []Probe{NewCmd("echo 1")}, 0, 0); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el < DefaultSettle {
			t.Errorf("default settle took %s, want ≥ %s", el, DefaultSettle)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		url := counterServer(t, 0, 10*time.Millisecond, 1000)
		_, err := Settle(cctx, []Probe{NewHTTP(url)}, time.Second, 5*time.Second)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
	})
}

// A call that repeats an Idempotency-Key (or X-Idempotency-Key) already seen
// for the same method and path is recorded but not counted: the real API
// answers it with the first call's result and does nothing again. A key
// seen on another path, and calls without a key, count.
func TestSinkIdempotencyKeyRepeatsDoNotCount(t *testing.T) {
	ctx := context.Background()
	s, err := StartSink(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := func(path, header, key string) {
		t.Helper()
		req, _ := http.NewRequest("POST", s.URL()+path, strings.NewReader(`{"amount":4410}`))
		if key != "" {
			req.Header.Set(header, key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	call("/v1/transfers", "Idempotency-Key", "transfer-evt_1")
	call("/v1/transfers?expand=x", "Idempotency-Key", "transfer-evt_1") // the same call: query aside
	call("/v1/transfers", "Idempotency-Key", "transfer-evt_2")
	call("/v1/payouts", "Idempotency-Key", "transfer-evt_1") // another path
	call("/v1/refunds", "X-Idempotency-Key", "r-1")
	call("/v1/refunds", "X-Idempotency-Key", "r-1")
	call("/v1/transfers", "", "")
	call("/v1/transfers", "", "")
	calls := s.Calls()
	var repeats []int
	for i, c := range calls {
		if c.Repeat {
			repeats = append(repeats, i)
		}
	}
	if len(calls) != 8 || fmt.Sprint(repeats) != "[1 5]" || calls[0].IdempotencyKey != "transfer-evt_1" || calls[4].IdempotencyKey != "r-1" {
		t.Fatalf("%d calls, repeats at %v: %+v", len(calls), repeats, calls)
	}
	v, err := s.Probe().Read(ctx)
	if err != nil || v.Num != 6 {
		t.Fatalf("the probe reads %+v, %v; want 6 (8 calls, 2 repeating a key)", v, err)
	}
}

// A probe's query that selects a whole table (here 3,000,000 rows) was
// read whole and kept, rendered, at every reading: 415 MiB allocated. A
// reading now stops at 100,000 rows or 4 MiB of them (12 MiB allocated),
// in one line saying what a probe reads.
func TestSQLProbeResultIsBounded(t *testing.T) {
	path, _ := sqliteDB(t)
	for _, q := range []string{
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 3000000) SELECT x FROM c",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 10) SELECT x, zeroblob(1000000) FROM c",
	} {
		p, err := NewSQL("sqlite:"+path, q)
		if err != nil {
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		_, err = ReadAll(context.Background(), []Probe{p})
		runtime.ReadMemStats(&m1)
		p.Close()
		if err == nil || !strings.Contains(err.Error(), "the query returned more than 100000 rows or 4194304 bytes; a probe reads a count or a few rows") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("err = %v", err)
		}
		if a := m1.TotalAlloc - m0.TotalAlloc; a > 64<<20 {
			t.Errorf("%d MiB allocated", a>>20)
		}
	}
}
