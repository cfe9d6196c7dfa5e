package e2e

// End-to-end tests of `hookreplay demo serve`: the real binary serving the
// example wallet, real deliveries over HTTP, the sink standing in for the
// email API the wallet calls.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

const demoServeSecret = "whsec_demoServeE2E"

// demoServeStart runs `demo serve` with args and returns its base URL once it
// printed its listening line.
func demoServeStart(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	return demoServeStartEnv(t, nil, args...)
}

// demoServeStartEnv is demoServeStart with env added to its environment.
func demoServeStartEnv(t *testing.T, env []string, args ...string) (*proc, string) {
	t.Helper()
	addr := freeAddr(t)
	p := startBinEnv(t, env, "", append([]string{"demo", "serve"}, append(args, "--listen", addr)...)...)
	return p, demoServeWait(t, p, addr)
}

func demoServeWait(t *testing.T, p *proc, addr string) string {
	t.Helper()
	select {
	case line := <-p.lines:
		if !strings.HasPrefix(line, "wallet ") || !strings.Contains(line, "listening on http://"+addr+"/") {
			t.Fatalf("listening line %q", line)
		}
	case <-p.done:
		o, e := p.Output()
		t.Fatalf("demo serve exited:\n%s\n%s", o, e)
	case <-time.After(20 * time.Second):
		t.Fatal("demo serve printed nothing")
	}
	return "http://" + addr
}

// demoServeEvent is the invoice fixture with event id id.
func demoServeEvent(t *testing.T, id string) []byte {
	t.Helper()
	raw, err := os.ReadFile("examples/wallet/testdata/invoice_paid.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = id
	b, _ := json.Marshal(m)
	return b
}

// demoServePost delivers body, signed with secret at ts when secret is set.
func demoServePost(t *testing.T, url string, body []byte, secret string, ts time.Time) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/webhooks/stripe", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Stripe-Signature", webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: ts}).Header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func demoServeBalance(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/balance?customer=cus_wallet1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

func TestDemoServeHelp(t *testing.T) {
	t.Parallel()
	r := runBin(t, "", nil, "demo", "serve", "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Example") && !strings.Contains(r.Stdout, "Examples:") {
		t.Fatalf("--help: exit %d\n%s", r.Code, r.Stdout)
	}
	for _, hidden := range []string{"claimfirst", "lastwrite", "nosig", "conflict"} {
		if strings.Contains(r.Stdout, hidden) {
			t.Errorf("--help advertises the test-only variant %s", hidden)
		}
	}
}

func TestDemoServeVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		variant string
		want    string // balance after the same event twice, sequentially
	}{
		{"naive", "10000"},
		{"racy", "5000"},
		{"fixed", "5000"},
	}
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), tt.variant+".db")
			p, url := demoServeStart(t, tt.variant, "--db", db, "--secret", demoServeSecret)
			body := demoServeEvent(t, "evt_e2e_"+tt.variant)
			if code := demoServePost(t, url, body, "", time.Time{}); code != 400 {
				t.Fatalf("unsigned delivery answered %d, want 400", code)
			}
			if code := demoServePost(t, url, body, demoServeSecret, time.Now().Add(-time.Hour)); code != 400 {
				t.Fatalf("hour-old signature answered %d, want 400", code)
			}
			for i := 0; i < 2; i++ {
				if code := demoServePost(t, url, body, demoServeSecret, time.Now()); code != 200 {
					t.Fatalf("copy %d answered %d", i+1, code)
				}
			}
			if got := demoServeBalance(t, url); got != tt.want {
				t.Fatalf("balance %s, want %s", got, tt.want)
			}
			// SIGTERM: a clean stop, exit 0, and the deliveries logged on stderr.
			p.stop(10 * time.Second)
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				_, e := p.Output()
				t.Fatalf("exit %d after SIGTERM\n%s", code, e)
			}
			_, stderr := p.Output()
			if !strings.Contains(stderr, "evt_e2e_"+tt.variant) || !strings.Contains(stderr, "rejected: ") {
				t.Errorf("stderr does not log the deliveries:\n%s", stderr)
			}
			if _, err := os.Stat(db); err != nil {
				t.Errorf("wallet database: %v", err)
			}
		})
	}
}

