package wallet

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookreplay/hookreplay/internal/testkit"
)

const testSecret = "whsec_test_wallet_secret"

// TestMain doubles as a wallet server for the crash tests: with
// WALLET_TEST_SERVE set the test binary serves that variant (see serveChild)
// instead of running tests, so a test can SIGKILL it mid-delivery.
func TestMain(m *testing.M) {
	if v := os.Getenv("WALLET_TEST_SERVE"); v != "" {
		os.Exit(serveChild(v))
	}
	os.Exit(m.Run())
}

func serveChild(variant string) int {
	delay, _ := time.ParseDuration(os.Getenv("WALLET_TEST_DELAY"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := signalContext()
	defer cancel()
	opts := Options{Variant: variant, DSN: os.Getenv("WALLET_TEST_DSN"), Delay: delay, Log: os.Stderr,
		OnListen: func(addr string) { fmt.Printf("listening on %s\n", addr) }}
	if err := ServeListener(ctx, opts, ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// backend is a database the wallet runs on.
type backend struct {
	name string
	dsn  func(t *testing.T) string // a fresh, empty database
}

func backends() []backend {
	return []backend{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "wallet.db") }},
		{"postgres", func(t *testing.T) string { return testkit.PostgresSchema(t, "wallet_test") }},
	}
}

// testWallet is a variant served over real HTTP on 127.0.0.1.
type testWallet struct {
	t      *testing.T
	url    string
	dsn    string
	secret string
	stop   func()
}

// startWallet serves opts (DSN filled from be) until the test ends.
func startWallet(t *testing.T, be backend, opts Options) *testWallet {
	t.Helper()
	if opts.DSN == "" {
		opts.DSN = be.dsn(t)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeListener(ctx, opts, ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	w := &testWallet{t: t, url: "http://" + ln.Addr().String() + "/webhooks/stripe", dsn: opts.DSN, secret: opts.Secret, stop: stop}
	// Serving errors (a bad DSN) show up at once: wait until it answers.
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + ln.Addr().String() + "/balance?customer=x")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("wallet stopped: %v", err)
		default:
		}
		if i > 200 {
			t.Fatalf("wallet not answering: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return w
}

// fixture is the fixture file with its event id replaced by id.
func fixture(t *testing.T, fixture, id string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = id
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// signed returns a Stripe-Signature header for body at ts, made by
// stripe-go, an implementation independent of the wallet's.
func signed(body []byte, secret string, ts time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: ts}).Header
}

// send posts body with the given Stripe-Signature header ("" for none).
func send(t *testing.T, url string, body []byte, sig string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if sig != "" {
		req.Header.Set("Stripe-Signature", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("deliver: %v", err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// deliver sends body as Stripe would: signed now when the wallet has a secret.
func (w *testWallet) deliver(body []byte) (int, string) {
	w.t.Helper()
	sig := ""
	if w.secret != "" {
		sig = signed(body, w.secret, time.Now())
	}
	return send(w.t, w.url, body, sig)
}

// burst delivers body n times at once: every sender waits on one gate, on
// its own connection, and they are released together.
func (w *testWallet) burst(body []byte, n int) []int {
	w.t.Helper()
	statuses := make([]int, n)
	gate := make(chan struct{})
	var ready, done sync.WaitGroup
	for i := 0; i < n; i++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			sig := ""
			if w.secret != "" {
				sig = signed(body, w.secret, time.Now())
			}
			req, _ := http.NewRequest(http.MethodPost, w.url, strings.NewReader(string(body)))
			if sig != "" {
				req.Header.Set("Stripe-Signature", sig)
			}
			ready.Done()
			<-gate
			resp, err := client.Do(req)
			if err != nil {
				w.t.Errorf("burst copy %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	ready.Wait()
	close(gate)
	done.Wait()
	return statuses
}

// query reads one value straight from the wallet's database.
func (w *testWallet) query(q string, args ...any) string {
	w.t.Helper()
	return queryDSN(w.t, w.dsn, q, args...)
}

func queryDSN(t *testing.T, dsn, q string, args ...any) string {
	t.Helper()
	var conn *sql.DB
	var err error
	if strings.HasPrefix(dsn, "sqlite:") {
		conn, err = sql.Open("sqlite", "file:"+strings.TrimPrefix(dsn, "sqlite:")+"?_pragma=busy_timeout(5000)")
	} else {
		conn, err = sql.Open("pgx", dsn)
		q = (&db{postgres: true}).q(q)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var s sql.NullString
	if err := conn.QueryRow(q, args...).Scan(&s); err != nil && err != sql.ErrNoRows {
		t.Fatalf("%s: %v", q, err)
	}
	if !s.Valid {
		return ""
	}
	return s.String
}

// balance is customer's balance in cents ("" → 0).
func (w *testWallet) balance(customer string) int64 {
	w.t.Helper()
	var n int64
	if s := w.query("SELECT balance FROM wallets WHERE customer = ?", customer); s != "" {
		fmt.Sscan(s, &n)
	}
	return n
}

// child is a wallet served by a separate process (the test binary), so a
// test can kill it with SIGKILL as a crash would.
type child struct {
	cmd *exec.Cmd
	url string
}

func startChild(t *testing.T, variant, dsn string, delay time.Duration) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "WALLET_TEST_SERVE="+variant, "WALLET_TEST_DSN="+dsn, "WALLET_TEST_DELAY="+delay.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd}
	t.Cleanup(c.kill)
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			select {
			case line <- s.Text():
			default:
			}
		}
	}()
	select {
	case l := <-line:
		addr, ok := strings.CutPrefix(l, "listening on ")
		if !ok {
			t.Fatalf("child printed %q", l)
		}
		c.url = "http://" + addr + "/webhooks/stripe"
	case <-time.After(30 * time.Second):
		t.Fatal("child wallet did not start")
	}
	return c
}

func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		_ = c.cmd.Wait()
	}
}
