package e2e

// keycheck against APIs built the way real idempotency middleware is
// (issue 30): a global key space, a middleware that stores every answer
// (≥ 400 too) and marks replays, one mounted on every route. mwAPI is such
// an API, each pattern a switch.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
)

// mwAPI is a messaging API behind an idempotency middleware written as the
// popular Express and Koa ones are: the middleware looks the key up before
// the route runs, stores the route's answer after it, and answers a known
// key from its store. POST /v1/messages {"text","fail_once"} creates a
// message (201 {"id","text"}); GET /v1/messages answers {"count": N};
// GET /debug/count is the probe. Authorization: AccessKey ACCOUNT.
type mwAPI struct {
	// global: keys are stored without the account (one key space); a key
	// another account used is refused with refuse (the status) — the
	// middleware sees a key it did not store for this caller.
	global bool
	refuse int
	// storeErrors: answers ≥ 400 are stored too and replayed through the
	// app's error handler (a fresh request_id in the body), marked
	// Idempotent-Replayed: true as every replay is.
	storeErrors bool
	// everyRoute: the middleware is mounted with app.use(), on GETs too.
	everyRoute bool
	// unmarked: replays carry no Idempotent-Replayed header.
	unmarked bool
	// longKeyBroken: a key over 255 characters is claimed, but its answer
	// cannot be stored (a varchar(255) column; the error swallowed): the
	// same key again finds its claim unfinished and answers 500.
	longKeyBroken bool
	// down is a file whose existence means the idempotency store is down:
	// its client queues commands while it reconnects, so a request waits
	// for the store to come back; then it runs (held), or, its client
	// gone, is dropped without doing anything.
	down    string
	dropped bool
	// unique: a message's text is unique (a signup's email): a second
	// message with a text already used is refused with 422. While the file
	// reset exists, the next request clears the texts and removes it.
	unique bool
	reset  string
	texts  map[string]bool
	// staleGets: that many GETs after a message is created still show the
	// count before it (a read replica that lags).
	staleGets int
	stale     int
	shown     int

	mu    sync.Mutex
	keys  map[string]*mwEntry
	count int
	seen  map[string]bool
	reqs  int
}

type mwEntry struct {
	account string
	status  int
	body    []byte
	err     bool
}

func (a *mwAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/debug/count" {
		a.mu.Lock()
		defer a.mu.Unlock()
		fmt.Fprint(w, a.count)
		return
	}
	account, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AccessKey ")
	if !ok || account == "" {
		a.fail(w, 401, "unauthorized")
		return
	}
	if a.reset != "" && fileExists(a.reset) {
		a.mu.Lock()
		a.texts = nil
		a.mu.Unlock()
		os.Remove(a.reset)
	}
	key := r.Header.Get("Idempotency-Key")
	raw, _ := io.ReadAll(r.Body) // as body-parser does, before the middleware
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if a.down != "" && key != "" {
		for deadline := time.Now().Add(20 * time.Second); fileExists(a.down) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if a.dropped && r.Context().Err() != nil {
			return
		}
	}
	if key == "" || (r.Method == http.MethodGet && !a.everyRoute) {
		status, body, isErr := a.route(r)
		a.answer(w, status, body, isErr, false)
		return
	}
	a.mu.Lock()
	if a.keys == nil {
		a.keys = map[string]*mwEntry{}
	}
	id := key
	if !a.global {
		id = account + ":" + key
	}
	if e := a.keys[id]; e != nil {
		a.mu.Unlock()
		if e.status == 0 {
			a.fail(w, 500, "idempotency record incomplete")
			return
		}
		if e.account != account {
			a.fail(w, a.refuse, "idempotency key already used")
			return
		}
		a.answer(w, e.status, e.body, e.err, true)
		return
	}
	if a.longKeyBroken && len(key) > 255 {
		a.keys[id] = &mwEntry{account: account} // the claim; its answer never fits
	}
	a.mu.Unlock()
	status, body, isErr := a.route(r)
	if a.longKeyBroken && len(key) > 255 {
		a.answer(w, status, body, isErr, false)
		return
	}
	if status < 400 || a.storeErrors {
		a.mu.Lock()
		a.keys[id] = &mwEntry{account: account, status: status, body: body, err: isErr}
		a.mu.Unlock()
	}
	a.answer(w, status, body, isErr, false)
}

