package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// onTerminal runs hookreplay with its stdout and stderr on a pseudo-
// terminal (util-linux script) and returns the bytes written to it, as a
// terminal receives them. Colour is off (NO_COLOR) and the pager is cat, so
// every escape sequence in the output came from somewhere else.
func onTerminal(t *testing.T, db string, args ...string) ([]byte, int) {
	t.Helper()
	if db != "" {
		args = append([]string{"--db", db}, args...)
	}
	line := shQuote(binPath)
	for _, a := range args {
		line += " " + shQuote(a)
	}
	c := exec.Command("script", "-qec", line, "/dev/null")
	// A terminal type that asks for queries: hookreplay must send none
	// (script's pty never answers; see TestNoTerminalQueryE2E).
	c.Env = binEnv("PAGER=cat", "HOOKREPLAY_PAGER=cat", "TERM=xterm-256color")
	out, err := c.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("script %v: %v", args, err)
	}
	return out, code
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// terminalClean returns what in out a terminal would act on, or "": an
// ESC or other C0 control but line breaks and tabs, DEL, a C1 control
// (U+0080-U+009F, or a raw byte 0x80-0x9f that is not UTF-8), a bidi
// control.
func terminalClean(out []byte) string {
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("byte %#x (not UTF-8) at %d", out[i], i)
		case r == '\n', r == '\r', r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0,
			r == 0x61c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("%U at %d: %q", r, i, out[max(0, i-30):min(len(out), i+30)])
		}
		i += n
	}
	return ""
}

