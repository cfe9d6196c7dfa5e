package e2e

// The HTML report of real runs through the real binary: a burst race, an
// answer lost and its retry processed again, a crash that loses the work,
// and a keycheck burst race. Each page's timelines are parsed as SVG (XML)
// and checked for what the run did; `runs show ID --report html=` renders
// the same page from the store.

import (
	"encoding/xml"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/demo/idemapi"
)

// htmlGroup is an SVG <g> of a timeline: its class, its tip, its groups.
type htmlGroup struct {
	Class  string      `xml:"class,attr"`
	Title  string      `xml:"title"`
	Texts  []string    `xml:"text"`
	Groups []htmlGroup `xml:"g"`
}

// htmlTimeline is one section of an HTML report: its heading and its SVG.
type htmlTimeline struct {
	Heading string
	Groups  []htmlGroup
}

var (
	htmlSectionRe = regexp.MustCompile(`(?s)<section class="phase [^"]*" id="s\d+">\s*<h3>(.*?)</h3>.*?(<svg class="tl".*?</svg>)`)
	htmlTagRe     = regexp.MustCompile(`<[^>]*>`)
)

// htmlTimelines parses the timelines of the HTML report page.
func htmlTimelines(t *testing.T, page string) []htmlTimeline {
	t.Helper()
	var out []htmlTimeline
	for _, m := range htmlSectionRe.FindAllStringSubmatch(page, -1) {
		var svg struct {
			Groups []htmlGroup `xml:"g"`
		}
		if err := xml.Unmarshal([]byte(m[2]), &svg); err != nil {
			t.Fatalf("timeline %q is not well-formed SVG: %v", m[1], err)
		}
		out = append(out, htmlTimeline{Heading: strings.TrimSpace(htmlTagRe.ReplaceAllString(m[1], "")), Groups: svg.Groups})
	}
	if len(out) == 0 {
		t.Fatalf("no timelines in the page:\n%.2000s", page)
	}
	return out
}

// find returns the timeline whose heading has phase (its last word before the span).
func htmlFind(t *testing.T, tls []htmlTimeline, phase string) htmlTimeline {
	t.Helper()
	for _, tl := range tls {
		if strings.Contains(tl.Heading, "— "+phase+" ") || strings.HasPrefix(strings.TrimLeft(tl.Heading, "✓✗!?–· "), phase+" ") {
			return tl
		}
	}
	var hs []string
	for _, tl := range tls {
		hs = append(hs, tl.Heading)
	}
	t.Fatalf("no timeline of %s in %q", phase, hs)
	return htmlTimeline{}
}

// count counts the groups of tl (at any depth) that have class.
func (tl htmlTimeline) count(class string) int {
	var n func([]htmlGroup) int
	n = func(gs []htmlGroup) int {
		c := 0
		for _, g := range gs {
			for _, f := range strings.Fields(g.Class) {
				if f == class {
					c++
				}
			}
			c += n(g.Groups)
		}
		return c
	}
	return n(tl.Groups)
}

// tips returns the tips of the copies of tl that have class.
func (tl htmlTimeline) tips(class string) []string {
	var out []string
	for _, g := range tl.Groups {
		if strings.Contains(" "+g.Class+" ", " copy ") && strings.Contains(" "+g.Class+" ", " "+class+" ") {
			out = append(out, g.Title)
		}
	}
	return out
}

