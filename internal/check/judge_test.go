package check

import (
	"encoding/json"
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
