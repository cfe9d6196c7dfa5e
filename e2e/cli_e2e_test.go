package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestCommandLineErrorsE2E: usage errors through the binary are one line in
// hookreplay's words with exit 2, never cobra's or strconv's.
func TestCommandLineErrorsE2E(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	all := strings.Join(verify.ProviderNames(func(verify.Scheme) bool { return true }), ", ")
	sendable := strings.Join(verify.ProviderNames(func(s verify.Scheme) bool { return len(s.Samples()) > 0 }), ", ")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "hookreplay: show needs ID (usage: hookreplay show ID; see 'hookreplay show --help')"},
		{[]string{"replay", "1", "--to", "http://127.0.0.1:1/", "--timeout", "5"}, "hookreplay: --timeout 5: give a unit, e.g. 5s"},
		{[]string{"replay", "1", "--to", "http://127.0.0.1:1/", "-n", "x"}, "hookreplay: --copies x: not a whole number"},
		{[]string{"list", "--limit", "lots"}, "hookreplay: --limit lots: not a whole number"},
		{[]string{"completion", "tcsh"}, "hookreplay: completion tcsh: not a shell hookreplay writes completions for (bash, zsh, fish, powershell)"},
		{[]string{"list", "--provider", "stripee"}, `hookreplay: --provider: unknown provider "stripee" (known: ` + all + `)`},
		{[]string{"send", "--provider", "paypal", "--to", "http://127.0.0.1:1/"}, `hookreplay: --provider: unknown provider "paypal" (known: ` + sendable + `)`},
		{[]string{"send", "--provider", "generic", "--body", "x.json", "--to", "http://127.0.0.1:1/"}, `hookreplay: --provider: unknown provider "generic" (known: ` + sendable + `)`},
		// Unknown flags name the nearest one, as unknown commands do.
		{[]string{"replay", "--lastt", "--to", "3000"}, "hookreplay: unknown flag: --lastt; did you mean --last? (see 'hookreplay replay --help')"},
		{[]string{"capture", "--port", "9000"}, "hookreplay: unknown flag: --port; did you mean --listen? (see 'hookreplay capture --help')"},
		{[]string{"capture", "-listen", "9000"}, "hookreplay: unknown flag -l in -listen; did you mean --listen? (see 'hookreplay capture --help')"},
		{[]string{"list", "--zzzzzz"}, "hookreplay: unknown flag: --zzzzzz (see 'hookreplay list --help')"},
	} {
		r := runBin(t, db, nil, tt.args...)
		if r.Code != 2 || strings.TrimSpace(r.Stderr) != tt.want || r.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, r.Code, r.Stdout, r.Stderr, tt.want)
		}
	}
}

// TestBarePortAddressesE2E: --to takes a bare port with a path, as
// 'stripe listen --forward-to localhost:3000' does.
func TestBarePortAddressesE2E(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Path:
		default:
		}
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, to := range []string{port + "/webhooks/stripe", "localhost:" + port + "/webhooks/stripe"} {
		r := runBin(t, "", nil, "send", "--provider", "stripe", "--event", "invoice.paid", "--secret", "whsec_test", "--to", to)
		if r.Code != 0 {
			t.Fatalf("send --to %s: %+v", to, r)
		}
		if p := <-got; p != "/webhooks/stripe" {
			t.Errorf("send --to %s reached %q", to, p)
		}
	}
}

// TestJSONFieldsJQTemplateE2E: --json FIELDS (space-separated, as gh
// takes it), --jq and --template through the binary; plain --json as before.
func TestJSONFieldsJQTemplateE2E(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	if r := runBin(t, db, nil, "import", filepath.Join("testdata", "export", "handwritten.jsonl")); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--json", "id,event_type"}, "[\n  {\n    \"event_type\": \"issues.opened\",\n    \"id\": 1\n  }\n]\n"},
		{[]string{"list", "--jq", ".[] | .provider + \" \" + .event_id"}, "github d3b07384-d9a7-11ee-8000-000000000001\n"},
		{[]string{"show", "1", "--json", "target"}, "{\n  \"target\": \"/hooks/github\"\n}\n"},
		{[]string{"show", "--json", "target", "1"}, "{\n  \"target\": \"/hooks/github\"\n}\n"},
		{[]string{"show", "1", "--template", "{{.method}} {{.target}}\n"}, "POST /hooks/github\n"},
	} {
		r := runBin(t, db, nil, tt.args...)
		if r.Code != 0 || r.Stdout != tt.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tt.args, r.Code, r.Stdout, r.Stderr, tt.want)
		}
	}
	r := runBin(t, db, nil, "__complete", "show", "")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "1\tissues.opened (github)\n") {
		t.Errorf("delivery ids are not completed: %+v", r)
	}
	r = runBin(t, db, nil, "list", "--json")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "[\n  {\n    \"id\": 1,") {
		t.Errorf("plain --json changed: %+v", r)
	}
	r = runBin(t, db, nil, "runs", "--json", "id", "--limit", "1")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "[]" {
		t.Errorf("runs --json id: %+v", r)
	}
}

