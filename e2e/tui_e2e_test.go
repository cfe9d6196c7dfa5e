package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tmuxTerm is a terminal emulated by tmux on a private server: the real
// binary runs in it, keys are sent with send-keys and the screen is read with
// capture-pane.
type tmuxTerm struct {
	t      *testing.T
	socket string
}

// tuiTmux starts command in a 120×40 tmux session (skipped loudly when tmux is
// missing, failed under CI=1).
func tuiTmux(t *testing.T, command string) *tmuxTerm {
	t.Helper()
	return tuiTmuxSize(t, 120, 40, command)
}

// tuiTmuxSize is tuiTmux in a w×h terminal.
func tuiTmuxSize(t *testing.T, w, h int, command string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed: the TUI end-to-end test needs it (.ci/run installs it)")
		}
		t.Skip("SKIPPING the TUI end-to-end test: tmux is not installed (apt-get install tmux)")
	}
	tm := &tmuxTerm{t: t, socket: fmt.Sprintf("hookreplay-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	tm.tmux("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-s", "tui", command)
	sock := strings.TrimSpace(tm.tmux("display-message", "-p", "#{socket_path}"))
	t.Cleanup(func() {
		exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
		os.Remove(sock) // tmux leaves its socket file behind
	})
	return tm
}

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys sends tmux key names ("Enter", "Escape", "C-c") or literal text.
func (tm *tmuxTerm) keys(keys ...string) {
	tm.t.Helper()
	tm.tmux(append([]string{"send-keys", "-t", "tui"}, keys...)...)
}

func (tm *tmuxTerm) text(s string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", "tui", "-l", s)
}

func (tm *tmuxTerm) screen() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-t", "tui")
}