// With EMAIL_API_URL pointing at a sink, the wallet's receipts are recorded:
// naive sends one per delivery, fixed one per event.
func TestDemoServeReceiptsReachTheSink(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		variant string
		want    int
	}{{"naive", 3}, {"fixed", 1}} {
		t.Run(tt.variant, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sink, err := probe.StartSink(ctx, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer sink.Close()
			_, url := demoServeStartEnv(t, []string{"EMAIL_API_URL=" + sink.URL()}, tt.variant, "--db", filepath.Join(t.TempDir(), "w.db"), "-q")
			body := demoServeEvent(t, "evt_receipt")
			for i := 0; i < 3; i++ {
				if code := demoServePost(t, url, body, "", time.Time{}); code != 200 {
					t.Fatalf("answered %d", code)
				}
			}
			calls := sink.Calls()
			if len(calls) != tt.want {
				t.Fatalf("sink saw %d calls, want %d: %+v", len(calls), tt.want, calls)
			}
			if calls[0].Method != "POST" || calls[0].Path != "/v1/send" || !strings.Contains(string(calls[0].Body), `"to":"cus_wallet1"`) {
				t.Errorf("receipt call %+v", calls[0])
			}
		})
	}
}

func TestDemoServeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"demo", "serve"}, "demo serve takes one variant: naive, racy, fixed"},
		{[]string{"demo", "serve", "clever"}, `unknown variant "clever"`},
		{[]string{"demo", "serve", "fixed", "--db", "/nonexistent-dir/w.db"}, "create tables"},
		{[]string{"demo", "serve", "fixed", "--dsn", "mysql://u:secretpw@h/db"}, "use sqlite:PATH or postgres://"},
		{[]string{"demo", "serve", "fixed", "--race-window", "soon"}, "--race-window soon: not a duration"},
	}
	for _, tt := range tests {
		r := runBin(t, "", nil, tt.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tt.args, r.Code, r.Stderr, tt.want)
		}
		if strings.Contains(r.Stderr, "secretpw") {
			t.Errorf("%v leaks the password: %s", tt.args, r.Stderr)
		}
	}
	// The port is taken: a setup error naming the address.
	addr := freeAddr(t)
	p := startBin(t, "", "demo", "serve", "fixed", "--listen", addr, "--db", filepath.Join(t.TempDir(), "a.db"))
	demoServeWait(t, p, addr)
	r := runBin(t, "", nil, "demo", "serve", "fixed", "--listen", addr, "--db", filepath.Join(t.TempDir(), "b.db"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "listen on "+addr) {
		t.Errorf("port in use: exit %d, %q", r.Code, r.Stderr)
	}
}

// TestDemoServePostgres runs the three demo variants on Postgres.
func TestDemoServePostgres(t *testing.T) {
	t.Parallel()
	testkit.PostgresDSN(t) // skip (or fail in CI) before the subtests
	for _, tt := range []struct{ variant, want string }{{"naive", "10000"}, {"racy", "5000"}, {"fixed", "5000"}} {
		t.Run(tt.variant, func(t *testing.T) {
			sdsn := testkit.PostgresSchema(t, "demo_serve_e2e_"+tt.variant)
			_, url := demoServeStart(t, tt.variant, "--dsn", sdsn, "-q")
			body := demoServeEvent(t, "evt_pg_"+tt.variant)
			for i := 0; i < 2; i++ {
				if code := demoServePost(t, url, body, "", time.Time{}); code != 200 {
					t.Fatalf("answered %d", code)
				}
			}
			if got := demoServeBalance(t, url); got != tt.want {
				t.Fatalf("balance %s, want %s", got, tt.want)
			}
			p, err := probe.NewSQL(sdsn, "SELECT COALESCE(SUM(balance), 0) FROM wallets")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if v, err := p.Read(context.Background()); err != nil || v.Text != tt.want {
				t.Fatalf("probe read %+v, %v; want %s", v, err, tt.want)
			}
		})
	}
}
