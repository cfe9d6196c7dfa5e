package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtures are the check results the golden files render, from testdata/checks.
var fixtures = []string{"pass_all", "fail_dups", "inconclusive", "mixed"}

func loadCheck(t *testing.T, name string) *Check {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "checks", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a typo in a fixture must not silently drop a field
	var c Check
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return &c
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/report -update rewrites it)\n--- got:\n%s\n--- want:\n%s", file, got, want)
	}
}

func TestGolden(t *testing.T) {
	formats := []struct {
		ext    string
		render func(io.Writer, *Check) error
	}{
		{"text", func(w io.Writer, c *Check) error { return Text(w, c, false) }},
		{"color.text", func(w io.Writer, c *Check) error { return Text(w, c, true) }},
		{"json", JSON},
		{"junit.xml", JUnit},
		{"md", Markdown},
	}
	for _, name := range fixtures {
		for _, f := range formats {
			t.Run(name+"."+f.ext, func(t *testing.T) {
				c := loadCheck(t, name)
				before, _ := json.Marshal(c)
				var buf bytes.Buffer
				if err := f.render(&buf, c); err != nil {
					t.Fatal(err)
				}
				after, _ := json.Marshal(c)
				if !bytes.Equal(before, after) {
					t.Error("rendering modified the check")
				}
				golden(t, name+"."+f.ext+".golden", buf.Bytes())
			})
		}
	}
}

func TestTextPlainHasNoEscapes(t *testing.T) {
	for _, name := range fixtures {
		var buf bytes.Buffer
		if err := Text(&buf, loadCheck(t, name), false); err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsRune(buf.Bytes(), 0x1b) {
			t.Errorf("%s: plain text report contains an escape sequence:\n%q", name, buf.String())
		}
		var col bytes.Buffer
		if err := Text(&col, loadCheck(t, name), true); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(col.Bytes(), []byte("\x1b[")) {
			t.Errorf("%s: coloured report has no colour", name)
		}
	}
}

func TestTextContents(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, loadCheck(t, "fail_dups"), false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"✗ dups", "copy 2 (event evt_1QnaiveA): $50 invoice credited $100",
		"probe sql: SELECT balance FROM wallets WHERE id = 1: before 5000, after 10000, want 5000",
		"fix: claim the event id first", "fix: answer duplicates with 2xx", "fix: verify the signature",
		"            ✗ copy 3 (same event id evt_1QnaiveA) called the sink again", "! latency", "– burst", "the sink saw 3 calls", "FAIL", "exit 1:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

func TestJUnitParses(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			c := loadCheck(t, name)
			var buf bytes.Buffer
			if err := JUnit(&buf, c); err != nil {
				t.Fatal(err)
			}
			// Well-formed: every token decodes.
			dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
			for {
				_, err := dec.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("junit output is not well-formed XML: %v\n%s", err, buf.String())
				}
			}
			var got junitSuites
			if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			var tests, failures, skipped int
			for _, r := range c.allPhases() {
				tests++
				switch r.P.Status {
				case Fail:
					failures++
				case Skip, NotJudged, Inconclusive:
					skipped++
				}
			}
			if got.Tests != tests || got.Failures != failures {
				t.Errorf("testsuites counts tests=%d failures=%d, want %d %d", got.Tests, got.Failures, tests, failures)
			}
			if bytes.Contains(buf.Bytes(), []byte("<testsuites name=\"hookreplay check\" tests=\"")) &&
				regexp.MustCompile(`<testsuites [^>]*skipped=`).Match(buf.Bytes()) {
				t.Error("testsuites carries a skipped attribute, which strict JUnit schemas reject")
			}
			var sumTests, sumFail, sumSkip int
			for _, s := range got.Suites {
				n, f, k := 0, 0, 0
				for _, tc := range s.Cases {
					n++
					if tc.Failure != nil {
						f++
						if tc.Failure.Message == "" || tc.Failure.Text == "" {
							t.Errorf("%s/%s: failure without message or details", tc.Classname, tc.Name)
						}
					}
					if tc.Skipped != nil {
						k++
					}
					if !strings.HasPrefix(tc.Classname, "hookreplay.") || tc.Name == "" {
						t.Errorf("testcase classname %q name %q", tc.Classname, tc.Name)
					}
				}
				if n != s.Tests || f != s.Failures || k != s.Skipped {
					t.Errorf("suite %q counts %d/%d/%d, cases say %d/%d/%d", s.Name, s.Tests, s.Failures, s.Skipped, n, f, k)
				}
				sumTests, sumFail, sumSkip = sumTests+n, sumFail+f, sumSkip+k
			}
			if sumTests != got.Tests || sumFail != got.Failures || sumSkip != skipped {
				t.Errorf("totals do not add up: suites say %d/%d/%d, want %d/%d/%d", sumTests, sumFail, sumSkip, got.Tests, got.Failures, skipped)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			c := loadCheck(t, name)
			var first bytes.Buffer
			if err := JSON(&first, c); err != nil {
				t.Fatal(err)
			}
			var back Check
			dec := json.NewDecoder(bytes.NewReader(first.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&back); err != nil {
				t.Fatal(err)
			}
			if back.SchemaVersion != SchemaVersion {
				t.Errorf("schema_version %d", back.SchemaVersion)
			}
			if !reflect.DeepEqual(normalized(c), normalized(&back)) {
				t.Errorf("JSON did not round-trip:\n%s", first.String())
			}
			var second bytes.Buffer
			if err := JSON(&second, &back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Error("JSON of the decoded report differs from the first rendering")
			}
			var generic map[string]any
			if err := json.Unmarshal(first.Bytes(), &generic); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"schema_version", "verdict", "probes", "deliveries"} {
				if _, ok := generic[key]; !ok {
					t.Errorf("JSON report lacks %q", key)
				}
			}
		})
	}
}

