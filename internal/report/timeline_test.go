package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// raceRecords is what the store holds of a check whose burst of 20 copies
// of one fresh event credited 20 times, with a control event in between,
// and of a crash trial: a copy killed mid-handling, its retry after the
// restart. body is every answer's body.
func raceRecords(t0 time.Time, body string) (*Check, TimelineRecords) {
	ms := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Millisecond))) }
	num := func(f float64) *float64 { return &f }
	var as []*store.Attempt
	var rds []*store.ProbeReading
	read := func(phase, point string, at time.Time, v float64) {
		rds = append(rds, &store.ProbeReading{DeliveryID: 1, Phase: phase, Point: point, Probe: "balance",
			Value: fmt.Sprint(v), Numeric: num(v), ReadAt: at, SettleFrom: at.Add(-100 * time.Millisecond)})
	}
	read("burst", "quiet before the phase", ms(0), 5000)
	as = append(as, &store.Attempt{DeliveryID: 1, Phase: "control", Copy: 1, EventID: "evt_control", SentAt: ms(1),
		CompletedAt: ms(1.1), Latency: 10 * time.Millisecond, Status: 200, ResponseBody: []byte(body)})
	read("burst", "round 1 before", ms(200), 10000)
	for i := 1; i <= 20; i++ {
		sent := ms(201 + float64(i)*0.01)
		as = append(as, &store.Attempt{DeliveryID: 1, Phase: "burst", Copy: i, EventID: "evt_burst", SentAt: sent,
			CompletedAt: ms(202), Latency: 12 * time.Millisecond, Status: 200, ResponseBody: []byte(body)})
	}
	read("burst", "round 1 after", ms(330), 110000)
	read("crash", "trial 1 before", ms(400), 110000)
	killed := &store.Attempt{DeliveryID: 1, Phase: "crash", Copy: 1, EventID: "evt_crash", SentAt: ms(401), CompletedAt: ms(401.2),
		Err: "read answer: EOF", Edit: "handler killed 2ms after the request's last byte (mid-handling)",
		Detail: map[string]any{store.DetailKilledAt: ms(403).UTC().Format(time.RFC3339Nano), store.DetailRestartedAt: ms(450).UTC().Format(time.RFC3339Nano)}}
	retry := &store.Attempt{DeliveryID: 1, Phase: "crash", Copy: 2, EventID: "evt_crash", SentAt: ms(451), CompletedAt: ms(451.1),
		Latency: 5 * time.Millisecond, Status: 200, Edit: "provider's retry after the restart"}
	as = append(as, killed, retry)
	read("crash", "trial 1 after restart", ms(600), 120000)
	c := &Check{RunID: 7, Target: "http://127.0.0.1:1/hook", Verdict: VerdictFail, Probes: []string{"balance"},
		Deliveries: []DeliveryResult{{DeliveryID: 1, Provider: "stripe", EventType: "invoice.paid", Phases: []PhaseResult{
			{Phase: "burst", Status: Fail, Message: "burst 1: the event was processed 20 times", Attempts: 20,
				Violations: []Violation{{EventID: "evt_burst", Probe: "balance", Before: "10000", After: "110000", Want: "15000", Message: "the event was processed 20 times"}}},
			{Phase: "crash", Status: Fail, Message: "1 trial",
				Violations: []Violation{{Copy: 2, EventID: "evt_crash", Probe: "balance", Before: "110000", After: "120000", Want: "115000", Message: "processed twice"}}},
		}}}}
	return c, TimelineRecords{Run: &store.Run{ID: 7}, Attempts: as, Readings: rds}
}

