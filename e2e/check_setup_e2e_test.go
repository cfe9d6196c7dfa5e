package e2e

// Setup mistakes are setup errors (issue 10 §3): a wrong secret, a handler
// that refuses a correctly signed copy, a probe that fails part way, a run
// that takes too long — exit 2 with the flag to fix, and the reports of
// what was judged before the run stopped.

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
)

// A --secret the captured delivery was not signed with is exit 2 naming
// --secret, before anything is sent.
func TestCheckWrongSecretIsASetupError(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	url, dsn := checkWallet(t, wallet.Fixed)
	r := runBin(t, db, nil, "check", fmt.Sprint(id), "--to", url, "--probe-sql", checkBalanceSQL, "--dsn", dsn,
		"--secret", "whsec_notTheSecretThisWasSignedWith", "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "does not verify with --secret") || strings.Contains(r.Stderr, "whsec_notThe") {
		t.Fatalf("want exit 2 naming --secret (and not printing it), got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, "first") {
		t.Fatalf("nothing should be judged: %s", r.Stdout)
	}
}

// A handler that refuses a correctly re-signed first copy with 401 (here: a
// route behind an auth layer) is a setup problem, not a handler bug; its
// answer body is shown.
func TestCheckRejectedSignedCopyIsASetupError(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"missing bearer token"}`, http.StatusUnauthorized)
	}))
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	_, dsn := checkWallet(t, wallet.Fixed)
	r := runBin(t, db, nil, "check", fmt.Sprint(id), "--to", base+"/api/webhooks", "--probe-sql", checkBalanceSQL,
		"--dsn", dsn, "--secret", checkSecret, "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "the handler rejected a correctly signed copy") ||
		!strings.Contains(r.Stderr, "answered 401") || !strings.Contains(r.Stderr, "missing bearer token") ||
		!strings.Contains(r.Stderr, "--to is not its webhook route") {
		t.Fatalf("want exit 2 'rejected a correctly signed copy', got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A probe that starts failing part way ends the run with exit 2, and every
// report is written for what was judged, the phase it stopped in marked
// error with the probe's message.
func TestCheckProbeFailingMidRunWritesReports(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	// Asynchronous (300 ms), so that every phase after dups takes a while.
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, Dedupe: true, Verify: true, Async: true, WorkDelay: 300 * time.Millisecond})
	// The command probe answers until the first phase is done, then its
	// "database" goes away.
	stop := filepath.Join(dir, "down")
	probeCmd := fmt.Sprintf(`if [ -e %s ]; then echo "connection refused" >&2; exit 1; fi; echo ok`, stop)
	jsonPath, junitPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
	p := startBin(t, db, "check", fmt.Sprint(id), "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--probe-cmd", probeCmd,
		"--secret", checkSecret, "--settle", "50ms", "-n", "3", "--phases", "first,dups,burst,lost",
		"--report", "json="+jsonPath, "--report", "junit="+junitPath)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, errOut := p.Output()
		if strings.Contains(errOut, "dups     delivery") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dups never started:\n%s\n%s", out, errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code := procExit(t, p)
	out, errOut := p.Output()
	if code != 2 || !strings.Contains(errOut, "connection refused") {
		t.Fatalf("want exit 2 with the probe's message, got %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatalf("no JSON report written: %v", err)
	}
	var c report.Check
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Verdict != report.VerdictError || len(c.Deliveries) != 1 {
		t.Fatalf("verdict %q, %d deliveries", c.Verdict, len(c.Deliveries))
	}
	ps := c.Deliveries[0].Phases
	if len(ps) < 2 || ps[0].Phase != "first" || ps[0].Status != report.Pass {
		t.Fatalf("the first phase, judged before the probe failed, should be in the report: %+v", ps)
	}
	last := ps[len(ps)-1]
	if last.Status != report.Error || !strings.Contains(last.Message, "connection refused") {
		t.Fatalf("the phase the run stopped in should be marked error with the probe's message: %+v", last)
	}
	jb, err := os.ReadFile(junitPath)
	if err != nil || xml.Unmarshal(jb, new(struct{})) != nil || !strings.Contains(string(jb), "<error") {
		t.Fatalf("JUnit report should hold an <error> for the stopped phase (%v):\n%s", err, jb)
	}
}

// --max-time stops a run that takes too long: exit 2 saying so, reports
// written for what was judged.
func TestCheckMaxTimeStopsTheRun(t *testing.T) {
	url, dsn := startQAHandler(t, &qaHandler{Amount: 50, Dedupe: true, Verify: true, Async: true, WorkDelay: 400 * time.Millisecond})
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	jsonPath := filepath.Join(dir, "r.json")
	start := time.Now()
	r := runBin(t, db, nil, "check", fmt.Sprint(id), "--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--max-time", "2s", "--report", "json="+jsonPath, "-q")
	if took := time.Since(start); r.Code != 2 || !strings.Contains(r.Stderr, "--max-time 2s") || took > 10*time.Second {
		t.Fatalf("want exit 2 naming --max-time within a few seconds, got %d after %s\n%s\n%s", r.Code, took, r.Stdout, r.Stderr)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatalf("no JSON report written: %v", err)
	}
	var c report.Check
	if err := json.Unmarshal(b, &c); err != nil || c.Verdict != report.VerdictError {
		t.Fatalf("report: %v %q", err, c.Verdict)
	}
}

// procExit waits for p to exit and returns its exit code.
func procExit(t *testing.T, p *proc) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the process did not exit")
	}
	return p.cmd.ProcessState.ExitCode()
}

// slowDupHandler credits each Stripe event once and answers its first copy
// at once, but every duplicate only after Delay (a slow "already handled"
// path). GET returns the credits.
type slowDupHandler struct {
	Delay time.Duration
	mu    sync.Mutex
	seen  map[string]bool
	// credits says which request credited each event: the method, path,
	// id (or the decoding error), sender and time, so that a run where
	// dups saw a second credit names the request that made it.
	credits []string
}

func (h *slowDupHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if r.Method == http.MethodGet {
		fmt.Fprint(w, len(h.seen))
		h.mu.Unlock()
		return
	}
	var ev struct {
		ID string `json:"id"`
	}
	derr := json.NewDecoder(r.Body).Decode(&ev)
	dup := h.seen[ev.ID]
	h.seen[ev.ID] = true
	if !dup {
		h.credits = append(h.credits, fmt.Sprintf("%s %s %s id %q (decode: %v, Content-Length %d, from %s, User-Agent %q)",
			time.Now().Format("15:04:05.000"), r.Method, r.URL.Path, ev.ID, derr, r.ContentLength, r.RemoteAddr, r.UserAgent()))
	}
	h.mu.Unlock()
	if dup {
		time.Sleep(h.Delay)
	}
	w.WriteHeader(http.StatusOK)
}

// The latency phase judges every copy's answer, not only the first: a
// handler that answers its first copy at once but duplicates after the
// provider's timeout fails it, naming the copies.
func TestCheckLatencyJudgesEveryCopy(t *testing.T) {
	h := &slowDupHandler{Delay: 1200 * time.Millisecond, seen: map[string]bool{}}
	base := serveHandler(t, h)
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, "--to", base+"/hook", "--probe-http", base+"/count", "--secret", checkSecret,
		"-n", "3", "--provider-timeout", "1s", "--phases", "first,dups,latency", fmt.Sprint(id))
	if r.Code != 1 || c == nil {
		t.Fatalf("want exit 1, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	p := checkPhase(t, c, "latency")
	if p.Status != report.Fail || p.Attempts != 3 || !strings.Contains(p.Message, "2 of 3 answers took longer than --provider-timeout 1s") ||
		len(p.Violations) != 2 || !strings.Contains(p.Violations[0].Message, "dups copy 2") {
		t.Fatalf("latency: %+v", p)
	}
	if d := checkPhase(t, c, "dups"); d.Status != report.Pass {
		h.mu.Lock()
		defer h.mu.Unlock()
		t.Fatalf("dups changed nothing and were answered 200: %+v\nthe handler credited:\n%s", d, strings.Join(h.credits, "\n"))
	}
}

// Named probes: reports call a probe by its name, never repeating its SQL.
func TestCheckNamedProbes(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	url, dsn := checkWallet(t, wallet.Naive)
	r := runBin(t, db, nil, "check", "--no-color", "-q", fmt.Sprint(id), "--to", url, "--probe-sql", "balance="+checkBalanceSQL, "--dsn", dsn,
		"--secret", checkSecret, "--settle", "50ms", "-n", "3", "--phases", "first,dups")
	if r.Code != 1 || !strings.Contains(r.Stdout, "changed balance from 5000 to 10000") || !strings.Contains(r.Stdout, "probes: balance = sql: SELECT") {
		t.Fatalf("want exit 1 naming the probe balance, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if n := strings.Count(r.Stdout, "SELECT"); n > 1 {
		t.Fatalf("the SQL is repeated %d times:\n%s", n, r.Stdout)
	}
}

// --last takes list's --provider and --type, so a stray request captured
// after the Stripe delivery is not what gets checked; checking the stray
// request against a Stripe route says that it is one.
func TestCheckLastWithProviderFilter(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	db := filepath.Join(t.TempDir(), "h.db")
	stripeID := checkStripeDelivery(t, db)
	stray := &message.Request{Method: "POST", Target: "/webhooks/stripe", Proto: "HTTP/1.1", Body: []byte(`{"hello":"world"}`),
		Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "User-Agent", Value: "curl/8.5.0"}, {Name: "Content-Type", Value: "application/json"}}}
	strayID := checkInsert(t, db, stray)
	url, dsn := checkWallet(t, wallet.Fixed)
	args := []string{"--to", url, "--probe-sql", "balance=" + checkBalanceSQL, "--dsn", dsn, "--secret", checkSecret, "--settle", "50ms", "--phases", "first"}

	r, c := checkRunJSON(t, db, append(args, "--last", "--provider", "Stripe")...)
	if r.Code != 0 || c == nil || c.Deliveries[0].DeliveryID != stripeID {
		t.Fatalf("--last --provider stripe should check delivery %d: exit %d\n%s\n%s", stripeID, r.Code, r.Stdout, r.Stderr)
	}
	r, c = checkRunJSON(t, db, append(args, "--last")...)
	if c == nil || c.Deliveries[0].DeliveryID != strayID || !strings.Contains(strings.Join(c.Warnings, "\n"), "looks like a Stripe webhook route") ||
		!strings.Contains(strings.Join(c.Warnings, "\n"), "--provider stripe") {
		t.Fatalf("the stray request should be named as such: exit %d %q\n%s", r.Code, c.Warnings, r.Stderr)
	}
	r = runBin(t, db, nil, "check", "--provider", "stripe", "7", "--to", url, "--probe-cmd", "echo 1")
	if r.Code != 2 || !strings.Contains(r.Stderr, "narrow --last, --event-id and --one-per-type") {
		t.Fatalf("--provider without --last: want a usage error, got %d %s", r.Code, r.Stderr)
	}
}
