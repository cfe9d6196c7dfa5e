package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/testkit"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// pgE2EPassword is put in the test store's URL (the server trusts any):
// no output of any command may show it.
const pgE2EPassword = "pgE2e-Secret-Pw-7731"

// pgStore returns the URL of a fresh hookreplay store on the test Postgres
// (its own schema), with pgE2EPassword in it.
func pgStore(t *testing.T, prefix string) string {
	t.Helper()
	u, err := url.Parse(testkit.PostgresSchema(t, prefix))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pgE2EPassword)
	return u.String()
}

func pgNoPassword(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, pgE2EPassword) {
		t.Fatalf("%s shows the store's password:\n%s", what, text)
	}
}

// The whole path on a Postgres store, through the binary: capture → list →
// show --raw → replay → check → runs → tui, and send --via into the running
// capture, which the TUI shows live. No output shows the URL's password.
func TestPostgresE2EFlow(t *testing.T) {
	t.Parallel() // waits on processes, not on CPU: see TestMain
	db := pgStore(t, "e2eflow")
	p, addr := captureStart(t, db)
	req, err := verify.BuildDelivery("stripe", "invoice.payment_succeeded", checkSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw := req.Encode(addr, req.Target)
	id := captureAckID(t, captureExchange(t, addr, raw, 1)[0])

	listed := captureList(t, db)
	if len(listed) != 1 || listed[0].ID != id || listed[0].Provider != "stripe" || listed[0].EventType != "invoice.payment_succeeded" {
		t.Fatalf("list --json: %+v", listed)
	}
	captureCmp(t, db, id, raw)

	url, wdsn := checkWallet(t, wallet.Fixed)
	r := runBin(t, db, nil, "replay", strconv.FormatInt(id, 10), "--to", url, "-n", "2", "--secret", checkSecret)
	if r.Code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	pgNoPassword(t, "replay", r.Stdout+r.Stderr)
	r, c := checkRunJSON(t, db, checkArgs(url, wdsn, strconv.FormatInt(id, 10), "--phases", "first,dups")...)
	if r.Code != 0 || c == nil || c.Verdict != "pass" {
		t.Fatalf("check on the fixed wallet: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	pgNoPassword(t, "check", r.Stdout+r.Stderr)
	r = runBin(t, db, nil, "runs", "--json")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("runs --json: %d runs, %v\n%s\n%s", len(runs), err, r.Stdout, r.Stderr)
	}
	pgNoPassword(t, "runs --json", r.Stdout)

	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db '%s' tui", binPath, db))
	tm.waitFor("invoice.payment_succeeded")
	start := time.Now()
	r = runBin(t, "", nil, "send", "--provider", "github", "--event", "push", "--secret", "s3cr3t",
		"--to", "http://localhost:1/webhooks/github", "--via", "http://"+addr)
	if r.Code != 0 {
		t.Fatalf("send --via: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	s := tm.waitFor("push")
	t.Logf("the TUI showed the delivery sent through capture %s after the send began", time.Since(start).Round(time.Millisecond))
	pgNoPassword(t, "the TUI", s)
	tm.keys("q")

	p.stop(5 * time.Second)
	stdout, stderr := p.Output()
	pgNoPassword(t, "capture", stdout+stderr)
	if !strings.Contains(stderr, "into postgres://") {
		t.Fatalf("capture does not say where it stores:\n%s", stderr)
	}
}

// Byte-exact JSONL between the stores: SQLite → Postgres → SQLite through
// export | import, and every export is the same bytes (ids included: the
// stores are fresh), but for the origin import records.
func TestPostgresE2EJSONLBetweenStores(t *testing.T) {
	t.Parallel() // waits on processes, not on CPU: see TestMain
	dir := t.TempDir()
	src, back := filepath.Join(dir, "src.db"), filepath.Join(dir, "back.db")
	pg := pgStore(t, "e2ejsonl")
	for _, f := range []string{"testdata/export/handwritten.jsonl"} {
		if r := runBin(t, src, mustRead(t, f), "import", "-", "--format", "jsonl"); r.Code != 0 {
			t.Fatalf("import %s: %s", f, r.Stderr)
		}
	}
	// A capture with bytes JSON cannot hold as text (Latin-1 header, NUL
	// and invalid UTF-8 in the body).
	_, addr := captureStart(t, src)
	body := "{\"x\":\"\xff\x00\xe9\"}"
	odd := fmt.Sprintf("POST /odd?q=%%ff HTTP/1.1\r\nHost: h\r\nX-Name: Jos\xe9\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	captureAckID(t, captureExchange(t, addr, []byte(odd), 1)[0])
	for _, f := range []string{"chunked_trailers.http", "repeated_headers.http", "odd_case_order.http"} {
		captureExchange(t, addr, captureFixture(t, f), 1)
	}

	export := func(db string) []byte {
		t.Helper()
		r := runBin(t, db, nil, "export", "--format", "jsonl")
		if r.Code != 0 {
			t.Fatalf("export from %s: exit %d: %s", db, r.Code, r.Stderr)
		}
		return []byte(r.Stdout)
	}
	first := export(src)
	if n := bytes.Count(first, []byte("\n")); n < 5 {
		t.Fatalf("only %d deliveries exported", n)
	}
	if r := runBin(t, pg, first, "import", "-", "--format", "jsonl"); r.Code != 0 {
		t.Fatalf("import into Postgres: exit %d: %s", r.Code, r.Stderr)
	}
	second := export(pg)
	// import records where a delivery came from (origin): the one field
	// allowed to differ from the first export.
	unmarked := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(`,"origin":"jsonl:stdin"`), nil) }
	if !bytes.Equal(unmarked(first), unmarked(second)) {
		t.Fatalf("the Postgres store exports other bytes than it imported:\n%s\n---\n%s", first, second)
	}
	if r := runBin(t, back, second, "import", "-", "--format", "jsonl"); r.Code != 0 {
		t.Fatalf("import back into SQLite: exit %d: %s", r.Code, r.Stderr)
	}
	if third := export(back); !bytes.Equal(second, third) {
		t.Fatalf("SQLite → Postgres → SQLite changed the export:\n%s\n---\n%s", first, third)
	}
	// And the raw bytes of the odd capture, through show --raw on Postgres.
	captureCmp(t, pg, 2, []byte(odd))
}

// kill -9 of a capture writing to Postgres under load loses nothing it
// acknowledged (the same load and checks as on SQLite).
func TestPostgresE2EKill9LosesNoAcknowledgedDelivery(t *testing.T) {
	t.Parallel()
	captureKill9(t, pgStore(t, "e2ekill"))
}

// A hookreplay store in a schema a newer hookreplay migrated is refused by
// every command with one clear line; the URL's password is not in it.
func TestPostgresE2ETooNewSchema(t *testing.T) {
	t.Parallel() // waits on processes, not on CPU: see TestMain
	db := pgStore(t, "e2enew")
	if r := runBin(t, db, nil, "list"); r.Code != 0 {
		t.Fatalf("list on a new store: exit %d: %s", r.Code, r.Stderr)
	}
	u, _ := url.Parse(db)
	schema := u.Query().Get("search_path")
	testkit.PostgresExec(t, db, "UPDATE "+schema+".hookreplay_schema SET version = version + 1")
	r := runBin(t, db, nil, "list")
	if r.Code != 2 || !strings.Contains(r.Stderr, "newer than this hookreplay") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("list on a newer schema: exit %d\n%s", r.Code, r.Stderr)
	}
	pgNoPassword(t, "the refusal", r.Stderr)
}

// HOOKREPLAY_DB set to a Postgres URL is the store of every command, and
// --help, which shows the variable's value as --db's default, shows it
// without the password.
func TestPostgresE2EEnvURL(t *testing.T) {
	t.Parallel() // waits on processes, not on CPU: see TestMain
	db := pgStore(t, "e2eenv")
	run := func(stdin []byte, args ...string) (string, string, int) {
		t.Helper()
		c := exec.Command(binPath, args...)
		c.Env = binEnv("HOOKREPLAY_DB=" + db)
		c.Stdin = bytes.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	if _, stderr, code := run(mustRead(t, "testdata/export/handwritten.jsonl"), "import", "-", "--format", "jsonl"); code != 0 {
		t.Fatalf("import with HOOKREPLAY_DB: exit %d: %s", code, stderr)
	}
	if l := captureList(t, db); len(l) == 0 {
		t.Fatal("the import did not go to the store HOOKREPLAY_DB names")
	}
	stdout, stderr, code := run(nil, "list", "--help")
	if code != 0 || !strings.Contains(stdout, "postgres://hookreplay@") {
		t.Fatalf("list --help: exit %d, --db's default not the URL:\n%s%s", code, stdout, stderr)
	}
	pgNoPassword(t, "--help", stdout+stderr)
}
