package e2e

// End-to-end tests of the check reports through the real binary: a real
// check of the example wallet handler writes every --report format, and each
// file is parsed the way its consumer would (encoding/xml for JUnit CI
// parsers, encoding/json for scripts) and compared with a re-rendering from
// the JSON report and from the run stored in the database.

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// reportJUnit is JUnit XML as CI parsers read it.
type reportJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Classname string  `xml:"classname,attr"`
			Name      string  `xml:"name,attr"`
			Time      float64 `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func reportRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func reportRender(t *testing.T, f report.Format, c *report.Check) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Write(&buf, f, c, false); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReportAllFormatsFromARealCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	checkStripeDelivery(t, db)
	url, dsn := checkWallet(t, wallet.Naive)

	summary := filepath.Join(dir, "step_summary.md")
	if err := os.WriteFile(summary, []byte("# Build\n\nearlier steps wrote this\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GITHUB_STEP_SUMMARY=" + summary}
	paths := map[report.Format]string{
		report.FormatJSON:  filepath.Join(dir, "reports", "check.json"),
		report.FormatJUnit: filepath.Join(dir, "reports", "junit.xml"),
		report.FormatText:  filepath.Join(dir, "reports", "check.txt"),
	}
	r := runBinEnv(t, env, db, nil, append([]string{"check", "--last"}, append(checkArgs(url, dsn, "--phases", "first,dups,burst,tamper,latency"),
		"--report", "json="+paths[report.FormatJSON], "--report", "junit="+paths[report.FormatJUnit],
		"--report", "md="+summary, "--report", "text="+paths[report.FormatText])...)...)
	if r.Code != 1 {
		t.Fatalf("check of the naive wallet: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}

	// The terminal report (NO_COLOR): plain, the violation located, a hint, the verdict.
	// An unnamed probe is called sql1; its full text is in the header, once.
	if n := strings.Count(r.Stdout, checkBalanceSQL); n != 1 {
		t.Errorf("the probe's SQL is shown %d times, want once (in the header):\n%s", n, r.Stdout)
	}
	for _, want := range []string{"✓ first", "✗ dups", "copy 2", "probes: sql1 = sql: " + checkBalanceSQL, "probe sql1: before 5000",
		"fix: the handler did the work again for an event id it had already handled", "FAIL  ", "exit 1: "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "\x1b[") {
		t.Errorf("text report has colour with NO_COLOR:\n%q", r.Stdout)
	}
	if got := string(reportRead(t, paths[report.FormatText])); got != r.Stdout {
		t.Errorf("--report text=FILE differs from the report on stdout:\n%s\n---\n%s", got, r.Stdout)
	}

	// JSON: the stable schema, decodable into the model and re-rendered identically.
	raw := reportRead(t, paths[report.FormatJSON])
	var c report.Check
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("json report: %v\n%s", err, raw)
	}
	if c.SchemaVersion != report.SchemaVersion || c.Verdict != report.VerdictFail || len(c.Deliveries) != 1 {
		t.Fatalf("json report: schema %d verdict %q deliveries %d", c.SchemaVersion, c.Verdict, len(c.Deliveries))
	}
	var dups *report.PhaseResult
	for i, p := range c.Deliveries[0].Phases {
		if p.Phase == "dups" {
			dups = &c.Deliveries[0].Phases[i]
		}
	}
	if dups == nil || dups.Status != report.Fail || len(dups.Violations) == 0 ||
		dups.Violations[0].Copy != 2 || !strings.Contains(dups.Violations[0].Hint, "already handled") {
		t.Fatalf("dups in the json report: %+v", dups)
	}
	if got := reportRender(t, report.FormatJSON, &c); !bytes.Equal(got, raw) {
		t.Error("the json report does not re-render to itself")
	}

	// JUnit: parses, one testcase per phase, the failure carries the violation.
	x := reportRead(t, paths[report.FormatJUnit])
	var ju reportJUnit
	if err := xml.Unmarshal(x, &ju); err != nil {
		t.Fatalf("junit report is not XML: %v\n%s", err, x)
	}
	if len(ju.Suites) != 1 || ju.Tests != len(c.Deliveries[0].Phases) || ju.Failures < 1 || ju.Suites[0].Failures != ju.Failures {
		t.Fatalf("junit counts: %+v", ju)
	}
	failed := map[string]bool{}
	for _, tc := range ju.Suites[0].Cases {
		if tc.Classname != "hookreplay.stripe.invoice.payment_succeeded" {
			t.Errorf("classname %q", tc.Classname)
		}
		if tc.Failure != nil {
			failed[tc.Name] = true
			if tc.Failure.Message == "" || !strings.Contains(tc.Failure.Text, "fix: ") {
				t.Errorf("failure of %s without message or fix: %+v", tc.Name, tc.Failure)
			}
		}
	}
	if !failed["dups"] {
		t.Errorf("dups is not a failed testcase: %s", x)
	}
	if got := reportRender(t, report.FormatJUnit, &c); !bytes.Equal(got, x) {
		t.Error("junit rendered from the json report differs from --report junit")
	}

	// Markdown: appended to $GITHUB_STEP_SUMMARY after what earlier steps wrote.
	md := string(reportRead(t, summary))
	rest, ok := strings.CutPrefix(md, "# Build\n\nearlier steps wrote this\n\n")
	if !ok {
		t.Fatalf("step summary was replaced, not appended to:\n%s", md)
	}
	// The failed phase's timeline is drawn from the store's records (a
	// Mermaid chart after its violations); the JSON report has none.
	mermaid := regexp.MustCompile("(?s)\n```mermaid\ngantt\n.*?```\n")
	failedPhases := 0
	for _, p := range c.Deliveries[0].Phases {
		if p.Status == report.Fail {
			failedPhases++
		}
	}
	if n := len(mermaid.FindAllString(rest, -1)); n != failedPhases {
		t.Errorf("markdown has %d timelines, want one per failed phase (%d):\n%s", n, failedPhases, rest)
	}
	if mermaid.ReplaceAllString(rest, "") != string(reportRender(t, report.FormatMarkdown, &c)) {
		t.Errorf("markdown report differs from a rendering of the json report:\n%s", rest)
	}
	for _, want := range []string{"## hookreplay check: ❌ fail", "| delivery | first | dups |", "❌", "**Fix:**"} {
		if !strings.Contains(rest, want) {
			t.Errorf("markdown lacks %q:\n%s", want, rest)
		}
	}

	// The stored run re-renders to the same report without re-running.
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.GetRun(context.Background(), c.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var stored report.Check
	if err := json.Unmarshal(run.Summary, &stored); err != nil {
		t.Fatalf("stored summary: %v", err)
	}
	if got := reportRender(t, report.FormatText, &stored); string(got) != r.Stdout {
		t.Errorf("text rendered from the stored run differs from the one printed:\n%s", got)
	}
}

func TestReportPassingCheckJUnitHasNoFailures(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	checkStripeDelivery(t, db)
	url, dsn := checkWallet(t, wallet.Fixed)
	junit := filepath.Join(dir, "junit.xml")
	md := filepath.Join(dir, "summary.md")
	r := runBin(t, db, nil, append([]string{"check", "--last"}, append(checkArgs(url, dsn, "--phases", "first,dups,burst"),
		"--report", "junit="+junit, "--report", "markdown="+md)...)...)
	if r.Code != 0 {
		t.Fatalf("check of the fixed wallet: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "PASS  all 3 judged phases passed") || !strings.Contains(r.Stdout, "exit 0: ") {
		t.Errorf("text verdict:\n%s", r.Stdout)
	}
	var ju reportJUnit
	if err := xml.Unmarshal(reportRead(t, junit), &ju); err != nil {
		t.Fatal(err)
	}
	if ju.Tests != 3 || ju.Failures != 0 || len(ju.Suites) != 1 || ju.Suites[0].Skipped != 0 {
		t.Errorf("junit of a passing check: %+v", ju)
	}
	if m := string(reportRead(t, md)); !strings.HasPrefix(m, "## hookreplay check: ✅ pass") || strings.Contains(m, "❌") {
		t.Errorf("markdown of a passing check:\n%s", m)
	}
}

func TestReportBadTargetIsAUsageError(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	checkStripeDelivery(t, db)
	for _, tt := range []struct{ arg, want string }{
		{"pdf=out.pdf", `report format "pdf" is not one of text, json, junit, markdown, html`},
		{"junit=", "empty path"},
	} {
		r := runBin(t, db, nil, "check", "--last", "--to", "http://127.0.0.1:9/x", "--probe-cmd", "echo 1", "--report", tt.arg)
		if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("--report %s: exit %d %q, want 2 and %q", tt.arg, r.Code, r.Stderr, tt.want)
		}
	}
}
