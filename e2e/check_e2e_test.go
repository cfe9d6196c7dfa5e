package e2e

// End-to-end tests of `hookreplay check`: the real binary against the example
// wallet handler's variants (examples/wallet) on 127.0.0.1, with real SQLite
// (and Postgres when HOOKREPLAY_TEST_PG is set). Each buggy variant must be
// caught by its phase; the correct ones (fixed, async) must pass every phase,
// run after run.

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/testkit"
	"github.com/hookreplay/hookreplay/internal/verify"
)

const (
	checkSecret   = "whsec_checkE2eSecretForTheWalletTests"
	checkCustomer = "cus_QpB3d9uYnWx2Ke" // the customer of verify's invoice.payment_succeeded fixture
)

var checkBalanceSQL = "SELECT balance FROM wallets WHERE customer='" + checkCustomer + "'"

// checkWallet runs a wallet variant in-process on 127.0.0.1:0 with its own
// SQLite database and returns its URL and DSN.
func checkWallet(t *testing.T, variant string, edit ...func(*wallet.Options)) (string, string) {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "wallet.db")
	return checkWalletDSN(t, variant, dsn, edit...), dsn
}

func checkWalletDSN(t *testing.T, variant, dsn string, edit ...func(*wallet.Options)) string {
	t.Helper()
	opts := wallet.Options{Variant: variant, DSN: dsn, Secret: checkSecret}
	for _, e := range edit {
		e(&opts)
	}
	// The handler (and its tables) exist before the URL is handed out.
	h, closer, err := wallet.Handler(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := closer.Close(); err != nil {
			t.Logf("wallet %s: %v", variant, err)
		}
	})
	return "http://" + ln.Addr().String() + "/webhooks/stripe"
}

// checkStripeDelivery stores a signed Stripe invoice.payment_succeeded
// ($50.00 for checkCustomer) in the hookreplay database db and returns its id.
func checkStripeDelivery(t *testing.T, db string) int64 {
	t.Helper()
	req, err := verify.BuildDelivery("stripe", "invoice.payment_succeeded", checkSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return checkInsert(t, db, req)
}

// checkStripeFile stores testdata file (a Stripe event) signed now.
func checkStripeFile(t *testing.T, db, file string) int64 {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	req := &message.Request{Method: "POST", Target: "/webhooks/stripe", Proto: "HTTP/1.1", Body: body,
		Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "User-Agent", Value: "Stripe/1.0 (+https://stripe.com/docs/webhooks)"},
			{Name: "Content-Type", Value: "application/json; charset=utf-8"}}}
	req, err = verify.Sign(req, "stripe", checkSecret, verify.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return checkInsert(t, db, req)
}