// TestTerminalGetsNoForeignControlsE2E: text a sender or an import file
// chose (body, headers, event id, remote address, source, a handler's
// answer and output, a file name) reaches a terminal escaped, whatever
// command prints it; --body and --raw refuse a terminal when their bytes
// would act on it and stay byte-exact through a pipe; JSON escapes C1 and
// bidi controls.
func TestTerminalGetsNoForeignControlsE2E(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	fixture, err := os.ReadFile("testdata/hostile/terminal.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// A file name is text from outside too.
	name := filepath.Join(dir, "evil\x1b]0;name-title\x07\u202e.jsonl")
	if err := os.WriteFile(name, fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	clean := func(what string, out []byte) {
		t.Helper()
		if bad := terminalClean(out); bad != "" {
			t.Errorf("%s wrote %s to the terminal", what, bad)
		}
	}
	out, code := onTerminal(t, db, "import", name)
	if code != 0 || !bytes.Contains(out, []byte(`imported 2 deliveries from `)) {
		t.Fatalf("import: exit %d: %q", code, out)
	}
	clean("import", out)

	for _, args := range [][]string{{"show", "1"}, {"show", "2"}, {"list"}, {"list", "--json"}, {"show", "1", "--json"},
		{"list", "--jq", ".[].event_id"}, {"show", "1", "--template", "{{.remote_addr}} {{.event_type}}"}} {
		out, code := onTerminal(t, db, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %q", args, code, out)
		}
		clean(strings.Join(args, " "), out)
	}
	out, _ = onTerminal(t, db, "show", "1")
	for _, want := range []string{`from 10.0.0.1\x1b]0;remote-title\x07`, `X-Bidi: invoice\u202efdp.exe`, `X-Raw: a\x9bb`,
		`"note": "\u009b31m\u009d0;c1-title\u009c"`, `"bidi": "amount 1\u202e0001"`, `"del": "\x7f"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("show 1 lacks %s:\n%s", want, out)
		}
	}
	out, _ = onTerminal(t, db, "show", "2")
	if !bytes.Contains(out, []byte(`hello \x1b]0;text-title\x07 world`)) || !bytes.Contains(out, []byte(`over\rwrite \u009b2J`)) {
		t.Errorf("show 2 does not show its text body escaped:\n%s", out)
	}

	// --body and --raw: refused on a terminal, exact through a pipe.
	for _, flag := range []string{"--body", "--raw"} {
		for _, id := range []string{"1", "2"} {
			out, code := onTerminal(t, db, "show", id, flag)
			if code != 2 || !bytes.Contains(out, []byte("pipe it ('hookreplay show "+id+" "+flag+" | less', '> file')")) {
				t.Errorf("show %s %s on a terminal: exit %d: %q", id, flag, code, out)
			}
			clean("show "+id+" "+flag, out)
		}
	}
	r := runBin(t, db, nil, "show", "2", "--body")
	if r.Code != 0 || r.Stdout != "hello \x1b]0;text-title\x07 world\r\nover\rwrite \u009b2J\n" {
		t.Errorf("show 2 --body through a pipe: exit %d: %q", r.Code, r.Stdout)
	}
	r = runBin(t, db, nil, "show", "1", "--raw")
	if r.Code != 0 || !strings.Contains(r.Stdout, "X-Raw: a\x9bb\r\n") || !strings.Contains(r.Stdout, "\"bidi\":\"amount 1\u202e0001\"") {
		t.Errorf("show 1 --raw through a pipe is not exact: exit %d: %q", r.Code, r.Stdout)
	}
	// Clean text goes to a terminal as it is.
	out, code = onTerminal(t, "", "send", "--list")
	if code != 0 {
		t.Fatalf("send --list: %d %q", code, out)
	}

	// JSON through a pipe: C1 and bidi escaped, the same value decoded.
	r = runBin(t, db, nil, "show", "1", "--json")
	for _, want := range []string{`\u001b]0;remote-title\u0007`, `evt\u001b[2J\u009b`, `invoice.\u202epaid`, `src\u202e`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("show 1 --json lacks %s:\n%.600s", want, r.Stdout)
		}
	}
	if bad := terminalClean([]byte(r.Stdout)); bad != "" {
		t.Errorf("show 1 --json holds %s", bad)
	}
	var doc struct {
		EventID string `json:"event_id"`
		Source  string `json:"source"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.EventID != "evt\x1b[2J\u009b" || doc.Source != "src\u202e" {
		t.Errorf("show 1 --json decodes to %+v, %v", doc, err)
	}
	r = runBin(t, db, nil, "list", "--json")
	if bad := terminalClean([]byte(r.Stdout)); bad != "" || !strings.Contains(r.Stdout, `evt\u001b[2J\u009b`) {
		t.Errorf("list --json holds %s:\n%.400s", bad, r.Stdout)
	}

	// A handler's answer, in replay's lines and in runs.
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Evil", "a\u202eb")
		w.WriteHeader(200)
		w.Write([]byte("ok \x1b]0;handler-title\x07 \u009b2J \u202edone"))
	}))
	defer h.Close()
	out, code = onTerminal(t, db, "replay", "1", "--to", h.URL)
	if code != 0 {
		t.Fatalf("replay: exit %d: %q", code, out)
	}
	clean("replay", out)
	for _, args := range [][]string{{"runs"}, {"runs", "show", "1"}, {"runs", "show", "1", "--json"}} {
		out, code := onTerminal(t, db, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %q", args, code, out)
		}
		clean(strings.Join(args, " "), out)
	}

	// An error that quotes a handler's output: check --serve.
	out, code = onTerminal(t, db, "check", "1", "--to", "http://127.0.0.1:9", "--probe-cmd", "echo 1",
		"--serve", `printf 'crash \033]0;serve-title\007 \302\233 \342\200\256'; exit 3`)
	if code != 2 || !bytes.Contains(out, []byte(`its output:`)) || !bytes.Contains(out, []byte(`crash \x1b]0;serve-title\x07 \u009b \u202e`)) {
		t.Errorf("check --serve: exit %d: %q", code, out)
	}
	clean("check --serve", out)
}