// route is the app: its answer, and whether it is an error the error
// handler renders.
func (a *mwAPI) route(r *http.Request) (int, []byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.Method == http.MethodGet {
		if a.stale > 0 {
			a.stale--
		} else {
			a.shown = a.count
		}
		return 200, []byte(fmt.Sprintf(`{"count":%d}`, a.shown)), false
	}
	raw, _ := io.ReadAll(r.Body)
	var m struct {
		Text     string `json:"text"`
		FailOnce bool   `json:"fail_once"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Text == "" {
		return 400, []byte("text is required"), true
	}
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	if m.FailOnce && !a.seen[m.Text] {
		a.seen[m.Text] = true
		return 500, []byte("upstream SMS gateway failed"), true
	}
	if a.unique {
		if a.texts[m.Text] {
			return 422, []byte("a message with this text exists"), true
		}
		if a.texts == nil {
			a.texts = map[string]bool{}
		}
		a.texts[m.Text] = true
	}
	a.count++
	a.stale = a.staleGets
	return 201, []byte(fmt.Sprintf(`{"id":"msg_%d","text":%q}`, a.count, m.Text)), false
}

// answer writes an answer; an error goes through the error handler, which
// gives every response its own request id.
func (a *mwAPI) answer(w http.ResponseWriter, status int, body []byte, isErr, replayed bool) {
	if replayed && !a.unmarked {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if isErr {
		a.fail(w, status, string(body))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func (a *mwAPI) fail(w http.ResponseWriter, status int, msg string) {
	a.mu.Lock()
	a.reqs++
	n := a.reqs
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q,"request_id":"req_%d"}`, msg, n)
}

// mwKeycheck runs the checks named against a, judged by profile, and
// returns the exit code and the report.
func mwKeycheck(t *testing.T, a *mwAPI, profile, checks string, extra ...string) (result, *report.KeyCheck) {
	t.Helper()
	base := serveHandler(t, a)
	db := filepath.Join(t.TempDir(), "h.db")
	args := append([]string{"keycheck", "--to", base + "/v1/messages", "--body", `{"text":"hi {{nonce}}"}`,
		"-H", "Authorization: AccessKey acct_a", "--profile", profile, "--checks", checks,
		"--probe-http", "count=" + base + "/debug/count", "--settle", "50ms", "--json", "-q"}, extra...)
	r := runBin(t, db, nil, args...)
	var k report.KeyCheck
	if err := json.Unmarshal([]byte(r.Stdout), &k); err != nil {
		t.Fatalf("keycheck printed no JSON report (exit %d): %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return r, &k
}

// kcResult is the result of the check named in k.
func kcResult(t *testing.T, k *report.KeyCheck, name string) report.KeyCheckResult {
	t.Helper()
	for _, c := range k.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in the report: %+v", name, k.Checks)
	return report.KeyCheckResult{}
}

// A global key space refuses the other account's request because the
// first account's key exists (nothing runs): not an inconclusive answer,
// but keys not scoped per account — told apart by the same body from the
// other account with a fresh key, which runs. Whatever status the refusal
// has: a 400 (no profile's reuse status here) or a 403.
func TestKeycheckGlobalKeysRefusedAreNotScoped(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 403} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			r, k := mwKeycheck(t, &mwAPI{global: true, refuse: status}, "bird", "first,scope", "--other-account", "Authorization: AccessKey acct_b")
			c := kcResult(t, k, "scope")
			if r.Code != 1 || c.Status != report.Fail || !strings.Contains(c.Why, "not scoped per account") || !strings.Contains(c.Why, "fresh key ran") {
				t.Fatalf("exit %d, scope %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
			}
			if !strings.Contains(c.Observed, fmt.Sprintf("other account with the same key %d", status)) {
				t.Fatalf("observed should name the refusal: %s", c.Observed)
			}
		})
	}
	// Refused with 429 (rate limited), the key is not what refused it: no
	// verdict on scope.
	r, k := mwKeycheck(t, &mwAPI{global: true, refuse: 429}, "bird", "first,scope", "--other-account", "Authorization: AccessKey acct_b")
	if c := kcResult(t, k, "scope"); r.Code != 3 || c.Status != report.Inconclusive || !strings.Contains(c.Why, "rate limited") {
		t.Fatalf("429: exit %d, scope %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
	}
	// The same API with keys per account passes.
	r, k = mwKeycheck(t, &mwAPI{refuse: 400}, "bird", "first,scope", "--other-account", "Authorization: AccessKey acct_b")
	if c := kcResult(t, k, "scope"); r.Code != 0 || c.Status != report.Pass {
		t.Fatalf("keys per account: exit %d, scope %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
	}
}

// A middleware that stores every answer, 5xx included, replays the stored
// 500 through the app's error handler (a fresh request_id: the body differs
// in bytes) and marks it Idempotent-Replayed: true. The marker is enough to
// judge the 5xx kept: a fail under bird (a 5xx is not kept), a pass under
// stripe (a stored 500 is replayed) — never "inconclusive, give --fail-body".
func TestKeycheckReplayed5xxWithMarkerIsJudged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile string
		code    int
		status  report.Status
	}{{"bird", 1, report.Fail}, {"stripe", 0, report.Pass}} {
		t.Run(tc.profile, func(t *testing.T) {
			t.Parallel()
			r, k := mwKeycheck(t, &mwAPI{storeErrors: true}, tc.profile, "first,5xx", "--fail-body", `{"text":"fail {{nonce}}","fail_once":true}`)
			c := kcResult(t, k, "5xx")
			if r.Code != tc.code || c.Status != tc.status || !strings.Contains(c.Observed, "the retry carries Idempotent-Replayed: true") {
				t.Fatalf("exit %d, 5xx %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
			}
			if tc.status == report.Fail && !strings.Contains(c.Why, "a stored 500 was replayed") {
				t.Fatalf("5xx should say the 500 was replayed: %s", c.Why)
			}
		})
	}
}