// checkInsertSample stores a freshly signed sample of provider's event,
// signed with secret, in the database db and returns its id.
func checkInsertSample(t *testing.T, db, provider, event, secret string) int64 {
	t.Helper()
	req, err := verify.BuildDelivery(provider, event, secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return checkInsert(t, db, req)
}

// serveHandler serves h on a free loopback port until the test ends and
// returns its base URL, http://127.0.0.1:PORT.
func serveHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func checkInsert(t *testing.T, db string, req *message.Request) int64 {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := verify.Detect(req)
	d := &store.Delivery{Source: "test", Provider: id.Provider, EventID: id.EventID, EventType: id.EventType, Identity: id.Extra,
		Method: req.Method, Target: req.Target, Proto: "HTTP/1.1", Headers: req.Headers, Body: req.Body,
		Raw: req.Encode("example.com", req.Target)}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// checkRun runs `hookreplay check` with --json and decodes the report.
func checkRunJSON(t *testing.T, db string, args ...string) (result, *report.Check) {
	t.Helper()
	r := runBin(t, db, nil, append([]string{"check", "--json", "--no-color"}, args...)...)
	if r.Code == 2 {
		return r, nil
	}
	var c report.Check
	if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil {
		t.Fatalf("check printed no JSON report (exit %d): %v\nstdout:\n%s\nstderr:\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return r, &c
}

// checkPhase returns the phase result of the first delivery.
func checkPhase(t *testing.T, c *report.Check, phase string) report.PhaseResult {
	t.Helper()
	if phase == "order" {
		if c.Order == nil {
			t.Fatalf("no order phase in report")
		}
		return *c.Order
	}
	if len(c.Deliveries) == 0 {
		t.Fatalf("no deliveries in report")
	}
	for _, p := range c.Deliveries[0].Phases {
		if p.Phase == phase {
			return p
		}
	}
	t.Fatalf("phase %s not in report: %+v", phase, c.Deliveries[0].Phases)
	return report.PhaseResult{}
}

func checkDump(c *report.Check) string {
	b, _ := json.MarshalIndent(c, "", "  ")
	return string(b)
}

// checkArgs are the common flags: probe the balance, sign with the secret,
// settle fast.
func checkArgs(url, dsn string, extra ...string) []string {
	return append([]string{"--to", url, "--probe-sql", checkBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "100ms", "-n", "4", "--burst", "20", "--seed", "7"}, extra...)
}

// walletRun is one stored Stripe delivery and the wallet variant a check
// ran it against, for a test that runs check on them again.
type walletRun struct {
	db, url, dsn string
	id           int64
}

// checkWalletFails stores a Stripe delivery, starts wallet variant (edit
// changes its options) and runs check on them with the common flags and
// extra ones; the check must end in exit 1 with a JSON report whose
// verdict is fail.
func checkWalletFails(t *testing.T, variant string, edit func(*wallet.Options), extra ...string) (*report.Check, walletRun) {
	t.Helper()
	var w walletRun
	w.db = filepath.Join(t.TempDir(), "h.db")
	w.id = checkStripeDelivery(t, w.db)
	var edits []func(*wallet.Options)
	if edit != nil {
		edits = append(edits, edit)
	}
	w.url, w.dsn = checkWallet(t, variant, edits...)
	r, c := checkRunJSON(t, w.db, checkArgs(w.url, w.dsn, append([]string{fmt.Sprint(w.id)}, extra...)...)...)
	if r.Code != 1 || c == nil || c.Verdict != "fail" {
		t.Fatalf("%s: want exit 1 fail, got %d\n%s\n%s", variant, r.Code, r.Stdout, r.Stderr)
	}
	return c, w
}

func TestCheckNaiveFailsDups(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	c, w := checkWalletFails(t, wallet.Naive, nil, "--phases", "first,dups")
	first, dups := checkPhase(t, c, "first"), checkPhase(t, c, "dups")
	if first.Status != report.Pass || dups.Status != report.Fail {
		t.Fatalf("naive: first %s dups %s\n%s", first.Status, dups.Status, checkDump(c))
	}
	v := dups.Violations[0]
	if v.Copy != 2 || v.Before != "5000" || v.After != "10000" || v.Want != "5000" ||
		!strings.Contains(v.Message, "copy 2") || !strings.Contains(v.Message, "from 5000 to 10000 (want 5000") {
		t.Fatalf("naive: first violation not precise: %+v", v)
	}
	// The text report names the copy and the values too; --event-id finds the delivery.
	st, err := store.Open(context.Background(), w.db)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.GetDelivery(context.Background(), w.id)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	tr := runBin(t, w.db, nil, append([]string{"check", "--no-color", "-q"}, checkArgs(w.url, w.dsn, "--event-id", d.EventID, "--phases", "first,dups")...)...)
	if tr.Code != 1 || !strings.Contains(tr.Stdout, "copy 2") || !strings.Contains(tr.Stdout, d.EventID) {
		t.Fatalf("naive text report:\n%s\n%s", tr.Stdout, tr.Stderr)
	}
}

func TestCheckRacyPassesDupsFailsBurst(t *testing.T) {
	c, _ := checkWalletFails(t, wallet.Racy, nil, "--phases", "first,dups,burst")
	if s := checkPhase(t, c, "dups").Status; s != report.Pass {
		t.Fatalf("racy dups: %s\n%s", s, checkDump(c))
	}
	b := checkPhase(t, c, "burst")
	if b.Status != report.Fail || len(b.Violations) == 0 || !strings.Contains(b.Violations[0].Message, "times") {
		t.Fatalf("racy burst: %s\n%s", b.Status, checkDump(c))
	}
}

// Correct handlers must pass every phase, run after run: no false positives.
func TestCheckCorrectHandlersPassAllPhases(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, variant := range []string{wallet.Fixed, wallet.Async} {
		t.Run(variant, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			url, dsn := checkWallet(t, variant)
			for run := 0; run < 3; run++ {
				r, c := checkRunJSON(t, db, checkArgs(url, dsn, fmt.Sprint(id))...)
				if r.Code != 0 || c == nil || c.Verdict != "pass" {
					t.Fatalf("%s run %d: want exit 0 pass, got %d\n%s\n%s", variant, run, r.Code, r.Stdout, r.Stderr)
				}
				for _, p := range c.Deliveries[0].Phases {
					switch p.Phase {
					case "crash", "order":
						if p.Status != report.Skip {
							t.Fatalf("%s: %s should be skipped without --serve/--reset-cmd: %+v", variant, p.Phase, p)
						}
					default:
						if p.Status != report.Pass {
							t.Fatalf("%s run %d: phase %s %s: %s\n%s", variant, run, p.Phase, p.Status, p.Message, checkDump(c))
						}
					}
				}
			}
		})
	}
}

func TestCheckConflictFailsDupsOnStatus(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	c, _ := checkWalletFails(t, wallet.Conflict, nil, "--phases", "first,dups")
	d := checkPhase(t, c, "dups")
	if d.Status != report.Fail || d.Violations[0].Status != 409 || d.Violations[0].Probe != "" ||
		!strings.Contains(d.Violations[0].Message, "retry after a retry-later answer was answered 409") {
		t.Fatalf("conflict dups: %s\n%s", d.Status, checkDump(c))
	}
}

func TestCheckNoSigFailsTamper(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	c, _ := checkWalletFails(t, wallet.NoSig, nil, "--phases", "first,tamper")
	tp := checkPhase(t, c, "tamper")
	if tp.Status != report.Fail || len(tp.Violations) < 2 {
		t.Fatalf("nosig tamper: %s\n%s", tp.Status, checkDump(c))
	}
}

func TestCheckSlowFailsLatency(t *testing.T) {
	c, w := checkWalletFails(t, wallet.Slow, func(o *wallet.Options) { o.Delay = 400 * time.Millisecond },
		"--phases", "first,latency", "--provider-timeout", "300ms")
	if l := checkPhase(t, c, "latency"); l.Status != report.Fail {
		t.Fatalf("slow latency: %s\n%s", l.Status, checkDump(c))
	}
	// Over half the timeout is a warning, not a violation.
	r, c := checkRunJSON(t, w.db, checkArgs(w.url, w.dsn, fmt.Sprint(w.id), "--phases", "first,latency", "--provider-timeout", "700ms")...)
	if r.Code != 0 || c == nil || checkPhase(t, c, "latency").Status != report.Warn {
		t.Fatalf("slow at 700ms: want warn and exit 0, got %d\n%s", r.Code, r.Stdout)
	}
}

func TestCheckLastWriteFailsOrder(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("!!!!! SKIPPING ORDER TEST: the sqlite3 command (the reset command's tool) is not installed !!!!!")
	}
	for _, tc := range []struct {
		variant string
		code    int
		status  report.Status
	}{{wallet.LastWrite, 1, report.Fail}, {wallet.Fixed, 0, report.Pass}} {
		t.Run(tc.variant, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "h.db")
			upd := checkStripeFile(t, db, "examples/wallet/testdata/subscription_updated.json")
			del := checkStripeFile(t, db, "examples/wallet/testdata/subscription_deleted.json")
			url, dsn := checkWallet(t, tc.variant)
			path := strings.TrimPrefix(dsn, "sqlite:")
			reset := fmt.Sprintf("sqlite3 %s 'DELETE FROM subscriptions; DELETE FROM processed_events; DELETE FROM wallets;'", path)
			r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", "SELECT id, status FROM subscriptions", "--dsn", dsn,
				"--secret", checkSecret, "--settle", "50ms", "--phases", "order", "--reset-cmd", reset, "--seed", "3",
				fmt.Sprint(upd), fmt.Sprint(del))
			if r.Code != tc.code || c == nil {
				t.Fatalf("%s order: want exit %d, got %d\n%s\n%s", tc.variant, tc.code, r.Code, r.Stdout, r.Stderr)
			}
			if o := checkPhase(t, c, "order"); o.Status != tc.status {
				t.Fatalf("%s order: %s\n%s", tc.variant, o.Status, checkDump(c))
			}
		})
	}
	// A reset that forgets to clear the handler's record of processed events
	// turns later orderings into duplicates: not judged, never a violation.
	t.Run("incomplete reset", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "h.db")
		a, b := checkStripeDelivery(t, db), checkStripeDelivery(t, db) // two invoices, two event ids
		url, dsn := checkWallet(t, wallet.Fixed)
		reset := fmt.Sprintf("sqlite3 %s 'DELETE FROM wallets;'", strings.TrimPrefix(dsn, "sqlite:"))
		r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", checkBalanceSQL, "--dsn", dsn,
			"--secret", checkSecret, "--settle", "50ms", "--phases", "order", "--reset-cmd", reset, fmt.Sprint(a), fmt.Sprint(b))
		if r.Code != 0 || c == nil {
			t.Fatalf("incomplete reset: want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if o := checkPhase(t, c, "order"); o.Status != report.NotJudged || !strings.Contains(o.Message, "processed events") {
			t.Fatalf("incomplete reset: %+v", o)
		}
	})
}