// TestTerminalGetsNoForeignControlsFromRunsE2E: what a handler, its email
// or a --serve command sent, and the URL a user pasted, reach a terminal
// escaped in the places TestTerminalGetsNoForeignControlsE2E does not
// visit: a check's list of emails (its text report, runs show and the
// TUI's run view render it), --report junit=- (the check's properties are
// the sender's event type and id), replay's plan line, the error line of a
// hookreplay.yaml keycheck, and the descriptions a shell shows for
// completions. Each of them failed before the change; keycheck's JUnit
// (its --to is re-encoded by URL parsing) did not, and is held too.
func TestTerminalGetsNoForeignControlsFromRunsE2E(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	if r := runBin(t, db, mustRead(t, "testdata/hostile/terminal.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	clean := func(what string, out []byte) {
		t.Helper()
		if bad := terminalClean(out); bad != "" {
			t.Errorf("%s wrote %s to the terminal", what, bad)
		}
	}

	// A handler that mails every copy to a recipient whose name sets the
	// terminal's title (net/smtp refuses only CR and LF in an address).
	sink := freeAddr(t)
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := smtp.SendMail(sink, nil, "shop@example.com", []string{"\"\x1b]0;rcpt-title\x07\"@example.com"},
			[]byte("Subject: receipt\r\n\r\nthanks\r\n"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer h.Close()
	out, code := onTerminal(t, db, "check", "1", "--to", h.URL, "--smtp-sink", sink, "--phases", "first,dups", "-n", "2", "--settle", "100ms")
	if code != 1 || !bytes.Contains(out, []byte("the smtp sink accepted 2 emails:")) || !bytes.Contains(out, []byte(`to \x1b]0;rcpt-title\x07@example.com`)) {
		t.Fatalf("check with the smtp sink: exit %d: %q", code, out)
	}
	clean("check's report", out)
	var run struct{ ID int64 }
	r := runBin(t, db, nil, "runs", "--kind", "check", "--json", "id", "--jq", ".[0]")
	if err := json.Unmarshal([]byte(r.Stdout), &run); err != nil || run.ID == 0 {
		t.Fatalf("runs --json: %q %v", r.Stdout, err)
	}
	id := fmt.Sprint(run.ID)
	for _, args := range [][]string{{"runs", "show", id, "--report", "text=-"}, {"runs", "show", id, "--report", "junit=-"}, {"runs", "show", id, "--report", "md=-"}} {
		out, code := onTerminal(t, db, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %q", args, code, out)
		}
		clean(strings.Join(args, " "), out)
	}

	// A URL pasted with a C1 control and a bidi override in it.
	out, _ = onTerminal(t, db, "replay", "1", "--to", h.URL+"/\u009bx\u202e")
	if !bytes.Contains(out, []byte(`/\u009bx\u202e`)) {
		t.Errorf("replay's plan line does not show the target escaped: %q", out)
	}
	clean("replay's plan", out)
	out, _ = onTerminal(t, db, "keycheck", "--to", h.URL+"/v1\u202e", "--body", "{}", "--probe-cmd", "echo 1", "--checks", "first", "--report", "junit=-")
	if !bytes.Contains(out, []byte("<testsuite")) {
		t.Errorf("keycheck --report junit=-: %q", out)
	}
	clean("keycheck --report junit=-", out)

	// A keycheck of hookreplay.yaml whose --serve prints controls and exits.
	cfg := filepath.Join(dir, "hookreplay.yaml")
	yaml := fmt.Sprintf(`keychecks:
  evil:
    to: http://%s/v1
    body: {a: 1}
    probes:
      c: {cmd: "echo 1"}
    serve: "printf '\\033]0;serve-title\\007 \\302\\233 \\342\\200\\256'; exit 3"
`, freeAddr(t))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = onTerminal(t, db, "keycheck", "--config", cfg, "evil")
	if code != 2 || !bytes.Contains(out, []byte(`\x1b]0;serve-title\x07 \u009b \u202e`)) {
		t.Errorf("keycheck evil: exit %d: %q", code, out)
	}
	clean("keycheck evil", out)

	// Completions: the shell prints each description on the terminal; a
	// line break or tab in one would also break the protocol.
	for _, args := range [][]string{{"__complete", "show", ""}, {"__complete", "runs", "show", ""}} {
		r := runBin(t, db, nil, args...)
		clean(strings.Join(args, " "), []byte(r.Stdout))
		if !strings.Contains(r.Stdout, "\t") {
			t.Errorf("%v offers nothing: %q", args, r.Stdout)
		}
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			if strings.Count(line, "\t") > 1 {
				t.Errorf("%v: %q holds more than one tab", args, line)
			}
		}
	}
}

// TestTerminalShowsInvisibleCharactersE2E: a zero-width space makes two
// event types look the same and tag characters (U+E0020-U+E007F) spell
// text no one sees; list and show write them escaped, as the TUI does,
// while show --body, which writes exact bytes, still may (the terminal
// does not act on them) and JSON keeps them.
func TestTerminalShowsInvisibleCharactersE2E(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	body := "{\"note\":\"ok\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065\"}"
	raw := "POST /hooks/x HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/json\r\nContent-Length: " +
		fmt.Sprint(len(body)) + "\r\n\r\n" + body
	line, err := json.Marshal(map[string]any{"schema_version": 1, "received_at": "2026-12-03T09:00:00Z", "provider": "generic",
		"event_id": "evt_\ufeff1", "event_type": "invoice.pa\u200bid", "raw": []byte(raw)})
	if err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, db, append(line, '\n'), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	out, code := onTerminal(t, db, "list")
	if code != 0 || !bytes.Contains(out, []byte(`invoice.pa\u200bid`)) || !bytes.Contains(out, []byte(`evt_\ufeff1`)) {
		t.Errorf("list: exit %d: %q", code, out)
	}
	out, code = onTerminal(t, db, "show", "1")
	if code != 0 || !bytes.Contains(out, []byte(`"note": "ok\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065"`)) {
		t.Errorf("show 1: exit %d: %q", code, out)
	}
	out, code = onTerminal(t, db, "show", "1", "--body")
	if code != 0 || !bytes.Contains(out, []byte(body)) {
		t.Errorf("show 1 --body on a terminal: exit %d: %q", code, out)
	}
	r := runBin(t, db, nil, "show", "1", "--json")
	if !strings.Contains(r.Stdout, "invoice.pa\u200bid") {
		t.Errorf("show --json does not keep the event type as it is: %.300s", r.Stdout)
	}
}

// TestTerminalExportE2E: export writes files, but without -o it writes to
// stdout, often a terminal. JSONL and HAR escape C1 and bidi controls as
// every JSON does, the curl script quotes them as $'\xHH' (cat shows what
// the script sends, and bash 3.2 reads it), and raw bytes that would act on
// a terminal are refused there as show --raw refuses them. Through a pipe
// each format still imports back to the same deliveries.
func TestTerminalExportE2E(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	if r := runBin(t, db, mustRead(t, "testdata/hostile/terminal.jsonl"), "import", "-"); r.Code != 0 {
		t.Fatalf("import: %d %s", r.Code, r.Stderr)
	}
	for _, format := range []string{"jsonl", "har", "curl"} {
		out, code := onTerminal(t, db, "export", "--format", format)
		if code != 0 {
			t.Errorf("export --format %s on a terminal: exit %d: %q", format, code, out)
		}
		if bad := terminalClean(out); bad != "" {
			t.Errorf("export --format %s wrote %s to the terminal", format, bad)
		}
	}
	out, code := onTerminal(t, db, "export", "--format", "raw")
	if code != 2 || !bytes.Contains(out, []byte("--format raw would write control characters")) {
		t.Errorf("export --format raw on a terminal: exit %d: %q", code, out)
	}
	if bad := terminalClean(out); bad != "" {
		t.Errorf("export --format raw wrote %s to the terminal", bad)
	}

	want := runBin(t, db, nil, "show", "1", "--raw").Stdout
	for _, format := range []string{"jsonl", "har", "curl", "raw"} {
		file := filepath.Join(dir, "out."+format)
		r := runBin(t, db, nil, "export", "1", "--format", format)
		if r.Code != 0 {
			t.Fatalf("export --format %s: %d %s", format, r.Code, r.Stderr)
		}
		if err := os.WriteFile(file, []byte(r.Stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		back := filepath.Join(dir, format+".db")
		if r := runBin(t, back, nil, "import", "--format", format, file); r.Code != 0 {
			t.Fatalf("import --format %s: %d %s", format, r.Code, r.Stderr)
		}
		got := runBin(t, back, nil, "show", "1", "--raw").Stdout
		if format == "har" || format == "curl" {
			// HAR and curl carry the request, not its framing: compare
			// the headers and body show prints.
			got, want := runBin(t, back, nil, "show", "1", "--json", "headers,body").Stdout, runBin(t, db, nil, "show", "1", "--json", "headers,body").Stdout
			if got != want {
				t.Errorf("%s round trip: headers and body\n%s\nwant\n%s", format, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%s round trip: raw %q, want %q", format, got, want)
		}
	}
}
