//go:build docscreens

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTUIScreens regenerates the screens of docs/tui.md from the real
// binary: the TUI in a 100×30 tmux terminal under NO_COLOR, over the TUI's
// fixture deliveries plus an invoice captured live for the demo's naive
// wallet handler. Each block after a "<!-- screen: NAME -->" line is
// replaced by the capture of that name (trailing spaces and runs of empty
// lines removed). Run it with
//
//	go test -tags docscreens ./e2e -run TestTUIScreens
func TestTUIScreens(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "d.db")
	if r := runBin(t, db, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	wallet := filepath.Join(dir, "wallet.db")
	_, handler := demoServeStart(t, "naive", "--db", wallet, "--quiet")
	_, addr := captureStart(t, db)
	body := demoServeEvent(t, "evt_1QwalletInvoicePaid")
	req := fmt.Sprintf("POST /webhooks/stripe HTTP/1.1\r\nHost: %s\r\nUser-Agent: Stripe/1.0 (+https://stripe.com/docs/webhooks)\r\nContent-Type: application/json; charset=utf-8\r\nStripe-Signature: t=1764687600,v1=00\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	captureExchange(t, addr, []byte(req), 1)

	shots := map[string]string{}
	shot := func(tm *tmuxTerm, name string, subs ...string) {
		shots[name] = tm.waitFor(subs...)
	}
	tm := tuiTmuxSize(t, 100, 30, fmt.Sprintf("cd %s && NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db d.db tui --to %s/webhooks/stripe; sleep 600", dir, binPath, handler))
	shot(tm, "list", "1/7 deliveries", "> 7 ")
	tm.keys("/")
	tm.text("provider:stripe")
	shot(tm, "filtering", "/provider:stripe")
	tm.keys("Enter")
	shot(tm, "filtered", "1/3 deliveries matching provider:stripe")
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")
	tm.keys("Enter")
	shot(tm, "headers", "[1 headers]", "Content-Length: ")
	for i, tab := range []string{"body", "raw", "response", "signature"} {
		tm.keys(fmt.Sprint(i + 2))
		shot(tm, tab, "["+fmt.Sprint(i+2)+" "+tab)
	}
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")
	tm.keys("o")
	shot(tm, "replay-form", "> target URL", "re-sign")
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")
	tm.keys("r")
	shot(tm, "replay-now", "recorded as run 1")
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")
	tm.keys("Enter")
	tm.waitFor("[1 headers]")
	tm.keys("6")
	shot(tm, "attempts", "[6 attempts (1)]")
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")
	tm.keys("y")
	shot(tm, "copy", "copy delivery 7 as:")
	tm.keys("Escape")
	tm.keys("E")
	tm.waitFor("edit a copy of delivery 7")
	tm.keys("Down", "Down", "Down", "Down", "Down", "Enter", "C-u")
	tm.text("t=1764687600,v1=edited")
	tm.keys("Enter")
	shot(tm, "edit", "changed: ")
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")
	tm.keys("c")
	tm.waitFor("> target URL", "probe kind       sql")
	tm.keys("Tab", "Tab")
	tm.text("SELECT COALESCE(SUM(balance), 0) FROM wallets")
	tm.keys("Tab")
	tm.text("sqlite:" + wallet)
	tm.keys("Tab", "Tab")
	tm.text("first,dups")
	shot(tm, "check-form", "> phases")
	tm.keys("Enter")
	shot(tm, "check", "check delivery 7: verdict fail")
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")
	tm.keys("R")
	shot(tm, "runs", "> 2     check", "  1     replay")
	tm.keys("Enter")
	shot(tm, "run", "run 2 · ")
	tm.keys("?")
	shot(tm, "help", "any key closes this help")

	doc := filepath.Join("docs", "tui.md") // TestMain runs in the repository root
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := replaceScreens(string(text), shots, strings.NewReplacer(dir+"/", "", dir, "."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %d screens of %s", len(shots), doc)
}

var screenMarker = regexp.MustCompile("(?m)^<!-- screen: ([a-z-]+) -->\n```text\n(?s:.*?)\n```\n")

// replaceScreens puts each named capture in the block after its marker.
func replaceScreens(doc string, shots map[string]string, paths *strings.Replacer) (string, error) {
	var missing []string
	out := screenMarker.ReplaceAllStringFunc(doc, func(block string) string {
		name := screenMarker.FindStringSubmatch(block)[1]
		s, ok := shots[name]
		if !ok {
			missing = append(missing, name)
			return block
		}
		return "<!-- screen: " + name + " -->\n```text\n" + tidyScreen(paths.Replace(s)) + "\n```\n"
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no capture named %v", missing)
	}
	return out, nil
}

// tidyScreen drops trailing spaces and keeps one empty line of a run.
func tidyScreen(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		l = strings.TrimRight(l, " ")
		if l == "" && len(lines) > 0 && lines[len(lines)-1] == "" {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