func TestCheckSetupErrorsAndInconclusive(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	db := filepath.Join(t.TempDir(), "h.db")
	id := fmt.Sprint(checkStripeDelivery(t, db))
	url, dsn := checkWallet(t, wallet.Fixed)

	r := runBin(t, db, nil, "check", id, "--to", url)
	if r.Code != 2 || !strings.Contains(r.Stderr, "no probe given") || !strings.Contains(r.Stderr, "--probe-sql") {
		t.Fatalf("no probe: %+v", r)
	}
	r = runBin(t, db, nil, "check", id, "--to", url, "--probe-sql", "SELECT nope FROM nowhere", "--dsn", dsn, "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "probe sql: SELECT nope FROM nowhere") {
		t.Fatalf("bad probe: %+v", r)
	}
	r = runBin(t, db, nil, "check", id, "--to", url, "--probe-cmd", "exit 3", "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "probe cmd: exit 3") {
		t.Fatalf("failing probe command: %+v", r)
	}
	r = runBin(t, db, nil, "check", id, "--to", url, "--probe-http", "http://"+freeAddr(t)+"/x", "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "probe http:") {
		t.Fatalf("refused probe: %+v", r)
	}
	r = runBin(t, db, nil, "check", id, "--to", url, "--probe-sql", "x", "--dsn", dsn, "--phases", "crash")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--serve") {
		t.Fatalf("crash without serve: %+v", r)
	}
	// A probe that sees nothing the handler changes: inconclusive, exit 3.
	rr, c := checkRunJSON(t, db, "--to", url, "--probe-sql", "SELECT count(*) FROM subscriptions", "--dsn", dsn,
		"--secret", checkSecret, "--settle", "50ms", "--settle-max", "1s", id)
	if rr.Code != 3 || c == nil || c.Verdict != "inconclusive" || checkPhase(t, c, "first").Status != report.Inconclusive {
		t.Fatalf("inconclusive: want exit 3, got %d\n%s\n%s", rr.Code, rr.Stdout, rr.Stderr)
	}
	if !strings.Contains(checkPhase(t, c, "first").Message, "probes saw no effect") {
		t.Fatalf("inconclusive message: %q", checkPhase(t, c, "first").Message)
	}
}