func TestJSONFillsDefaults(t *testing.T) {
	c := &Check{Deliveries: []DeliveryResult{{DeliveryID: 1, Phases: []PhaseResult{
		{Phase: "dups", Status: Fail, Violations: []Violation{{Copy: 2, Message: "credited twice", Probe: "p"}}},
	}}}}
	var buf bytes.Buffer
	if err := JSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	var got Check
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != SchemaVersion || got.Verdict != VerdictFail {
		t.Errorf("schema %d verdict %q", got.SchemaVersion, got.Verdict)
	}
	if h := got.Deliveries[0].Phases[0].Violations[0].Hint; h != Hint("dups") {
		t.Errorf("hint %q", h)
	}
	if !strings.Contains(buf.String(), `"probes": []`) || !strings.Contains(buf.String(), `"effect": []`) {
		t.Errorf("empty lists are not []:\n%s", buf.String())
	}
	if c.SchemaVersion != 0 || c.Deliveries[0].Phases[0].Violations[0].Hint != "" {
		t.Error("JSON modified its input")
	}
}

func TestComputeVerdict(t *testing.T) {
	ph := func(s ...Status) *Check {
		c := &Check{Deliveries: []DeliveryResult{{}}}
		for _, x := range s {
			c.Deliveries[0].Phases = append(c.Deliveries[0].Phases, PhaseResult{Phase: "p", Status: x})
		}
		return c
	}
	tests := []struct {
		c    *Check
		want string
		code int
	}{
		{ph(Pass, Pass, Warn, Skip, NotJudged), VerdictPass, 0},
		{ph(Pass, Fail, Inconclusive), VerdictFail, 1},
		{ph(Inconclusive, Skip), VerdictInconclusive, 3},
		{&Check{Order: &PhaseResult{Phase: "order", Status: Fail}}, VerdictFail, 1},
	}
	for i, tt := range tests {
		if got := tt.c.ComputeVerdict(); got != tt.want || ExitCode(got) != tt.code {
			t.Errorf("%d: verdict %q exit %d, want %q %d", i, got, ExitCode(got), tt.want, tt.code)
		}
	}
}

