package check

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

func vals(ss ...string) []probe.Value {
	out := make([]probe.Value, len(ss))
	for i, s := range ss {
		out[i] = probe.TextValue(s)
	}
	return out
}

func TestJudgeOnce(t *testing.T) {
	names := []string{"sql: balance"}
	e := deltas(names, vals("0"), vals("5000")) // E = +5000
	eText := deltas([]string{"http: status"}, vals("pending"), vals("active"))
	for _, tc := range []struct {
		name          string
		e             []report.ProbeDelta
		before, after []probe.Value
		exact         bool
		want          report.Status
		msg           string
	}{
		{"once", e, vals("5000"), vals("10000"), false, report.Pass, "equals"},
		{"twice", e, vals("5000"), vals("15000"), false, report.Fail, "processed 2 times (1 copy extra)"},
		{"twenty times", e, vals("0"), vals("100000"), true, report.Fail, "processed 20 times"},
		{"beyond E, not a multiple", e, vals("0"), vals("7500"), false, report.Fail, "want 5000"},
		{"nothing, state may matter", e, vals("5000"), vals("5000"), false, report.NotJudged, "--reset-cmd"},
		{"nothing, exact: lost work", e, vals("5000"), vals("5000"), true, report.Fail, "work was lost"},
		{"less than E, exact", e, vals("0"), vals("2500"), true, report.Fail, "want 5000"},
		{"less than E, not exact", e, vals("0"), vals("2500"), false, report.NotJudged, "not judged"},
		{"no rows before counts as 0", e, vals(probe.NoRows), vals("5000"), true, report.Pass, ""},
		{"text changed: not judged, never passed", eText, vals("pending"), vals("active"), true, report.NotJudged, "not a number"},
		{"text unchanged, exact", eText, vals("active"), vals("active"), true, report.Fail, "lost"},
		{"text unchanged, not exact", eText, vals("active"), vals("active"), false, report.NotJudged, "not judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := names
			if tc.e[0].Delta == nil {
				n = []string{"http: status"}
			}
			j := judgeOnce(n, tc.e, tc.before, tc.after, tc.exact, false, nil, nil, "--reset-cmd")
			if j.status != tc.want {
				t.Fatalf("status %s, want %s (%s)", j.status, tc.want, j.message)
			}
			all := j.message + strings.Join(j.warnings, ";")
			if !strings.Contains(all, tc.msg) {
				t.Fatalf("message %q lacks %q", all, tc.msg)
			}
		})
	}
}

func TestJudgeOnceTextWithReset(t *testing.T) {
	names := []string{"sql: status"}
	e := deltas(names, vals(probe.NoRows), vals("status=active"))
	j := judgeOnce(names, e, vals(probe.NoRows), vals("status=active"), true, true, vals(probe.NoRows), vals("status=active"), "--reset-cmd")
	if j.status != report.Pass {
		t.Fatalf("same state as one delivery after a reset: %s %s", j.status, j.message)
	}
	j = judgeOnce(names, e, vals(probe.NoRows), vals("status=active, n=2"), true, true, vals(probe.NoRows), vals("status=active"), "--reset-cmd")
	if j.status != report.NotJudged {
		t.Fatalf("a different text is not judged: %s", j.status)
	}
}

func TestTamperBodyKeepsJSONValidAndID(t *testing.T) {
	body, err := os.ReadFile("testdata/invoice.json")
	if err != nil {
		t.Fatal(err)
	}
	id := "evt_1QxTamperTest000000000001"
	out, desc, ok := tamperBody(body, id)
	if !ok {
		t.Fatal("no byte changed")
	}
	if !json.Valid(out) || !strings.Contains(string(out), id) || desc == "" {
		t.Fatalf("tampered body invalid or id touched: %s (%s)", out, desc)
	}
	diff := 0
	for i := range body {
		if body[i] != out[i] {
			diff++
		}
	}
	if len(out) != len(body) || diff != 1 {
		t.Fatalf("want exactly one byte changed, got %d", diff)
	}
	// A body whose only value is the id cannot be tampered without touching it.
	if _, _, ok := tamperBody([]byte(`{"id":"evt_1"}`), "evt_1"); ok {
		t.Fatal("changed the id")
	}
	// Non-JSON bodies (form-encoded) change one letter or digit.
	if out, _, ok := tamperBody([]byte("a=1&b=2"), ""); !ok || string(out) == "a=1&b=2" {
		t.Fatalf("form body: %q %v", out, ok)
	}
}

func TestChangedColumns(t *testing.T) {
	b := probe.TextValue("customer=cus_1, status=active, updated_at=1")
	a := probe.TextValue("customer=cus_1, status=active, updated_at=2")
	if h := columnHint(b, a); !strings.Contains(h, "only updated_at changed") || !strings.Contains(h, "SELECT customer, status") {
		t.Fatalf("hint %q", h)
	}
	if h := columnHint(b, probe.TextValue(a.Text+"\ncustomer=cus_2, status=active, updated_at=3")); h != "" {
		t.Fatalf("a new row is not a column change: %q", h)
	}
	if h := columnHint(b, probe.TextValue("customer=cus_1, status=canceled, updated_at=2")); !strings.Contains(h, "only status, updated_at changed") {
		t.Fatalf("hint %q", h)
	}
}

// A form body is tampered inside a value, never in a name or a %XX escape:
// GitHub's form deliveries carry the whole event in payload=, and renaming
// it to qayload made a handler that never verifies answer 400 and pass.
func TestTamperBodyChangesAFormValue(t *testing.T) {
	payload := url.QueryEscape(`{"ref":"refs/heads/main","after":"9f8b","repository":{"id":1296269,"full_name":"octocat/Hello-World"}}`)
	for _, tc := range []struct {
		body, id, field string
	}{
		{"payload=" + payload, "", "payload"},
		{"ToCountry=US&MessageSid=SM1234567890abcdef&Body=Hello+there&NumMedia=0", "SM1234567890abcdef", "ToCountry"},
	} {
		out, desc, ok := tamperBody([]byte(tc.body), tc.id)
		if !ok || !strings.Contains(desc, "form value") {
			t.Fatalf("%s: %q, %v", tc.body, desc, ok)
		}
		before, err1 := url.ParseQuery(tc.body)
		after, err2 := url.ParseQuery(string(out))
		if err1 != nil || err2 != nil || len(before) != len(after) {
			t.Fatalf("%s: the form's names changed: %v → %v", tc.body, before, after)
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Fatalf("%s: name %q renamed (%s)", tc.body, k, desc)
			}
		}
		if tc.id != "" && !strings.Contains(string(out), tc.id) {
			t.Fatalf("%s: the id was touched (%s)", tc.body, desc)
		}
		if tc.field == "payload" && !json.Valid([]byte(after.Get("payload"))) {
			t.Fatalf("the payload's JSON is no longer valid: %s (%s)", after.Get("payload"), desc)
		}
	}
}