// Without --secret a Stripe delivery's id cannot change (it is signed), and
// its captured signature is stale: the check says so instead of flagging.
func TestCheckWithoutSecretIsNotAViolation(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	req, err := verify.BuildDelivery("stripe", "invoice.payment_succeeded", checkSecret, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	id := checkInsert(t, db, req)
	url, dsn := checkWallet(t, wallet.Fixed)
	r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", checkBalanceSQL, "--dsn", dsn, "--settle", "50ms", "--settle-max", "1s", fmt.Sprint(id))
	if r.Code != 3 || c == nil {
		t.Fatalf("stale signature without secret: want exit 3, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if m := checkPhase(t, c, "first").Message; !strings.Contains(m, "--secret") {
		t.Fatalf("first message should point at --secret: %q", m)
	}
}

func TestCheckFromFile(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	// Written by the real export command, as a repository would commit it.
	file := filepath.Join(t.TempDir(), "webhooks.jsonl")
	if r := runBin(t, db, nil, "export", fmt.Sprint(id), "--format", "jsonl", "-o", file); r.Code != 0 {
		t.Fatalf("export: %+v", r)
	}
	url, dsn := checkWallet(t, wallet.Naive)
	other := filepath.Join(t.TempDir(), "other.db") // a store without the delivery
	junit := filepath.Join(t.TempDir(), "out", "check.xml")
	r, c := checkRunJSON(t, other, checkArgs(url, dsn, "--from", file, "--phases", "first,dups", "--report", "junit="+junit)...)
	if r.Code != 1 || c == nil || checkPhase(t, c, "dups").Status != report.Fail {
		t.Fatalf("--from: want the naive dups failure, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	x, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(x), "<failure") {
		t.Fatalf("junit report: %v\n%s", err, x)
	}
	// The run, its attempts and verdicts are stored.
	st, err := store.Open(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	as, _ := st.ListAttempts(context.Background(), c.RunID)
	vs, _ := st.ListVerdicts(context.Background(), c.RunID)
	rs, _ := st.ListProbeReadings(context.Background(), c.RunID)
	if len(as) != 4 || as[1].Phase != "dups" || as[1].Copy != 2 || as[1].EventID == "" || len(vs) != 2 || len(rs) < 5 {
		t.Fatalf("stored: %d attempts, %d verdicts, %d readings", len(as), len(vs), len(rs))
	}
	run, err := st.GetRun(context.Background(), c.RunID)
	if err != nil || run.Verdict != "fail" {
		t.Fatalf("run: %+v %v", run, err)
	}
	again, err := check.Load(context.Background(), st, c.RunID)
	if err != nil || len(again.Deliveries) != 1 || again.Verdict != "fail" || checkPhase(t, again, "dups").Violations[0].Copy != 2 {
		t.Fatalf("the stored report does not re-render the run: %v", err)
	}
}

func waitClosed(t *testing.T, addr string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the --serve handler still listens on %s after check returned", addr)
}

// The same verdicts with the handler and the probe on Postgres.
func TestCheckPostgres(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		variant string
		code    int
		want    map[string]report.Status
	}{
		{wallet.Naive, 1, map[string]report.Status{"dups": report.Fail}},
		{wallet.Racy, 1, map[string]report.Status{"dups": report.Pass, "burst": report.Fail}},
		{wallet.Fixed, 0, map[string]report.Status{"first": report.Pass, "dups": report.Pass, "burst": report.Pass, "lost": report.Pass, "tamper": report.Pass}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			dsn := testkit.PostgresSchema(t, "check_e2e")
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			url := checkWalletDSN(t, tc.variant, dsn)
			r, c := checkRunJSON(t, db, checkArgs(url, dsn, fmt.Sprint(id), "--phases", "first,dups,burst,lost,tamper")...)
			if r.Code != tc.code || c == nil {
				t.Fatalf("%s on postgres: want exit %d, got %d\n%s\n%s", tc.variant, tc.code, r.Code, r.Stdout, r.Stderr)
			}
			for ph, s := range tc.want {
				if got := checkPhase(t, c, ph).Status; got != s {
					t.Fatalf("%s on postgres: %s is %s, want %s\n%s", tc.variant, ph, got, s, checkDump(c))
				}
			}
		})
	}
}

// The sink stands in for a downstream email API: the count of its calls is a
// probe, and each call is shown as an effect.
func TestCheckSinkCountsDownstreamCalls(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		variant string
		code    int
		dups    report.Status
	}{{wallet.Naive, 1, report.Fail}, {wallet.Fixed, 0, report.Pass}} {
		t.Run(tc.variant, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			sink := freeAddr(t)
			url, _ := checkWallet(t, tc.variant, func(o *wallet.Options) { o.EmailURL = "http://" + sink })
			r, c := checkRunJSON(t, db, "--to", url, "--sink", sink, "--secret", checkSecret, "--settle", "100ms",
				"-n", "3", "--phases", "first,dups,burst", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("%s with sink: want exit %d, got %d\n%s\n%s", tc.variant, tc.code, r.Code, r.Stdout, r.Stderr)
			}
			first, dups := checkPhase(t, c, "first"), checkPhase(t, c, "dups")
			if len(first.Effects) != 1 || first.Effects[0].Path != "/v1/send" || !strings.Contains(first.Effects[0].Body, "payment_received") {
				t.Fatalf("first's effects: %+v", first.Effects)
			}
			if dups.Status != tc.dups || (tc.dups == report.Fail && !strings.HasPrefix(dups.Violations[0].Probe, "sink")) {
				t.Fatalf("%s dups: %s\n%s", tc.variant, dups.Status, checkDump(c))
			}
			if b := checkPhase(t, c, "burst"); tc.variant == wallet.Fixed && (b.Status != report.Pass || len(b.Effects) != 3) {
				t.Fatalf("fixed burst: %s with %d effects (want one email per burst round)\n%s", b.Status, len(b.Effects), checkDump(c))
			}
		})
	}
}