func TestHintFor(t *testing.T) {
	tests := []struct {
		phase string
		v     Violation
		want  string
	}{
		{"dups", Violation{Probe: "sql", Before: "1", After: "2"}, Hint("dups")},
		{"dups", Violation{Status: 500}, dupStatusHint},
		{"lost", Violation{Status: 503}, dupStatusHint},
		{"burst", Violation{Status: 200, Probe: "sql"}, Hint("burst")},
		{"tamper", Violation{Status: 200}, Hint("tamper")},
		{"order", Violation{}, Hint("order")},
		{"crash", Violation{Probe: "x"}, Hint("crash")},
		{"dups", Violation{Hint: "engine's own"}, "engine's own"},
		{"unknown", Violation{}, ""},
	}
	for _, tt := range tests {
		if got := HintFor(tt.phase, tt.v); got != tt.want {
			t.Errorf("HintFor(%s, %+v) = %q, want %q", tt.phase, tt.v, got, tt.want)
		}
	}
	for _, p := range PhaseOrder {
		if Hint(p) == "" {
			t.Errorf("phase %s has no hint", p)
		}
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in      string
		want    Target
		wantErr string
	}{
		{"json=out/report.json", Target{FormatJSON, "out/report.json"}, ""},
		{"junit=report.xml", Target{FormatJUnit, "report.xml"}, ""},
		{"markdown=/tmp/summary.md", Target{FormatMarkdown, "/tmp/summary.md"}, ""},
		{"md=-", Target{FormatMarkdown, "-"}, ""},
		{"text=a=b.txt", Target{FormatText, "a=b.txt"}, ""},
		{"json", Target{FormatJSON, "-"}, ""},
		{"JUnit=r.xml", Target{FormatJUnit, "r.xml"}, ""},
		{"html=x.html", Target{FormatHTML, "x.html"}, ""},
		{"pdf=x.pdf", Target{}, `report format "pdf" is not one of`},
		{"json=", Target{}, "empty path"},
		{"", Target{}, "is not one of"},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseTarget(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestWriteFile(t *testing.T) {
	c := loadCheck(t, "fail_dups")
	dir := t.TempDir()
	for _, f := range Formats {
		path := filepath.Join(dir, "nested", "dir", "report."+string(f))
		if err := WriteFile(f, path, c); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := Write(&want, f, c, false); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: file differs from the rendering", f)
		}
		// Writing again replaces, never appends.
		if err := WriteFile(f, path, c); err != nil {
			t.Fatal(err)
		}
		if again, _ := os.ReadFile(path); !bytes.Equal(again, got) {
			t.Errorf("%s: second write did not replace the file", f)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "nested", "dir")); len(entries) != len(Formats) {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := WriteFile(FormatJSON, dir, c); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("writing over a directory: %v", err)
	}
}

func TestWriteFileAppendsToStepSummary(t *testing.T) {
	sum := filepath.Join(t.TempDir(), "step_summary")
	if err := os.WriteFile(sum, []byte("# earlier step output\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", sum)
	tgt, err := ParseTarget("markdown=" + sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := tgt.Write(io.Discard, loadCheck(t, "pass_all")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(sum)
	if !strings.HasPrefix(string(got), "# earlier step output\n## hookreplay check: ✅ pass") {
		t.Errorf("step summary was not appended to:\n%s", got)
	}
}

func TestTargetWriteStdout(t *testing.T) {
	var buf bytes.Buffer
	tgt, _ := ParseTarget("json=-")
	if err := tgt.Write(&buf, loadCheck(t, "pass_all")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"schema_version\": 1,") {
		t.Errorf("stdout target got %q", buf.String())
	}
}

func TestManyViolationsAreCapped(t *testing.T) {
	c := &Check{Deliveries: []DeliveryResult{{DeliveryID: 1, Phases: []PhaseResult{{Phase: "burst", Status: Fail}}}}}
	for i := 1; i <= 25; i++ {
		c.Deliveries[0].Phases[0].Violations = append(c.Deliveries[0].Phases[0].Violations,
			Violation{Copy: i, Probe: "p", Before: "1", After: "2", Want: "1", Message: "did it again"})
	}
	var text, md, ju bytes.Buffer
	if err := Text(&text, c, false); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, c); err != nil {
		t.Fatal(err)
	}
	if err := JUnit(&ju, c); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if !strings.Contains(out, "and 15 more") || strings.Contains(out, "copy 11") || strings.Count(out, Hint("burst")) != 1 {
			t.Errorf("%s: violations not capped at %d with one hint:\n%s", name, maxViolationsShown, out)
		}
	}
	if !strings.Contains(ju.String(), "copy 25") {
		t.Error("junit does not list every violation")
	}
}

// A handler that only failed to accept an event (first phase) is not told
// it did something twice; a repeat anywhere keeps the usual line.
func TestExitLineNamesWhatFailed(t *testing.T) {
	run := func(phases ...PhaseResult) string {
		c := &Check{Deliveries: []DeliveryResult{{DeliveryID: 1, Phases: phases}}}
		c.Verdict = c.ComputeVerdict()
		var b bytes.Buffer
		if err := Text(&b, c, false); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	onlyFirst := run(PhaseResult{Phase: "first", Status: Fail}, PhaseResult{Phase: "dups", Status: Skip})
	if !strings.Contains(onlyFirst, "exit 1: the handler did not take an event's first delivery") || strings.Contains(onlyFirst, "more than once") {
		t.Errorf("first-only failure:\n%s", onlyFirst)
	}
	dups := run(PhaseResult{Phase: "first", Status: Pass}, PhaseResult{Phase: "dups", Status: Fail})
	if !strings.Contains(dups, "exit 1: the handler did something more than once") {
		t.Errorf("dups failure:\n%s", dups)
	}
}