// A middleware mounted on every route (app.use) stores a keyed GET's
// answer and replays it, unmarked: two GETs with one key both show the
// first's count, though a message was created between them. safe-get
// sends the keyless GET that shows the real count, and fails; the same
// middleware on mutating routes only passes.
func TestKeycheckKeyedGetStoredIsCaught(t *testing.T) {
	t.Parallel()
	r, k := mwKeycheck(t, &mwAPI{everyRoute: true, unmarked: true}, "bird", "first,safe-get")
	c := kcResult(t, k, "safe-get")
	if r.Code != 1 || c.Status != report.Fail || !strings.Contains(c.Why, "stored under the key and replayed") {
		t.Fatalf("every route: exit %d, safe-get %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
	}
	r, k = mwKeycheck(t, &mwAPI{unmarked: true}, "bird", "first,safe-get")
	if c := kcResult(t, k, "safe-get"); r.Code != 0 || c.Status != report.Pass {
		t.Fatalf("mutating routes only: exit %d, safe-get %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
	}
	// A read replica that lags one GET behind: the keyed GET after the
	// operation still shows the old count, the keyless one the new; the
	// keyed GET asked again shows it too, so nothing was stored.
	r, k = mwKeycheck(t, &mwAPI{unmarked: true, staleGets: 1}, "bird", "first,safe-get")
	if c := kcResult(t, k, "safe-get"); r.Code != 0 || c.Status != report.Pass {
		t.Fatalf("a lagging replica: exit %d, safe-get %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Every sentence of a verdict follows what it observed (issue 30 §5): a
// long key whose repeat answered 500 is not said to have got the stored
// answer; work that appeared only once the store came back is not said to
// have been done without it; a request that got no answer is not "no
// answer (no answer (…))"; and a wait that timed out says how long.
func TestKeycheckExplanationsFollowObservations(t *testing.T) {
	t.Parallel()
	t.Run("key-length", func(t *testing.T) {
		t.Parallel()
		r, k := mwKeycheck(t, &mwAPI{longKeyBroken: true}, "bird", "first,key-length")
		c := kcResult(t, k, "key-length")
		if !strings.Contains(c.Observed, "the same key 500") {
			t.Fatalf("observed: %s", c.Observed)
		}
		if r.Code != 1 || c.Status != report.Fail || strings.Contains(c.Why, "got the stored answer") || !strings.Contains(c.Why, "again answered 500, not the stored answer 201") {
			t.Fatalf("exit %d, key-length %s: %s | %s", r.Code, c.Status, c.Why, c.Observed)
		}
	})
	for _, tc := range []struct {
		name    string
		dropped bool
		status  report.Status
		why     string
	}{
		{"held", false, report.Warn, "did the work only once the store came back"},
		{"dropped", true, report.Warn, "while the store was down, not 503; nothing was done"},
	} {
		t.Run("outage "+tc.name, func(t *testing.T) {
			t.Parallel()
			down := filepath.Join(t.TempDir(), "down")
			_, k := mwKeycheck(t, &mwAPI{down: down, dropped: tc.dropped}, "bird", "first,outage",
				"--store-down-cmd", "touch "+down, "--store-up-cmd", "rm -f "+down, "--timeout", "1s")
			c := kcResult(t, k, "outage")
			if c.Status != tc.status || !strings.Contains(c.Why, tc.why) || strings.Contains(c.Why, "without its idempotency store") ||
				strings.Contains(c.Why, "no answer (no answer") || !strings.Contains(c.Observed, "after 1s, the longest keycheck waits while the store is down") {
				t.Fatalf("outage %s: %s | %s", c.Status, c.Why, c.Observed)
			}
		})
	}
}

// An API whose store client ends the process when the store goes down
// (testdata/keycheck/dies_with_store.py, as a Redis client without an error
// listener does) is a finding of outage, not a setup error: it fails,
// saying the API stopped answering and whether it came back; the checks
// before it keep their results. Under --serve the API is started again and
// the checks after it run; without, they are not run, and the report says
// the probe was served by the dead API.
func TestKeycheckAPIThatDiesWithItsStore(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "keycheck", "dies_with_store.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, serve := range []bool{true, false} {
		t.Run(fmt.Sprintf("serve=%v", serve), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			addr, down := freeAddr(t), filepath.Join(dir, "redis-down")
			api := fmt.Sprintf("exec %s %s %s %s", py, script, addr, down)
			args := []string{"keycheck", "--to", "http://" + addr + "/v1/messages", "--body", `{"text":"hi {{nonce}}"}`,
				"--checks", "first,replay,outage,expiry", "--ttl", "200ms", "--timeout", "2s",
				"--store-down-cmd", "touch " + down, "--store-up-cmd", "rm -f " + down,
				"--probe-http", "count=http://" + addr + "/debug/count", "--settle", "50ms", "--json", "-q"}
			if serve {
				args = append(args, "--serve", api)
			} else {
				p := exec.Command("sh", "-c", api)
				if err := p.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { p.Process.Kill(); p.Wait() })
				waitListening(t, addr, nil)
			}
			r := runBin(t, filepath.Join(dir, "h.db"), nil, args...)
			var k report.KeyCheck
			if err := json.Unmarshal([]byte(r.Stdout), &k); err != nil || r.Code != 1 {
				t.Fatalf("want exit 1 and a report, got %d: %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
			}
			c := kcResult(t, &k, "outage")
			if c.Status != report.Fail || !strings.Contains(c.Why, "stopped answering when its idempotency store went away") {
				t.Fatalf("outage %s: %s | %s", c.Status, c.Why, c.Observed)
			}
			if rp := kcResult(t, &k, "replay"); rp.Status != report.Pass {
				t.Fatalf("replay, before the outage, keeps its result: %s %s", rp.Status, rp.Why)
			}
			ex := kcResult(t, &k, "expiry")
			if serve {
				if !strings.Contains(c.Observed, "started it again") || ex.Status == report.Skip {
					t.Fatalf("under --serve the API is started again and expiry runs: %s | expiry %s %s", c.Observed, ex.Status, ex.Why)
				}
				return
			}
			if !strings.Contains(c.Observed, "probe count: served by the API itself") || ex.Status != report.Skip || !strings.Contains(ex.Why, "did not come back") {
				t.Fatalf("without --serve: %s | expiry %s %s", c.Observed, ex.Status, ex.Why)
			}
		})
	}
}

// An API whose operation depends on state (a unique text, as a signup's
// email is) refuses a second operation with the same body: --reset-cmd
// restores it before each check that starts from a fresh operation (and
// each burst round), not once per keycheck, so lost and burst are judged,
// not refused.
func TestKeycheckResetRunsBeforeEachFreshCheck(t *testing.T) {
	t.Parallel()
	reset := filepath.Join(t.TempDir(), "reset")
	base := serveHandler(t, &mwAPI{unique: true, reset: reset})
	r := runBin(t, filepath.Join(t.TempDir(), "h.db"), nil, "keycheck", "--to", base+"/v1/messages", "--body", `{"text":"welcome ada@example.com"}`,
		"-H", "Authorization: AccessKey acct_a", "--checks", "first,replay,lost,burst,safe-get",
		"--reset-cmd", "touch "+reset, "--probe-http", "count="+base+"/debug/count", "--settle", "50ms", "--json", "-q")
	var k report.KeyCheck
	if err := json.Unmarshal([]byte(r.Stdout), &k); err != nil {
		t.Fatalf("no report (exit %d): %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	for _, c := range k.Checks {
		if c.Status != report.Pass {
			t.Errorf("%s: %s: %s | %s", c.Name, c.Status, c.Why, c.Observed)
		}
	}
	if r.Code != 0 || !strings.Contains(strings.Join(k.Notes, "\n"), "--reset-cmd ran 5 times") {
		t.Fatalf("exit %d, notes %q", r.Code, k.Notes)
	}
}