// stateHandler is a correct handler whose effect depends on state, not on
// the event: any event sets the subscription active (again). A fresh event
// then legitimately changes nothing, which must never be called a duplicate.
type stateHandler struct {
	mu     chan struct{}
	active bool
}

func (h *stateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu <- struct{}{}
	defer func() { <-h.mu }()
	switch {
	case r.Method == "POST" && r.URL.Path == "/reset":
		h.active = false
	case r.Method == "POST":
		h.active = true
	case r.URL.Path == "/status":
		fmt.Fprint(w, map[bool]string{true: "active", false: "pending"}[h.active])
	case r.URL.Path == "/count":
		fmt.Fprint(w, map[bool]int{true: 1, false: 0}[h.active])
	}
}

func TestCheckStateDependentEffectIsNotFlagged(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	h := &stateHandler{mu: make(chan struct{}, 1)}
	base := serveHandler(t, h)
	db := filepath.Join(t.TempDir(), "h.db")
	id := fmt.Sprint(checkStripeDelivery(t, db))
	args := []string{"--to", base + "/hook", "--probe-http", base + "/status", "--probe-http", base + "/count",
		"--secret", checkSecret, "--settle", "50ms", "--settle-max", "1s", "-n", "3", "--phases", "first,dups,burst,lost", id}
	r, c := checkRunJSON(t, db, args...)
	if r.Code != 0 || c == nil {
		t.Fatalf("state handler: want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, ph := range []string{"burst", "lost"} {
		if p := checkPhase(t, c, ph); p.Status != report.NotJudged || !strings.Contains(p.Message+strings.Join(p.Warnings, ";"), "--reset-cmd") {
			t.Fatalf("%s should be not judged, pointing at --reset-cmd: %+v", ph, p)
		}
	}
	// With a reset command the same phases are judged exactly, and pass.
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the reset half of this test needs it")
	}
	args = append(args, "--reset-cmd", "curl -sf -X POST "+base+"/reset")
	r, c = checkRunJSON(t, db, args...)
	if r.Code != 0 || c == nil {
		t.Fatalf("state handler with reset: want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if p := checkPhase(t, c, "burst"); p.Status != report.Pass {
		t.Fatalf("burst with reset: %+v", p)
	}
}

// githubHandler counts the work it does per push; dedup decides whether it
// skips X-GitHub-Delivery ids it has seen.
type githubHandler struct {
	mu    chan struct{}
	dedup bool
	seen  map[string]bool
	work  int
}

func (h *githubHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu <- struct{}{}
	defer func() { <-h.mu }()
	if r.Method == "GET" {
		fmt.Fprint(w, h.work)
		return
	}
	id := r.Header.Get("X-GitHub-Delivery")
	if !h.dedup || !h.seen[id] {
		h.seen[id] = true
		h.work++
	}
	w.WriteHeader(http.StatusAccepted)
}

// GitHub keeps the event id in an unsigned header: without --secret every
// phase still gets a fresh identity and the captured signature stays valid.
func TestCheckGitHubWithoutSecret(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		dedup bool
		code  int
	}{{false, 1}, {true, 0}} {
		t.Run(fmt.Sprintf("dedup=%v", tc.dedup), func(t *testing.T) {
			h := &githubHandler{mu: make(chan struct{}, 1), dedup: tc.dedup, seen: map[string]bool{}}
			base := serveHandler(t, h)
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkInsertSample(t, db, "github", "push", "gh-secret")
			r, c := checkRunJSON(t, db, "--to", base+"/github", "--probe-http", base+"/work", "--settle", "50ms",
				"-n", "3", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("github dedup=%v: want exit %d, got %d\n%s\n%s", tc.dedup, tc.code, r.Code, r.Stdout, r.Stderr)
			}
			if c.Deliveries[0].Provider != "github" || checkPhase(t, c, "burst").Status == report.Skip {
				t.Fatalf("burst should run without --secret for github: %s", checkDump(c))
			}
			if tc.dedup {
				for _, ph := range []string{"first", "dups", "burst", "lost", "latency"} {
					if s := checkPhase(t, c, ph).Status; s != report.Pass {
						t.Fatalf("%s: %s\n%s", ph, s, checkDump(c))
					}
				}
				if s := checkPhase(t, c, "tamper").Status; s != report.Skip {
					t.Fatalf("tamper without --secret should be skipped: %s", s)
				}
			} else if checkPhase(t, c, "dups").Status != report.Fail {
				t.Fatalf("dups should fail without dedup: %s", checkDump(c))
			}
		})
	}
}