// waitFor waits until the screen shows every one of subs.
func (tm *tmuxTerm) waitFor(subs ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen()
		ok := true
		for _, sub := range subs {
			ok = ok && strings.Contains(s, sub)
		}
		if ok {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("the screen never showed %q:\n%s", subs, s)
	return ""
}

// waitGone waits until the screen no longer shows sub.
func (tm *tmuxTerm) waitGone(sub string) string {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		if s = tm.screen(); !strings.Contains(s, sub) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("the screen still shows %q:\n%s", sub, s)
	return ""
}

func TestTUIE2E(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "hookreplay.db")
	if r := runBin(t, db, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	// A buggy handler to replay to and check: the naive wallet credits every
	// copy of an event.
	wallet := filepath.Join(dir, "wallet.db")
	_, handler := demoServeStart(t, "naive", "--db", wallet, "--quiet")
	checkFlags := fmt.Sprintf("--to %s/webhooks/stripe --probe-sql 'SELECT COALESCE(SUM(balance), 0) FROM wallets' --dsn sqlite:%s --phases first,dups -n 3",
		handler, wallet)
	cmdline := fmt.Sprintf("cd %s && NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db %s tui %s; echo \"tui exited $?\"; sleep 600", dir, binPath, db, checkFlags)
	tm := tuiTmux(t, cmdline)
	tm.waitFor("1/6 deliveries", "invoice.payment_succeeded", "app_mention")

	// A delivery captured by a separate process appears live, on top.
	_, addr := captureStart(t, db)
	captureExchange(t, addr, mustRead(t, "testdata/export/github.http"), 1)
	sent := time.Now()
	tm.waitFor("1/7 deliveries", "> 7 ")
	if took := time.Since(sent); took > 2*time.Second {
		t.Errorf("the captured delivery took %s to appear, want about a second at most", took)
	} else {
		t.Logf("a delivery captured by another process appeared after %s", took.Round(10*time.Millisecond))
	}

	// / filters with list's filter language.
	tm.keys("/")
	tm.waitFor("/")
	tm.text("provider:github")
	tm.keys("Enter")
	s := tm.waitFor("1/2 deliveries matching provider:github")
	if strings.Contains(s, "invoice.payment_succeeded") {
		t.Fatalf("the filter kept a stripe delivery:\n%s", s)
	}

	// enter shows the delivery; 3 its exact wire bytes.
	tm.keys("Enter")
	tm.waitFor("[1 headers]")
	tm.keys("3")
	tm.waitFor("[3 raw]", `POST /hooks/github HTTP/1.1\r\n`, `X-GitHub-Event: push\r\n`)
	tm.keys("Escape")
	tm.waitFor("1/2 deliveries matching provider:github")
	tm.keys("Escape")
	tm.waitFor("1/7 deliveries")

	// An invoice for the wallet, captured live.
	body := demoServeEvent(t, "evt_tui_e2e")
	req := fmt.Sprintf("POST /webhooks/stripe HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nStripe-Signature: t=1764687600,v1=00\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	captureExchange(t, addr, []byte(req), 1)
	tm.waitFor("1/8 deliveries", "> 8 ", "evt_tui_e2e")

	// r replays it to the handler at once (--to: it was never sent
	// anywhere); the new attempt appears in the delivery's attempts.
	tm.keys("r")
	tm.waitFor("summary 1 attempt, 1 reached the handler", "recorded as run 1")
	tm.keys("Escape")
	tm.waitFor("1/8 deliveries")
	tm.keys("Enter")
	tm.waitFor("[1 headers]")
	tm.keys("6")
	tm.waitFor("attempts (1)]", "replay")
	tm.keys("Escape")
	tm.waitFor("1/8 deliveries")

	// c checks it: the naive handler fails dups.
	tm.keys("c")
	tm.waitFor("✗ dups", "FAIL")
	tm.keys("Escape")
	tm.waitFor("1/8 deliveries")

	// While it runs: alternate screen, mouse reporting, hidden cursor.
	if got := tm.modes(); got != "alt=1 mouse=1 cursor=0" {
		t.Errorf("terminal modes while running: %s", got)
	}
	// q exits 0 and gives the terminal back: the alternate screen is gone,
	// mouse reporting is off and the cursor shows again.
	tm.keys("q")
	s = tm.waitFor("tui exited 0")
	if strings.Contains(s, "deliveries") {
		t.Fatalf("the TUI's screen is still shown after quitting:\n%s", s)
	}
	if got := tm.modes(); got != "alt=0 mouse=0 cursor=1" {
		t.Errorf("terminal not restored after quitting: %s", got)
	}
}

// modes are the terminal modes tmux sees the program set.
func (tm *tmuxTerm) modes() string {
	tm.t.Helper()
	return strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "tui", "alt=#{alternate_on} mouse=#{mouse_any_flag} cursor=#{cursor_flag}"))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTUIMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runBin(t, filepath.Join(dir, "nope.db"), nil, "tui")
	if r.Code != 2 || !strings.Contains(r.Stderr, "capture or import deliveries first") {
		t.Fatalf("exit %d, stderr %q; want 2 saying how to capture or import", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); err == nil {
		t.Fatal("tui created a database")
	}
}

// TestTUIE2EQuitDuringReplay: q during a replay ends the TUI at once, the
// replay stops, and what was sent is stored as an interrupted run.
func TestTUIE2EQuitDuringReplay(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(100 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	defer slow.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "hookreplay.db")
	if r := runBin(t, db, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db %s tui; echo \"tui exited $?\"; sleep 600", binPath, db))
	tm.waitFor("1/6 deliveries")
	tm.keys("r")
	tm.waitFor("target URL")
	tm.text(slow.URL + "/hooks")
	tm.keys("Tab", "BSpace")
	tm.text("200")
	tm.keys("Enter")
	tm.waitFor("copy 3 ")
	tm.keys("q")
	tm.waitFor("tui exited 0")
	r := runBin(t, db, nil, "runs", "--json")
	var runs []struct {
		Verdict  string `json:"verdict"`
		Attempts int    `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %v %s %s", err, r.Stdout, r.Stderr)
	}
	if runs[0].Verdict != "interrupted" || runs[0].Attempts < 3 || runs[0].Attempts >= 200 {
		t.Fatalf("run %+v: want interrupted with the attempts sent before q", runs[0])
	}
}

// TestTUIE2ECaptureTUI: capture --tui captures and shows deliveries in one
// process; r replays one at once to capture's --forward; q stops both.
func TestTUIE2ECaptureTUI(t *testing.T) {
	var hits atomic.Int32
	paths := make(chan string, 4)
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hits.Add(1)
		paths <- r.URL.RequestURI()
	}))
	defer handler.Close()
	db := filepath.Join(t.TempDir(), "hookreplay.db")
	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db %s capture --tui --listen 127.0.0.1:0 --forward %s/base; echo \"capture exited $?\"; sleep 600", binPath, db, handler.URL))
	s := tm.waitFor("capturing on http://")
	m := regexp.MustCompile(`capturing on http://(127\.0\.0\.1:\d+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no address on the screen:\n%s", s)
	}
	captureExchange(t, m[1], mustRead(t, "testdata/export/github.http"), 1)
	tm.waitFor("> 1 ", "push")
	// r replays it at once to where capture forwarded it.
	tm.keys("r")
	tm.waitFor("summary 1 attempt, 1 reached the handler", "sent to       http://127.0.0.1", "/base/hooks/github (capture's --forward")
	if got := hits.Load(); got != 2 {
		t.Errorf("the handler got %d requests (forwarded, then replayed with r), want 2", got)
	}
	if p := <-paths; p != "/base/hooks/github" {
		t.Errorf("capture forwarded to %s", p)
	}
	if p := <-paths; p != "/base/hooks/github" {
		t.Errorf("r replayed to %s, want where capture forwarded it", p)
	}
	// Wait for the list before q: an Escape and a q that reach the TUI in
	// one read are one key, alt+q (seen under load: the replay view stayed).
	tm.keys("Escape")
	tm.waitGone("› replay")
	tm.keys("q")
	tm.waitFor("capture exited 0")
	if r := runBin(t, db, nil, "list"); !strings.Contains(r.Stdout, "push") {
		t.Fatalf("list after capture --tui: %s %s", r.Stdout, r.Stderr)
	}
}