// htmlReport runs args writing an HTML report, wants exit code, and returns
// the page; it then renders the run again from the store and wants the
// same page.
func htmlReport(t *testing.T, db string, code int, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reports", "run.html")
	r := runBin(t, db, nil, append(args, "--report", "html="+path, "-q")...)
	if r.Code != code {
		t.Fatalf("exit %d, want %d\n%s\n%s", r.Code, code, r.Stdout, r.Stderr)
	}
	page := string(reportRead(t, path))
	for _, want := range []string{"<!DOCTYPE html>", `http-equiv="Content-Security-Policy"`, "default-src &#39;none&#39;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Self-contained: nothing is loaded from anywhere.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"[^"#]`).FindString(page); m != "" {
		t.Errorf("the page loads something: %s", m)
	}
	runs := runBin(t, db, nil, "runs", "--limit", "1")
	id := regexp.MustCompile(`(?m)^(\d+)\s`).FindStringSubmatch(runs.Stdout)
	if id == nil {
		t.Fatalf("runs: %s", runs.Stdout)
	}
	again := runBin(t, db, nil, "runs", "show", id[1], "--report", "html=-")
	if again.Code != 0 || again.Stdout != page {
		t.Errorf("runs show %s --report html=- differs from the run's own page (exit %d)\n%s", id[1], again.Code, again.Stderr)
	}
	return page
}

func TestReportHTMLOfRealRuns(t *testing.T) {
	t.Parallel()
	t.Run("burst race", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "h.db")
		id := checkStripeDelivery(t, db)
		url, dsn := checkWallet(t, wallet.Racy)
		page := htmlReport(t, db, 1, append([]string{"check", fmt.Sprint(id)}, checkArgs(url, dsn, "--phases", "first,dups,burst")...)...)
		tls := htmlTimelines(t, page)
		b := htmlFind(t, tls, "burst")
		if !strings.HasPrefix(b.Heading, "✗") || b.count("copy") < 20 || b.count("viol") < 20 || b.count("burst") < 1 || b.count("extra") < 1 || b.count("settle") < 1 {
			t.Errorf("burst timeline %q: %d copies, %d violating, %d last-byte lines, %d extra effects, %d settle windows",
				b.Heading, b.count("copy"), b.count("viol"), b.count("burst"), b.count("extra"), b.count("settle"))
		}
		if d := htmlFind(t, tls, "dups"); !strings.HasPrefix(d.Heading, "✓") || d.count("copy") != 3 || d.count("viol") != 0 || d.count("extra") != 0 {
			t.Errorf("dups timeline %q: %d copies, %d violating, %d extra", d.Heading, d.count("copy"), d.count("viol"), d.count("extra"))
		}
		if !strings.Contains(page, "the event was processed") || !strings.Contains(page, "fix: ") {
			t.Error("the page lacks the violation and its fix beside the timeline")
		}
	})
	t.Run("lost answer", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "h.db")
		id := checkStripeDelivery(t, db)
		url, dsn := checkWallet(t, wallet.Naive)
		page := htmlReport(t, db, 1, append([]string{"check", fmt.Sprint(id)}, checkArgs(url, dsn, "--phases", "first,lost")...)...)
		l := htmlFind(t, htmlTimelines(t, page), "lost")
		lost := l.tips("olost")
		if !strings.HasPrefix(l.Heading, "✗") || len(lost) == 0 || l.count("viol") == 0 || l.count("extra") == 0 {
			t.Fatalf("lost timeline %q: %d lost copies, %d violating, %d extra", l.Heading, len(lost), l.count("viol"), l.count("extra"))
		}
		if !strings.Contains(lost[0], "(lost)") {
			t.Errorf("a lost copy's tip: %q", lost[0])
		}
		// The retry answered 200 and did the work again: it is the violating copy.
		for _, tip := range l.tips("viol") {
			if !strings.Contains(tip, "answered 200") || !strings.Contains(tip, "retry") {
				t.Errorf("a violating copy of lost is not the answered retry: %q", tip)
			}
		}
	})
	t.Run("crash lost work", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "h.db")
		id := checkStripeDelivery(t, db)
		addr := freeAddr(t)
		walletDB := filepath.Join(t.TempDir(), "wallet.db")
		serve := fmt.Sprintf("exec %s demo serve %s --listen %s --db %s --secret %s --quiet", binPath, wallet.ClaimFirst, addr, walletDB, checkSecret)
		page := htmlReport(t, db, 1, "check", fmt.Sprint(id), "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", checkBalanceSQL,
			"--dsn", "sqlite:"+walletDB, "--secret", checkSecret, "--settle", "100ms", "--settle-max", "3s", "--phases", "first,crash", "--serve", serve)
		waitClosed(t, addr)
		c := htmlFind(t, htmlTimelines(t, page), "crash")
		if !strings.HasPrefix(c.Heading, "✗") || c.count("okilled") == 0 || c.count("kill") == 0 || c.count("restart") == 0 || c.count("viol") == 0 {
			t.Fatalf("crash timeline %q: %d killed copies, %d kill marks, %d restart marks, %d violating",
				c.Heading, c.count("okilled"), c.count("kill"), c.count("restart"), c.count("viol"))
		}
		// The work was lost, never done twice: no change is beyond what its event allows.
		if n := c.count("extra"); n != 0 {
			t.Errorf("crash timeline of a handler that loses work: %d extra effects", n)
		}
		if k := c.tips("okilled"); !strings.Contains(k[0], "the handler was killed") {
			t.Errorf("a killed copy's tip: %q", k[0])
		}
		if !strings.Contains(page, "work was lost") {
			t.Error("the page lacks the crash violation")
		}
	})
	t.Run("keycheck burst", func(t *testing.T) {
		t.Parallel()
		base, down := keycheckAPI(t, idemapi.Race)
		db := filepath.Join(t.TempDir(), "h.db")
		page := htmlReport(t, db, 1, append(keycheckArgs(base, down), "--checks", "replay,burst")...)
		tls := htmlTimelines(t, page)
		b := htmlFind(t, tls, "burst")
		if !strings.HasPrefix(b.Heading, "✗") || b.count("copy") < 2 || b.count("viol") != b.count("copy") || b.count("burst") != 1 || b.count("extra") != 1 {
			t.Fatalf("keycheck burst timeline %q: %d copies, %d violating, %d last-byte lines, %d extra effects",
				b.Heading, b.count("copy"), b.count("viol"), b.count("burst"), b.count("extra"))
		}
		if tips := b.tips("copy"); !strings.Contains(tips[0], "POST /v1/messages") {
			t.Errorf("a keycheck copy's tip lacks its request: %q", tips[0])
		}
		if r := htmlFind(t, tls, "replay"); !strings.HasPrefix(r.Heading, "✓") || r.count("viol") != 0 {
			t.Errorf("replay timeline %q: %d violating", r.Heading, r.count("viol"))
		}
		if !strings.Contains(page, "check-then-insert") {
			t.Error("the page lacks the keycheck's why")
		}
	})
}