// qaHandler is a small Stripe-style handler for the check's false-positive
// and missed-bug tests: it credits Amount (a decimal, into a REAL column, as
// many real handlers keep dollars) per event, claiming the event id (the body's
// "id") with a unique constraint in the same transaction when Dedupe is set.
// Async answers first and works WorkDelay later; EmailURL, when set, receives
// one call EmailDelay after each credit (a slow downstream API).
type qaHandler struct {
	db         *sql.DB
	Amount     float64
	Dedupe     bool
	Async      bool
	WorkDelay  time.Duration
	EmailURL   string
	EmailDelay time.Duration
	// Verify rejects (400) a copy whose Stripe signature is wrong or older
	// than 5 minutes, before doing anything.
	Verify bool
	// VerifyStatus, when set, is the status of that rejection instead of
	// 400 (500: a signature check that throws).
	VerifyStatus int
	// WorkOn, when set, makes the handler do the work only for these
	// arrivals of an event id (1 = its first copy): a dedupe that fails now
	// and then.
	WorkOn map[int]bool
	// DedupeOn, when set, claims this header's value instead of the event
	// id: a key shared by different events (BUG: drops every later event).
	DedupeOn string
	// Upsert stores status=active with updated_at=now for every copy
	// (subs table) instead of crediting.
	Upsert bool
	mu     sync.Mutex
	seen   map[string]int
}

// qaStripeValid checks a Stripe-Signature header: HMAC-SHA256 of "t.body"
// with the secret, t within 5 minutes.
func qaStripeValid(header string, body []byte) bool {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(t, 0)).Abs() > 5*time.Minute {
		return false
	}
	m := hmac.New(sha256.New, []byte(checkSecret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := hex.EncodeToString(m.Sum(nil))
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

// startQAHandler serves h on 127.0.0.1:0 with a fresh SQLite database and
// returns the hook URL and the DSN to probe.
func startQAHandler(t *testing.T, h *qaHandler) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "qa.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE TABLE processed (event_id TEXT PRIMARY KEY)",
		"CREATE TABLE balance (k TEXT PRIMARY KEY, v REAL NOT NULL)",
		"INSERT INTO balance VALUES ('w', 0)",
		"CREATE TABLE subs (customer TEXT PRIMARY KEY, status TEXT, updated_at INTEGER)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	h.db = db
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		time.Sleep(h.WorkDelay + h.EmailDelay + 50*time.Millisecond) // let background work end
		db.Close()
	})
	return "http://" + ln.Addr().String() + "/hook", "sqlite:" + path
}

func (h *qaHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		ID string `json:"id"`
	}
	if h.Verify && !qaStripeValid(r.Header.Get("Stripe-Signature"), body) {
		http.Error(w, "bad signature", cmp.Or(h.VerifyStatus, http.StatusBadRequest))
		return
	}
	if json.Unmarshal(body, &ev) != nil || ev.ID == "" {
		http.Error(w, "no event id", http.StatusBadRequest)
		return
	}
	if h.WorkOn != nil {
		h.mu.Lock()
		if h.seen == nil {
			h.seen = map[string]int{}
		}
		h.seen[ev.ID]++
		n := h.seen[ev.ID]
		h.mu.Unlock()
		if !h.WorkOn[n] {
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	if h.DedupeOn != "" {
		ev.ID = r.Header.Get(h.DedupeOn)
	}
	if !h.Async {
		h.work(ev.ID)
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusOK)
	go func() {
		time.Sleep(h.WorkDelay)
		h.work(ev.ID)
	}()
}

func (h *qaHandler) work(id string) {
	tx, err := h.db.Begin()
	if err != nil {
		return
	}
	defer tx.Rollback()
	if h.Upsert {
		if _, err := tx.Exec(`INSERT INTO subs VALUES ('cus_1', 'active', ?)
			ON CONFLICT (customer) DO UPDATE SET status = 'active', updated_at = excluded.updated_at`, time.Now().UnixNano()); err == nil {
			tx.Commit()
		}
		return
	}
	if h.Dedupe {
		res, err := tx.Exec("INSERT INTO processed VALUES (?) ON CONFLICT DO NOTHING", id)
		if err != nil {
			return
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return
		}
	}
	if _, err := tx.Exec("UPDATE balance SET v = v + ?", h.Amount); err != nil {
		return
	}
	if tx.Commit() != nil || h.EmailURL == "" {
		return
	}
	go func() { // a receipt from a slow email API, after answering
		time.Sleep(h.EmailDelay)
		if resp, err := http.Post(h.EmailURL+"/v1/send", "application/json", strings.NewReader(`{"event":"`+id+`"}`)); err == nil {
			resp.Body.Close()
		}
	}()
}

const qaBalanceSQL = "SELECT v FROM balance"

// A decimal amount (19.99 per event, in a REAL column) is compared as a
// decimal: the exactly-once handler passes every phase, the duplicating one
// fails dups, burst and lost with exact messages.
func TestCheckDecimalAmounts(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		dedupe bool
		code   int
	}{{true, 0}, {false, 1}} {
		t.Run(fmt.Sprintf("dedupe=%v", tc.dedupe), func(t *testing.T) {
			url, dsn := startQAHandler(t, &qaHandler{Amount: 19.99, Dedupe: tc.dedupe})
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
				"--settle", "100ms", "-n", "3", "--phases", "first,dups,burst,lost", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			for _, ph := range []string{"dups", "burst", "lost"} {
				p := checkPhase(t, c, ph)
				if tc.dedupe && p.Status != report.Pass {
					t.Fatalf("exactly-once handler: %s %s: %s\n%s", ph, p.Status, p.Message, checkDump(c))
				}
				if !tc.dedupe && p.Status != report.Fail {
					t.Fatalf("duplicating handler: %s %s: %s", ph, p.Status, p.Message)
				}
			}
			if !tc.dedupe {
				b := checkPhase(t, c, "burst")
				if !strings.Contains(b.Message, "one event's effect +19.99") || !strings.Contains(b.Message, "times") {
					t.Fatalf("burst message should state the decimal effect and how many times: %s", b.Message)
				}
			}
		})
	}
}