func TestTimelineModel(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	c, rec := raceRecords(t0, `{"ok":true}`)
	tl := NewTimeline(c, rec)
	var burst, crash, control *TimelineSection
	for i := range tl.Sections {
		switch s := &tl.Sections[i]; s.Phase {
		case "burst":
			burst = s
		case "crash":
			crash = s
		case "control":
			control = s
		}
	}
	if burst == nil || crash == nil || control == nil {
		t.Fatalf("sections: %+v", tl.Sections)
	}
	if burst.Status != Fail || burst.Title != "delivery 1 · stripe invoice.paid" || len(burst.Copies) != 20 {
		t.Fatalf("burst section: %+v", burst)
	}
	for _, cp := range burst.Copies {
		if !cp.Violating || cp.Round != 1 || cp.Outcome != "2xx" {
			t.Fatalf("burst copy: %+v", cp)
		}
	}
	if len(burst.Bursts) != 1 || !burst.Bursts[0].Equal(t0.Add(202*time.Millisecond)) {
		t.Fatalf("burst's last-byte moment: %v", burst.Bursts)
	}
	ch := burst.Probes[0].Changes
	// 5000 → 10000 is the control event's (sent between the readings), not the burst's;
	// 10000 → 110000 is every burst copy's and more than the want: extra.
	if len(ch) != 2 || ch[0].Other != "control" || ch[0].Extra || ch[0].Label() != "+5000 by control copy 1" ||
		!ch[1].Extra || ch[1].Label() != "+100000 by copies 1–20" {
		t.Fatalf("burst changes: %+v", ch)
	}
	if burst.Probes[0].Want != "15000" || len(burst.Settles) != 3 {
		t.Fatalf("burst want %q, settles %+v", burst.Probes[0].Want, burst.Settles)
	}
	if len(crash.Marks) != 2 || crash.Marks[0].Kind != "kill" || crash.Marks[1].Kind != "restart" {
		t.Fatalf("crash marks: %+v", crash.Marks)
	}
	if k := crash.Copies[0]; k.Outcome != OutcomeKilled || !k.End.Equal(t0.Add(403*time.Millisecond)) || k.Violating {
		t.Fatalf("killed copy: %+v", k)
	}
	if r := crash.Copies[1]; !r.Violating || r.Outcome != "2xx" {
		t.Fatalf("retry: %+v", r)
	}
	// Both copies of the trial carried its event: the +10000 is theirs, beyond the want.
	if ch := crash.Probes[0].Changes; len(ch) != 1 || ch[0].Label() != "+10000 by copies 1–2" || !ch[0].Extra {
		t.Fatalf("crash changes: %+v", ch)
	}
	if !crash.Start.Equal(t0.Add(300*time.Millisecond)) || !crash.End.Equal(t0.Add(600*time.Millisecond)) {
		t.Fatalf("crash span %v – %v", crash.Start.Sub(t0), crash.End.Sub(t0))
	}
}

// svgDoc is the part of an SVG timeline the tests look at.
type svgDoc struct {
	Groups []svgGroup `xml:"g"`
}

type svgGroup struct {
	Class  string     `xml:"class,attr"`
	Title  string     `xml:"title"`
	Texts  []string   `xml:"text"`
	Groups []svgGroup `xml:"g"`
}

// htmlSVGs parses every timeline of an HTML report as XML.
func htmlSVGs(t *testing.T, page string) []svgDoc {
	t.Helper()
	var out []svgDoc
	for _, m := range regexp.MustCompile(`(?s)<svg class="tl".*?</svg>`).FindAllString(page, -1) {
		var d svgDoc
		if err := xml.Unmarshal([]byte(m), &d); err != nil {
			t.Fatalf("a timeline is not well-formed SVG: %v\n%s", err, m)
		}
		out = append(out, d)
	}
	return out
}

func countClass(gs []svgGroup, class string) int {
	n := 0
	for _, g := range gs {
		for _, c := range strings.Fields(g.Class) {
			if c == class {
				n++
			}
		}
		n += countClass(g.Groups, class)
	}
	return n
}