// TestRunsShowReportE2E: a stored check re-renders in every format from
// the store, identical to what check itself wrote.
func TestRunsShowReportE2E(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	checkStripeDelivery(t, db)
	url, dsn := checkWallet(t, wallet.Naive)
	orig := map[string]string{}
	args := append([]string{"check", "--last", "--json"}, checkArgs(url, dsn, "--phases", "first,dups")...)
	for _, f := range []string{"text", "junit", "markdown"} {
		orig[f] = filepath.Join(dir, "check."+f)
		args = append(args, "--report", f+"="+orig[f])
	}
	r := runBin(t, db, nil, args...)
	if r.Code != 1 {
		t.Fatalf("check of the naive wallet: %+v", r)
	}
	var c struct {
		RunID int64 `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil || c.RunID == 0 {
		t.Fatalf("check --json: %v %q", err, r.Stdout)
	}
	id := strconv.FormatInt(c.RunID, 10)
	again := map[string]string{}
	args = []string{"runs", "show", id}
	for _, f := range []string{"text", "junit", "markdown"} {
		again[f] = filepath.Join(dir, "again."+f)
		args = append(args, "--report", f+"="+again[f])
	}
	if r := runBin(t, db, nil, args...); r.Code != 0 || !strings.Contains(r.Stdout, "ATTEMPT  PHASE") {
		t.Fatalf("runs show --report FILES (the run view stays on stdout): %+v", r)
	}
	for f := range orig {
		a, _ := os.ReadFile(orig[f])
		b, err := os.ReadFile(again[f])
		if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: runs show --report differs from check --report (%v):\n%s\n---\n%s", f, err, a, b)
		}
	}
	if r2 := runBin(t, db, nil, "runs", "show", id, "--report", "json=-"); r2.Code != 0 || r2.Stdout != r.Stdout {
		t.Errorf("runs show --report json=- differs from check --json: %+v", r2)
	}
	if r := runBin(t, db, nil, "__complete", "runs", "show", ""); r.Code != 0 || !strings.Contains(r.Stdout, id+"\tcheck → "+url) {
		t.Errorf("run ids are not completed: %+v", r)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "show", id, "--report", "pdf=x.pdf"}, `--report pdf=x.pdf: report format "pdf" is not one of text, json, junit, markdown`},
		{[]string{"runs", "show", id, "--report", "text=-", "--report", "json=-"}, "only one report can go to stdout"},
		{[]string{"runs", "show", "999", "--report", "text=-"}, "no run 999"},
	} {
		if r := runBin(t, db, nil, bad.args...); r.Code != 2 || !strings.Contains(r.Stderr, bad.want) {
			t.Errorf("%v: %+v, want exit 2 and %q", bad.args, r, bad.want)
		}
	}
}

// TestPagerNotOnAPipeE2E: with $PAGER set, output to a pipe is not paged.
func TestPagerNotOnAPipeE2E(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	if r := runBin(t, db, nil, "import", filepath.Join("testdata", "export", "handwritten.jsonl")); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	pagers := []string{"PAGER=sed 's/^/paged: /'", "HOOKREPLAY_PAGER=sed 's/^/paged: /'"}
	r := runBinEnv(t, pagers, db, nil, "show", "1")
	if r.Code != 0 || strings.Contains(r.Stdout, "paged: ") || !strings.Contains(r.Stdout, "issues.opened") {
		t.Errorf("show to a pipe: %+v", r)
	}
}

// TestJSONShapingOnReplayAndVerifyE2E: replay and verify share --json FIELDS and --jq.
func TestJSONShapingOnReplayAndVerifyE2E(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	if r := runBin(t, db, nil, "import", filepath.Join("testdata", "export", "handwritten.jsonl")); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	r := runBin(t, db, nil, "replay", "1", "--to", port, "-n", "3", "-q", "--jq", "[.attempts[].status]")
	if r.Code != 0 || r.Stdout != "[200,200,200]\n" {
		t.Errorf("replay --jq: %+v", r)
	}
	r = runBin(t, db, nil, "verify", "1", "--secret", "wrong", "--json", "valid,provider")
	if r.Code != 1 || r.Stdout != "{\n  \"provider\": \"github\",\n  \"valid\": false\n}\n" {
		t.Errorf("verify --json valid,provider: %+v", r)
	}
}
