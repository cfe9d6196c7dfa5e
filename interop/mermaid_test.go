//go:build interop

package interop

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// TestMermaidRendersTheMarkdownTimelines: the Mermaid charts the Markdown
// report draws for failed phases (a burst of 30 copies, a crash with a kill
// and a restart, an event type full of Mermaid's and Markdown's separators)
// parse and render with the Mermaid GitHub uses (interop/mermaid, exact
// version), in headless Chromium.
func TestMermaidRendersTheMarkdownTimelines(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found (.ci/run installs the Debian package chromium)")
		}
		t.Skip("chromium not found")
	}
	src, err := filepath.Abs("mermaid")
	if err != nil {
		t.Fatal(err)
	}
	modules, err := npmCI(src)
	if err != nil {
		t.Fatal(err)
	}
	md := mermaidMarkdown(t)
	blocks := regexp.MustCompile("(?s)```mermaid\n(.*?)```\n").FindAllStringSubmatch(md, -1)
	if len(blocks) != 2 {
		t.Fatalf("%d charts in the Markdown, want 2:\n%s", len(blocks), md)
	}
	var pres strings.Builder
	for _, b := range blocks {
		fmt.Fprintf(&pres, "<pre class=\"mermaid\">%s</pre>\n", html.EscapeString(b[1]))
	}
	page := filepath.Join(t.TempDir(), "charts.html")
	doc := `<!DOCTYPE html><html><head><meta charset="utf-8"><script src="file://` + filepath.Join(modules, "mermaid", "dist", "mermaid.min.js") + `"></script></head><body>
` + pres.String() + `<pre id="out">pending</pre>
<script>
mermaid.initialize({startOnLoad: false});
(async () => {
  const res = [];
  for (const el of document.querySelectorAll("pre.mermaid")) {
    try { await mermaid.parse(el.textContent); res.push("parsed"); } catch (e) { res.push("error: " + e.message); }
  }
  try { await mermaid.run({querySelector: "pre.mermaid"}); res.push("rendered " + document.querySelectorAll("pre.mermaid svg").length); } catch (e) { res.push("error: " + e.message); }
  // Every task's name as drawn, to compare with the names written.
  document.querySelectorAll("pre.mermaid svg text").forEach(function (t) {
    if (String(t.getAttribute("class")).indexOf("taskText") >= 0) { res.push("task " + t.textContent); }
  });
  document.getElementById("out").textContent = res.join("\n");
})();
</script></body></html>`
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=10000", "--dump-dom", "file://"+page).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`(?s)<pre id="out">(.*?)</pre>`).FindStringSubmatch(string(out))
	if m == nil || !strings.HasPrefix(m[1], "parsed\nparsed\nrendered 2\n") {
		t.Fatalf("Mermaid on the charts: %q\n%s", m, md)
	}
	// Each task is drawn with the name it was written with: no separator
	// in a name (a probe's value holds them) cut it short.
	drawn := map[string]bool{}
	for _, l := range strings.Split(html.UnescapeString(m[1]), "\n") {
		if name, ok := strings.CutPrefix(l, "task "); ok {
			drawn[strings.TrimSpace(name)] = true
		}
	}
	n := 0
	for _, b := range blocks {
		for _, l := range strings.Split(b[1], "\n") {
			name, _, ok := strings.Cut(strings.TrimSpace(l), " :")
			if !ok || strings.HasPrefix(l, "    title") {
				continue
			}
			n++
			if !drawn[name] {
				t.Errorf("task %q is not drawn under its name (drawn: %v)", name, drawn)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d tasks written", n)
	}
}

// mermaidMarkdown is the Markdown report of a check whose burst and crash
// phases failed, with its timeline.
func mermaidMarkdown(t *testing.T) string {
	t0 := time.Unix(1_800_000_000, 0)
	ms := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Millisecond))) }
	num := func(f float64) *float64 { return &f }
	var rec report.TimelineRecords
	// A text probe whose values hold Mermaid's separators: its changes
	// are named by them.
	state := map[float64]string{0: "status: new", 30: "status: done; #1 {ok} %% `x`"}
	read := func(phase string, at time.Time, v float64) {
		rec.Readings = append(rec.Readings, &store.ProbeReading{DeliveryID: 1, Phase: phase, Point: "p", Probe: "balance: a;b#c",
			Value: fmt.Sprint(v), Numeric: num(v), ReadAt: at, SettleFrom: at.Add(-100 * time.Millisecond)},
			&store.ProbeReading{DeliveryID: 1, Phase: phase, Point: "p", Probe: "state", Value: state[v], ReadAt: at})
	}
	read("burst", ms(0), 0)
	for i := 1; i <= 30; i++ {
		rec.Attempts = append(rec.Attempts, &store.Attempt{ID: int64(i), DeliveryID: 1, Phase: "burst", Copy: i, EventID: "evt_b",
			SentAt: ms(1), CompletedAt: ms(1.2), Latency: 12 * time.Millisecond, Status: 200})
	}
	read("burst", ms(200), 30)
	read("crash", ms(300), 30)
	rec.Attempts = append(rec.Attempts,
		&store.Attempt{ID: 31, DeliveryID: 1, Phase: "crash", Copy: 1, EventID: "evt_c", SentAt: ms(301), CompletedAt: ms(301.1), Err: "EOF",
			Detail: map[string]any{store.DetailKilledAt: ms(303).UTC().Format(time.RFC3339Nano), store.DetailRestartedAt: ms(350).UTC().Format(time.RFC3339Nano)}},
		&store.Attempt{ID: 32, DeliveryID: 1, Phase: "crash", Copy: 2, EventID: "evt_c", SentAt: ms(351), CompletedAt: ms(351.1), Latency: time.Millisecond, Status: 200})
	read("crash", ms(500), 30)
	c := &report.Check{RunID: 1, Verdict: report.VerdictFail, Probes: []string{"balance: a;b#c"},
		Deliveries: []report.DeliveryResult{{DeliveryID: 1, Provider: "stripe", EventType: "a:b;c#d`e```{f}%%g<h>", Phases: []report.PhaseResult{
			{Phase: "burst", Status: report.Fail, Violations: []report.Violation{{EventID: "evt_b", Probe: "balance: a;b#c", Before: "0", After: "30", Want: "1", Message: "processed 30 times"}}},
			{Phase: "crash", Status: report.Fail, Violations: []report.Violation{{Copy: 2, Probe: "balance: a;b#c", Before: "30", After: "30", Want: "31", Message: "work lost"}}},
		}}}}
	c.Timeline = report.NewTimeline(c, rec)
	var buf bytes.Buffer
	if err := report.Markdown(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