func TestHTMLDrawsTheTimeline(t *testing.T) {
	c, rec := raceRecords(time.Unix(1_800_000_000, 0), `{"ok":true}`)
	c.Timeline = NewTimeline(c, rec)
	var buf bytes.Buffer
	if err := Write(&buf, FormatHTML, c, false); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	svgs := htmlSVGs(t, page)
	// burst, its round drawn closer, control, crash, in the order they began
	if len(svgs) != 4 || strings.Count(page, "<section ") != 3 {
		t.Fatalf("%d timelines in %d sections, want 4 in 3", len(svgs), strings.Count(page, "<section "))
	}
	zoom := svgs[1].Groups
	if countClass(zoom, "copy") != 20 || countClass(zoom, "burst") != 1 || !strings.Contains(page, `data-ref="s1c20"`) || !strings.Contains(page, `id="s1c20"`) {
		t.Errorf("the burst round's zoom: %d copies, %d last-byte lines, or its rows do not name the section's", countClass(zoom, "copy"), countClass(zoom, "burst"))
	}
	for _, g := range zoom {
		if strings.Contains(g.Class, "copy") && g.Title != "" {
			t.Errorf("a zoom's copy repeats its tip: %q", g.Title)
			break
		}
	}
	burst := svgs[0].Groups
	if countClass(burst, "copy") != 20 || countClass(burst, "viol") != 20 || countClass(burst, "burst") != 1 ||
		countClass(burst, "extra") != 1 || countClass(burst, "settle") != 3 {
		t.Errorf("burst timeline: %d copies, %d violating, %d burst lines, %d extra changes, %d settle windows",
			countClass(burst, "copy"), countClass(burst, "viol"), countClass(burst, "burst"), countClass(burst, "extra"), countClass(burst, "settle"))
	}
	crash := svgs[3].Groups
	if countClass(crash, "okilled") != 1 || countClass(crash, "kill") != 1 || countClass(crash, "restart") != 1 {
		t.Errorf("crash timeline: %d killed copies, %d kill marks, %d restart marks", countClass(crash, "okilled"), countClass(crash, "kill"), countClass(crash, "restart"))
	}
	for _, want := range []string{"Content-Security-Policy", "default-src &#39;none&#39;", "the event was processed 20 times", "fix: ", "<b>copies 1–20</b>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// A copy's tip: its request, its answer and its body.
	var tip string
	for _, g := range burst {
		if strings.Contains(g.Class, "copy") {
			tip = g.Title
			break
		}
	}
	if !strings.Contains(tip, "copy 1 · event evt_burst") || !strings.Contains(tip, "answered 200 after 12ms") || !strings.Contains(tip, `body: {"ok":true}`) {
		t.Errorf("a copy's tip: %q", tip)
	}
}

// TestHTMLEscapesOutsideText: a handler's answer, an event id and a
// probe's value that hold markup come out as text; the page's only script
// is its own and nothing in it points outside.
func TestHTMLEscapesOutsideText(t *testing.T) {
	evil := `</title></svg><script>alert(1)</script><img src="http://203.0.113.9/x.png" onerror="alert(2)">`
	c, rec := raceRecords(time.Unix(1_800_000_000, 0), evil)
	rec.Attempts[0].EventID = evil
	rec.Readings[0].Value = evil
	rec.Readings[0].Numeric = nil
	c.Target = evil
	c.Deliveries[0].Phases[0].Message = evil
	c.Timeline = NewTimeline(c, rec)
	var buf bytes.Buffer
	if err := HTML(&buf, c, c.Timeline); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script elements, want 1 (the page's own)", n)
	}
	for _, bad := range []string{"<img", `onerror="`, `src="http`, "</title></svg>"} {
		if strings.Contains(page, bad) {
			t.Errorf("outside text reached the page as markup: %q", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the answer's text is not shown escaped")
	}
	htmlSVGs(t, page) // still well-formed
}

// TestHTMLStaysSmall: a 20-delivery check with a burst of 20 (three
// rounds) per delivery and answers of 2 KiB renders under 1 MB.
func TestHTMLStaysSmall(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	c := &Check{RunID: 1, Verdict: VerdictFail, Probes: []string{"balance"}}
	var rec TimelineRecords
	body := strings.Repeat(`{"status":"credited","id":"0123456789abcdef"}`, 48)
	at := t0
	n := 1.0
	for d := int64(1); d <= 20; d++ {
		dr := DeliveryResult{DeliveryID: d, Provider: "stripe", EventType: "invoice.paid"}
		for _, ph := range []struct {
			name   string
			copies int
		}{{"first", 1}, {"dups", 9}, {"control", 1}, {"burst", 60}, {"lost", 4}} {
			rec.Readings = append(rec.Readings, &store.ProbeReading{DeliveryID: d, Phase: ph.name, Point: "before", Probe: "balance", Value: "1", Numeric: &n, ReadAt: at, SettleFrom: at.Add(-time.Second)})
			for i := 1; i <= ph.copies; i++ {
				at = at.Add(time.Millisecond)
				rec.Attempts = append(rec.Attempts, &store.Attempt{DeliveryID: d, Phase: ph.name, Copy: i, EventID: fmt.Sprintf("evt_%d_%s_%d", d, ph.name, (i-1)/20),
					SentAt: at, CompletedAt: at, Latency: time.Millisecond, Status: 200, ResponseBody: []byte(body)})
				if ph.name == "dups" {
					rec.Readings = append(rec.Readings, &store.ProbeReading{DeliveryID: d, Phase: ph.name, Point: fmt.Sprintf("after copy %d", i), Probe: "balance", Value: "1", Numeric: &n, ReadAt: at.Add(time.Millisecond)})
				}
			}
			at = at.Add(time.Second)
			rec.Readings = append(rec.Readings, &store.ProbeReading{DeliveryID: d, Phase: ph.name, Point: "after", Probe: "balance", Value: "1", Numeric: &n, ReadAt: at, SettleFrom: at.Add(-time.Second)})
			dr.Phases = append(dr.Phases, PhaseResult{Phase: ph.name, Status: Pass, Attempts: ph.copies})
		}
		c.Deliveries = append(c.Deliveries, dr)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, c, NewTimeline(c, rec)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "<section "); n != 100 {
		t.Fatalf("%d sections, want 100", n)
	}
	htmlSVGs(t, buf.String())
	if buf.Len() >= 1<<20 {
		t.Fatalf("the HTML report of a 20-delivery check is %d bytes, want under 1 MB", buf.Len())
	}
	t.Logf("20 deliveries, 1500 copies: %d bytes", buf.Len())
}

// TestMarkdownDrawsFailedPhases: a failed phase's section in the Markdown
// report carries its timeline as a Mermaid gantt chart (GitHub renders
// it); a passed one does not; outside text cannot break out of the fence.
func TestMarkdownDrawsFailedPhases(t *testing.T) {
	c, rec := raceRecords(time.Unix(1_800_000_000, 0), "ok")
	c.Deliveries[0].EventType = "invoice.paid```\n<script>:x;#"
	c.Timeline = NewTimeline(c, rec)
	var buf bytes.Buffer
	if err := Markdown(&buf, c); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	blocks := regexp.MustCompile("(?s)```mermaid\n(.*?)```\n").FindAllStringSubmatch(md, -1)
	if len(blocks) != 2 { // burst and crash failed
		t.Fatalf("%d mermaid blocks, want 2:\n%s", len(blocks), md)
	}
	burst, crash := blocks[0][1], blocks[1][1]
	for _, want := range []string{"gantt\n", "    title burst — delivery 1 · stripe invoice.paid", "dateFormat x\n", "axisFormat %L ms\n", "section copies\n", "    copy 1 200 ✗ :crit, 301, 314\n",
		"    round 1 last bytes :milestone, 302, 303\n", "section balance\n", "    +5000 by control copy 1 :milestone, 300, 301\n",
		"    +100000 by copies 1–20 ✗ :crit, milestone, 430, 431\n"} {
		if !strings.Contains(burst, want) {
			t.Errorf("the burst's chart lacks %q:\n%s", want, burst)
		}
	}
	for _, want := range []string{"    copy 1 killed :active, 101, 103\n", "    copy 2 200 ✗ :crit, 151, 156\n", "    handler killed (copy 1) :milestone, 103, 104\n", "    handler restarted (copy 1) :milestone, 150, 151\n"} {
		if !strings.Contains(crash, want) {
			t.Errorf("the crash's chart lacks %q:\n%s", want, crash)
		}
	}
	for _, b := range blocks {
		if strings.ContainsAny(strings.SplitN(b[1], "\n", 3)[1], "`;#<") {
			t.Errorf("outside text reached a chart's title as it was: %q", strings.SplitN(b[1], "\n", 3)[1])
		}
	}
	c.Deliveries[0].Phases[1].Status = Pass
	buf.Reset()
	if err := Markdown(&buf, c); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "```mermaid"); n != 1 {
		t.Errorf("%d charts once crash passed, want 1", n)
	}
}

// TestBlocksDrawsASection: the block-character timeline fits the width,
// marks the violating copies and the selected one, and keeps each copy's
// attempt for a view to open.
func TestBlocksDrawsASection(t *testing.T) {
	c, rec := raceRecords(time.Unix(1_800_000_000, 0), "ok")
	for i, a := range rec.Attempts {
		a.ID = int64(i + 1)
	}
	tl := NewTimeline(c, rec)
	burst := tl.Section(1, "burst")
	lines := burst.Blocks(Colors(false), 80, 3)
	var text []string
	copies := 0
	for _, l := range lines {
		if w := len([]rune(l.Text)); w > 80 {
			t.Errorf("line wider than 80 (%d): %q", w, l.Text)
		}
		if l.AttemptID != 0 {
			copies++
		}
		text = append(text, l.Text)
	}
	all := strings.Join(text, "\n")
	if copies != 20 {
		t.Errorf("%d copy lines, want 20:\n%s", copies, all)
	}
	for _, want := range []string{"✗ delivery 1 · stripe invoice.paid — burst", "✗ copies 1–20: the event was processed 20 times",
		"▶ copy 2  ✗", "  copy 1  ✗", "╎ last bytes", "+100000 by copies 1–20 ✗ extra", "balance", "░", "110000"} {
		if !strings.Contains(all, want) {
			t.Errorf("the blocks lack %q:\n%s", want, all)
		}
	}
	crash := strings.Join(func() []string {
		var s []string
		for _, l := range tl.Section(1, "crash").Blocks(Colors(false), 60, 0) {
			s = append(s, l.Text)
		}
		return s
	}(), "\n")
	if !strings.Contains(crash, "✕") || !strings.Contains(crash, "↑") || !strings.Contains(crash, "killed") {
		t.Errorf("the crash blocks lack the kill, the restart or the killed copy:\n%s", crash)
	}
	t.Logf("\n%s\n%s", all, crash)
}

// TestTimelineOrderIsOneSection: the order phase sends copies of several
// deliveries and reads between them; its timeline is one section, as its
// result is one, and each copy's tip names its delivery.
func TestTimelineOrderIsOneSection(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	n := 1.0
	rec := TimelineRecords{Run: &store.Run{ID: 1}}
	for i, d := range []int64{2, 1, 1, 2} {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		rec.Attempts = append(rec.Attempts, &store.Attempt{ID: int64(i + 1), DeliveryID: d, Phase: "order", Copy: i + 1, SentAt: at, CompletedAt: at, Status: 200})
		rec.Readings = append(rec.Readings, &store.ProbeReading{DeliveryID: d, Phase: "order", Point: "after", Probe: "state", Value: "1", Numeric: &n, ReadAt: at.Add(time.Millisecond)})
	}
	rec.Readings = append(rec.Readings, &store.ProbeReading{Phase: "order", Point: "final", Probe: "state", Value: "2", ReadAt: t0.Add(time.Second)})
	c := &Check{Order: &PhaseResult{Phase: "order", Status: Fail, Violations: []Violation{{Message: "orderings ended in different states"}}}}
	tl := NewTimeline(c, rec)
	if len(tl.Sections) != 1 || tl.Sections[0].Phase != "order" || tl.Sections[0].Status != Fail || len(tl.Sections[0].Copies) != 4 || len(tl.Sections[0].Probes[0].Steps) != 5 {
		t.Fatalf("order timeline: %+v", tl.Sections)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, c, tl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "copy 1 of delivery 2") {
		t.Error("an order copy's tip does not name its delivery")
	}
}

// TestKeyCheckTimelineMarksEffectsBeyondOnePerKey: in a failed keycheck
// burst, +20 by 20 copies of one key is extra (one operation, E = +1), and
// in the passing first check +1 by its one copy is not.
func TestKeyCheckTimelineMarksEffectsBeyondOnePerKey(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	num := func(f float64) *float64 { return &f }
	rec := TimelineRecords{Run: &store.Run{ID: 1}}
	read := func(check string, ms int, v float64) {
		rec.Readings = append(rec.Readings, &store.ProbeReading{Phase: check, Point: "p", Probe: "count", Value: fmt.Sprint(v), Numeric: num(v), ReadAt: t0.Add(time.Duration(ms) * time.Millisecond)})
	}
	read("first", 0, 0)
	rec.Attempts = append(rec.Attempts, &store.Attempt{ID: 1, Phase: "first", Copy: 1, EventID: "k1", SentAt: t0.Add(time.Millisecond), Status: 201})
	read("first", 100, 1)
	read("burst", 200, 1)
	for i := 1; i <= 20; i++ {
		rec.Attempts = append(rec.Attempts, &store.Attempt{ID: int64(1 + i), Phase: "burst", Copy: i, EventID: "k2", SentAt: t0.Add(201 * time.Millisecond), Status: 201})
	}
	read("burst", 300, 21)
	k := &KeyCheck{Checks: []KeyCheckResult{{Name: "first", Status: Pass}, {Name: "burst", Status: Fail, Observed: "201 ×20", Why: "check-then-insert"}}}
	tl := NewKeyCheckTimeline(k, rec)
	if ch := tl.Section(0, "first").Probes[0].Changes; len(ch) != 1 || ch[0].Extra {
		t.Errorf("first: %+v", ch)
	}
	if ch := tl.Section(0, "burst").Probes[0].Changes; len(ch) != 1 || !ch[0].Extra || ch[0].Label() != "+20 by copies 1–20" {
		t.Errorf("burst: %+v", ch)
	}
}

// TestTimelineChangeNotChargedToAnotherDelivery: deliveries checked side by
// side have probes of their own; a change in one's readings is never named
// for the other's copies in flight then.
func TestTimelineChangeNotChargedToAnotherDelivery(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	num := func(f float64) *float64 { return &f }
	rec := TimelineRecords{Run: &store.Run{ID: 1}}
	for i, v := range []float64{1, 2} {
		rec.Readings = append(rec.Readings, &store.ProbeReading{DeliveryID: 1, Phase: "first", Point: "p", Probe: "n", Value: fmt.Sprint(v), Numeric: num(v), ReadAt: t0.Add(time.Duration(i) * 100 * time.Millisecond)})
	}
	rec.Attempts = append(rec.Attempts, &store.Attempt{ID: 1, DeliveryID: 2, Phase: "dups", Copy: 2, EventID: "e", SentAt: t0.Add(50 * time.Millisecond), Status: 200})
	tl := NewTimeline(&Check{}, rec)
	ch := tl.Section(1, "first").Probes[0].Changes
	if len(ch) != 1 || ch[0].Other != "" || len(ch[0].Copies) != 0 || ch[0].Label() != "+1 with no copy in flight" {
		t.Fatalf("delivery 1's change: %+v (%s)", ch, ch[0].Label())
	}
}

// Readings of no delivery in a per-delivery phase are a group's (check's
// group testing): their section says so and carries no delivery's result.
func TestTimelineGroupReadingsAreNoDeliverys(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	n := 3.0
	rec := TimelineRecords{
		Attempts: []*store.Attempt{{ID: 1, DeliveryID: 2, Phase: "dups", Copy: 2, SentAt: t0, CompletedAt: t0, Status: 200}},
		Readings: []*store.ProbeReading{{DeliveryID: 0, Phase: "dups", Point: "group: after delivery 2's copies", Probe: "count", Value: "3", Numeric: &n, ReadAt: t0.Add(time.Millisecond)}},
	}
	c := &Check{Deliveries: []DeliveryResult{{DeliveryID: 2, Phases: []PhaseResult{{Phase: "dups", Status: Pass}}}}}
	tl := NewTimeline(c, rec)
	if len(tl.Sections) != 2 {
		t.Fatalf("sections: %+v", tl.Sections)
	}
	for _, s := range tl.Sections {
		switch s.DeliveryID {
		case 0:
			if s.Title != GroupReadings || s.Status != "" || len(s.Copies) != 0 {
				t.Errorf("group section: %+v", s)
			}
		case 2:
			if s.Status != Pass || len(s.Probes) != 0 {
				t.Errorf("delivery 2's section took the group's reading: %+v", s)
			}
		}
	}
}