// A correct handler whose effects for one event land further apart than
// --settle (the credit at once, a receipt email 400 ms later) is not
// flagged: the check learns how long one event's effects take.
func TestCheckLateEffectsOfOneEvent(t *testing.T) {
	sink := freeAddr(t)
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, Dedupe: true, Verify: true, EmailURL: "http://" + sink, EmailDelay: 400 * time.Millisecond})
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--sink", sink, "--secret", checkSecret,
		"--settle", "100ms", "-n", "3", "--phases", "first,dups,lost", fmt.Sprint(id))
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("progress:\n%s", r.Stderr)
	first := checkPhase(t, c, "first")
	if !strings.Contains(first.Message, "sink") || len(first.Effects) != 1 {
		t.Fatalf("first's effect should include the late email: %s (%d effects)", first.Message, len(first.Effects))
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "effective settle") {
		t.Fatalf("the report should state the effective settle: %q", c.Notes)
	}
}

// An asynchronous handler without dedupe that works later than --settle:
// lost must catch the retry's double work, and that late work must not leak
// into tamper (whose copies the handler rejects with 400) as a signature bug.
func TestCheckLateDuplicateWorkStaysInItsPhase(t *testing.T) {
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, Async: true, Verify: true, WorkDelay: 300 * time.Millisecond})
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "100ms", "--phases", "first,lost,tamper", fmt.Sprint(id))
	if r.Code != 1 || c == nil {
		t.Fatalf("want exit 1, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if p := checkPhase(t, c, "lost"); p.Status != report.Fail || !strings.Contains(p.Message, "answer lost on its way back") {
		t.Fatalf("lost should catch the retry's late double work: %s %s\n%s", p.Status, p.Message, checkDump(c))
	}
	if p := checkPhase(t, c, "tamper"); p.Status != report.Pass {
		t.Fatalf("tamper copies answered 400 were blamed for late work: %s %s\n%s", p.Status, p.Message, checkDump(c))
	}
}