// TestTUIE2EEditAndCopy: in the real binary, E edits a copy of a delivery
// in $EDITOR (Bubble Tea hands the terminal to it), r stores it as a new
// delivery derived from the original and replays it at once; y b writes the
// body alone to a file; show --json names the original.
func TestTUIE2EEditAndCopy(t *testing.T) {
	bodies := make(chan string, 4)
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
	}))
	defer handler.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "hookreplay.db")
	if r := runBin(t, db, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	tm := tuiTmux(t, fmt.Sprintf("cd %s && NO_COLOR=1 TMPDIR=%s VISUAL='sed -i s/ada@example.com/eve@example.com/' GORACE=atexit_sleep_ms=0 %s --db %s tui --to %s/hooks; echo \"tui exited $?\"; sleep 600",
		dir, dir, binPath, db, handler.URL))
	tm.waitFor("1/6 deliveries")
	tm.keys("G")
	tm.waitFor("6/6 deliveries")
	tm.keys("E")
	tm.waitFor("edit a copy of delivery 1")
	tm.keys("j", "e")
	tm.waitFor("changed: editor: body")
	tm.keys("r")
	tm.waitFor("summary 1 attempt, 1 reached the handler")
	if b := <-bodies; !strings.Contains(b, "eve@example.com") {
		t.Fatalf("the handler got %s, want the edited body", b)
	}
	r := runBin(t, db, nil, "show", "7", "--json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"derived_from": 1`) && !strings.Contains(r.Stdout, `"derived_from":1`) {
		t.Fatalf("show 7 --json: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	tm.keys("Escape")
	tm.waitFor("edit a copy of delivery 1")
	tm.keys("Escape")
	tm.waitFor("> 1 ", "  7  ")
	tm.keys("y")
	tm.waitFor("copy delivery 1 as:")
	tm.keys("b")
	s := tm.waitFor("copied delivery 1's body")
	files, _ := filepath.Glob(filepath.Join(dir, "hookreplay-curl-*", "delivery-1.body"))
	if len(files) != 1 {
		t.Fatalf("y b wrote %v:\n%s", files, s)
	}
	if b := mustRead(t, files[0]); !strings.Contains(string(b), "ada@example.com") {
		t.Fatalf("y b wrote %s", b)
	}
	tm.keys("q")
	tm.waitFor("tui exited 0")
}

// TestTUIE2ECheckForm: tui without check flags; c opens the check form, the
// check it describes runs (a handler that does its work for every copy fails
// dups), it is saved to hookreplay.yaml under the name given, and the next c
// opens the form as it was left.
func TestTUIE2ECheckForm(t *testing.T) {
	var work atomic.Int64
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprint(w, work.Load())
			return
		}
		io.Copy(io.Discard, r.Body)
		work.Add(1)
	}))
	defer handler.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "hookreplay.db")
	if r := runBin(t, db, mustRead(t, "internal/tui/testdata/deliveries.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	tm := tuiTmux(t, fmt.Sprintf("cd %s && NO_COLOR=1 GORACE=atexit_sleep_ms=0 %s --db %s tui; echo \"tui exited $?\"; sleep 600", dir, binPath, db))
	tm.waitFor("1/6 deliveries")
	tm.keys("G")
	tm.waitFor("6/6 deliveries")
	tm.keys("c")
	tm.waitFor("> target URL", "probe kind       sql")
	tm.text(handler.URL + "/hooks")
	tm.keys("Tab", "Space", "Space")
	tm.waitFor("probe kind       http")
	tm.keys("Tab")
	tm.text(handler.URL + "/count")
	tm.keys("Tab", "Tab")
	tm.waitFor("> phases")
	tm.text("first,dups")
	tm.keys("Tab", "Tab", "Tab")
	tm.waitFor("> save as check")
	tm.text("naive")
	tm.keys("Enter")
	tm.waitFor("✗ dups", "FAIL")
	cfg, err := os.ReadFile(filepath.Join(dir, "hookreplay.yaml"))
	if err != nil || !strings.Contains(string(cfg), "naive:") || !strings.Contains(string(cfg), "evt_1QjsonlA") {
		t.Fatalf("hookreplay.yaml: %v\n%s", err, cfg)
	}
	// The saved check is a real one: hookreplay check NAME runs it (and
	// finds the bug again).
	if r := runBinIn(t, dir, "--db", db, "check", "naive"); r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "dups") {
		t.Fatalf("check naive from the saved hookreplay.yaml: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	tm.keys("Escape")
	tm.waitFor("6/6 deliveries")
	tm.keys("c")
	tm.waitFor("> target URL", handler.URL+"/count", "first,dups")
	tm.keys("Escape")
	tm.waitFor("6/6 deliveries")
	tm.keys("q")
	tm.waitFor("tui exited 0")
}
