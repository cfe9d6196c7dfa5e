package report

import (
	"bytes"
	"strings"
	"testing"
)

// A merged report (report merge) has no run id: its HTML page is titled
// without "run 0", as its text and Markdown reports are; a recorded run's
// page names its run.
func TestHTMLTitleLeavesOutAnUnrecordedRun(t *testing.T) {
	for _, tc := range []struct {
		id   int64
		want string
	}{{0, "<title>hookreplay check: pass</title>"}, {7, "<title>hookreplay check · run 7: pass</title>"}} {
		var buf bytes.Buffer
		c := &Check{RunID: tc.id, Target: "http://127.0.0.1:8080/webhooks", Verdict: VerdictPass}
		if err := HTML(&buf, c, nil); err != nil {
			t.Fatal(err)
		}
		if s := buf.String(); !strings.Contains(s, tc.want) || strings.Contains(s, "run 0") {
			t.Errorf("run id %d: want %q and no \"run 0\" in the page; title line: %q", tc.id, tc.want, titleLine(s))
		}
	}
	var buf bytes.Buffer
	if err := KeyCheckHTML(&buf, &KeyCheck{Method: "POST", Target: "http://127.0.0.1:9/charges", Profile: "stripe", Verdict: VerdictPass}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "run 0") {
		t.Errorf("keycheck page without a run names run 0: %q", titleLine(buf.String()))
	}
}

func titleLine(s string) string {
	if i := strings.Index(s, "<title>"); i >= 0 {
		s = s[i:]
		if j := strings.Index(s, "\n"); j >= 0 {
			s = s[:j]
		}
	}
	return s
}