// dups names the copies that changed a probe compared with the reading
// before them, not every copy after the first extra credit.
func TestCheckDupsNamesTheCopiesThatDidTheWork(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, WorkOn: map[int]bool{1: true, 2: true, 4: true}})
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "-n", "5", "--phases", "first,dups", fmt.Sprint(id))
	if r.Code != 1 || c == nil {
		t.Fatalf("want exit 1, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	d := checkPhase(t, c, "dups")
	if !strings.Contains(d.Message, "2 of 4 duplicates did the work again (copies 2, 4)") || !strings.Contains(d.Message, "ended at 150 (want 50)") {
		t.Fatalf("dups message: %s", d.Message)
	}
	if v := d.Violations[0]; v.Copy != 2 || v.Before != "50" || v.After != "100" || v.Want != "50" {
		t.Fatalf("dups violation: %+v", v)
	}
}

// Setup and usage problems are exit 2 before anything is judged: nothing
// listening at --to, two documents on stdout, a secret the provider's scheme
// cannot use.
func TestCheckSetupProblemsAreExit2(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	db := filepath.Join(t.TempDir(), "h.db")
	id := fmt.Sprint(checkStripeDelivery(t, db))
	addr := freeAddr(t)
	r := runBin(t, db, nil, "check", id, "--to", "http://"+addr+"/hook", "--probe-cmd", "echo 1", "--secret", checkSecret, "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "nothing is listening at http://"+addr+"/hook") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("handler not listening: want exit 2 'nothing is listening', got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, Dedupe: true})
	for _, extra := range [][]string{{"--json", "--report", "json=-"}, {"--report", "json=-", "--report", "junit=-"}} {
		r = runBin(t, db, nil, append([]string{"check", id, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "-q"}, extra...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "stdout") || r.Stdout != "" {
			t.Fatalf("%v: want a usage error about stdout, got %d\n%s\n%s", extra, r.Code, r.Stdout, r.Stderr)
		}
	}
	// One report on stdout replaces the text report: one parseable document.
	r = runBin(t, db, nil, "check", id, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "--phases", "first", "-q", "--report", "json=-")
	var c report.Check
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &c) != nil || c.SchemaVersion == 0 {
		t.Fatalf("--report json=-: want one JSON document on stdout, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// A Standard Webhooks secret must be whsec_ + base64.
	req, err := verify.BuildDelivery("standard", "invoice.paid", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sid := fmt.Sprint(checkInsert(t, db, req))
	r = runBin(t, db, nil, "check", sid, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", "whsec_not!base64", "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--secret") || !strings.Contains(r.Stderr, "base64") {
		t.Fatalf("bad standard secret: want exit 2 with verify's message, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A handler that deduplicates on a key shared by different events (here the
// User-Agent, as real ones do with a hook id or a signature) drops every
// event after the first: the control event with a fresh id changes nothing.
// That must be said plainly on the phases it leaves unjudged and above the
// verdict, never passed silently.
func TestCheckDedupeOnSharedKeyIsWarned(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, Dedupe: true, DedupeOn: "User-Agent"})
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "--settle-max", "1s", "-n", "3", "--phases", "first,dups,burst,lost", fmt.Sprint(id))
	if c == nil {
		t.Fatalf("no report: %d\n%s", r.Code, r.Stderr)
	}
	const want = "deduplicates on something other than the event id"
	for _, ph := range []string{"burst", "lost"} {
		p := checkPhase(t, c, ph)
		if p.Status != report.NotJudged || !strings.Contains(p.Message, "see the warning") || !strings.Contains(strings.Join(p.Warnings, "\n"), want) ||
			!strings.Contains(strings.Join(p.Warnings, "\n"), "--reset-cmd") {
			t.Fatalf("%s: want not judged with the shared-key warning: %+v", ph, p)
		}
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), want) || !strings.Contains(strings.Join(c.Warnings, "\n"), "(burst, lost)") {
		t.Fatalf("the run's warnings should say it, naming the phases it concerns: %q", c.Warnings)
	}
	url, dsn = startQAHandler(t, &qaHandler{Amount: 50, Dedupe: true, DedupeOn: "User-Agent"}) // its key is claimed now
	tr := runBin(t, db, nil, "check", "--no-color", "-q", "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "--settle-max", "1s", "-n", "3", "--phases", "first,dups,lost", fmt.Sprint(id))
	lines := strings.Split(strings.TrimSpace(tr.Stdout), "\n")
	if len(lines) < 3 || !strings.Contains(strings.Join(lines[len(lines)-4:], "\n"), want) {
		t.Fatalf("the warning should be next to the verdict (exit %d):\n%s\n%s", tr.Code, tr.Stdout, tr.Stderr)
	}
	// Shown once: the phase it leaves unjudged points at it.
	if n := strings.Count(tr.Stdout, want); n != 1 || !strings.Contains(tr.Stdout, "(the run's warning below)") {
		t.Fatalf("the long warning is printed %d times, want once:\n%s", n, tr.Stdout)
	}
}

// A non-numeric probe that includes a column changing on every call
// (updated_at): the dups violation names the column that changed and points
// at probing the business columns instead.
func TestCheckDupsNamesTheChangedColumn(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	url, dsn := startQAHandler(t, &qaHandler{Upsert: true})
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, "--to", url, "--probe-sql", "SELECT * FROM subs", "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "-n", "3", "--phases", "first,dups", fmt.Sprint(id))
	if r.Code != 1 || c == nil {
		t.Fatalf("want exit 1, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	v := checkPhase(t, c, "dups").Violations[0]
	if !strings.Contains(v.Message, "only updated_at changed") || !strings.Contains(v.Message, "customer, status") {
		t.Fatalf("dups violation should name the changed column and the business columns: %s", v.Message)
	}
}

// slackHandler dedupes Slack events on event_id and records the retry
// headers of every copy it receives.
type slackHandler struct {
	mu      sync.Mutex
	seen    map[string]bool
	work    int
	retries []string // "num/reason" of copies that carried X-Slack-Retry-Num
	plain   int      // copies without it
}

func (h *slackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Method == "GET" {
		fmt.Fprint(w, h.work)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		EventID string `json:"event_id"`
	}
	json.Unmarshal(body, &ev)
	if n := r.Header.Get("X-Slack-Retry-Num"); n != "" {
		h.retries = append(h.retries, n+"/"+r.Header.Get("X-Slack-Retry-Reason"))
	} else {
		h.plain++
	}
	if !h.seen[ev.EventID] {
		h.seen[ev.EventID] = true
		h.work++
	}
}

// Slack marks its retries (X-Slack-Retry-Num, X-Slack-Retry-Reason): the
// provider's retry in lost carries them, first copies and duplicates do not.
func TestCheckSlackRetriesAreMarked(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	h := &slackHandler{seen: map[string]bool{}}
	base := serveHandler(t, h)
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkInsertSample(t, db, "slack", "event_callback", "slack-signing-secret")
	r, c := checkRunJSON(t, db, "--to", base+"/slack", "--probe-http", base+"/work", "--secret", "slack-signing-secret",
		"--settle", "50ms", "-n", "2", "--phases", "first,dups,lost", fmt.Sprint(id))
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.retries) != 2 || h.retries[0] != "1/http_timeout" || h.retries[1] != "1/http_timeout" {
		t.Fatalf("lost's two retries should carry X-Slack-Retry-Num 1 / http_timeout: %q (unmarked copies: %d)", h.retries, h.plain)
	}
}
