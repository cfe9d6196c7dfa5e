package e2e

// End-to-end tests of export and import through the real binary: deliveries
// captured over real TCP, exported to JSONL, imported into a fresh database,
// and their exact bytes compared with show --raw.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// exportFixtures are raw HTTP captures in testdata/export, sent to capture in order.
var exportFixtures = []string{"stripe.http", "chunked.http", "github.http"}

// exportCaptured captures the fixtures with the real `hookreplay capture` into
// db and returns their raw bytes in capture order.
func exportCaptured(t *testing.T, db string) [][]byte {
	t.Helper()
	addr := freeAddr(t)
	p := startBin(t, db, "capture", "--listen", addr)
	waitListening(t, addr, p)
	var raws [][]byte
	for _, name := range exportFixtures {
		raw, err := os.ReadFile(filepath.Join("testdata", "export", name))
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("capture did not answer %s: %v", name, err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("capture answered %s with %d", name, resp.StatusCode)
		}
		raws = append(raws, raw)
	}
	p.stop(5 * time.Second)
	return raws
}

// exportLines decodes a JSONL export into generic objects, one per line.
func exportLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("export line %d is not JSON: %v\n%s", i+1, err, l)
		}
		out = append(out, m)
	}
	return out
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	raws := exportCaptured(t, src)

	file := filepath.Join(dir, "webhooks", "captured.jsonl")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, src, nil, "export", "-o", file)
	if r.Code != 0 || !strings.Contains(r.Stderr, "exported 3 deliveries to "+file) || r.Stdout != "" {
		t.Fatalf("export -o: code %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	exported, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := exportLines(t, exported)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	if lines[0]["provider"] != "stripe" || lines[0]["event_type"] != "invoice.payment_succeeded" ||
		lines[2]["provider"] != "github" || lines[2]["event_id"] != "72d3162e-cc78-11e3-81ab-4c9367dc0958" {
		t.Errorf("identity not exported, or not oldest first: %v / %v", lines[0], lines[2])
	}
	// stdout export is the same bytes as the file.
	if r := runBin(t, src, nil, "export"); r.Code != 0 || r.Stdout != string(exported) {
		t.Errorf("export to stdout differs from export -o (code %d)", r.Code)
	}

	// Into a fresh database that already holds one delivery: new ids.
	dst := filepath.Join(dir, "dst.db")
	runBin(t, dst, nil, "import", filepath.Join("testdata", "export", "handwritten.jsonl"))
	r = runBin(t, dst, nil, "import", file)
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "imported 3 deliveries from "+file+" as ids 2-4" {
		t.Fatalf("import: code %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	for i, raw := range raws {
		want := runBin(t, src, nil, "show", strconv.Itoa(i+1), "--raw")
		got := runBin(t, dst, nil, "show", strconv.Itoa(i+2), "--raw")
		if want.Code != 0 || got.Code != 0 {
			t.Fatalf("show --raw: codes %d %d: %s %s", want.Code, got.Code, want.Stderr, got.Stderr)
		}
		if want.Stdout != string(raw) {
			t.Errorf("%s: capture did not keep the exact bytes", exportFixtures[i])
		}
		if got.Stdout != want.Stdout {
			t.Errorf("%s: show --raw differs after export and import:\n%q\n%q", exportFixtures[i], got.Stdout, want.Stdout)
		}
	}

	// Exporting the imported rows gives the same lines but for the ids and
	// the origin the import recorded.
	r = runBin(t, dst, nil, "export", "2", "3", "4")
	again := exportLines(t, []byte(r.Stdout))
	for i := range lines {
		delete(lines[i], "id")
		delete(again[i], "id")
		if _, ok := lines[i]["origin"]; ok || again[i]["origin"] != "jsonl:"+file {
			t.Errorf("line %d: origin %v before, %v after import; want none, then %q", i+1, lines[i]["origin"], again[i]["origin"], "jsonl:"+file)
		}
		delete(again[i], "origin")
		a, _ := json.Marshal(lines[i])
		b, _ := json.Marshal(again[i])
		if !bytes.Equal(a, b) {
			t.Errorf("line %d changed through import and export:\n%s\n%s", i+1, a, b)
		}
	}

	// A pipe: export | import -.
	pipe := filepath.Join(dir, "pipe.db")
	r = runBin(t, pipe, exported, "import", "-", "--json")
	var got struct {
		Imported int     `json:"imported"`
		IDs      []int64 `json:"ids"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 || got.Imported != 3 || len(got.IDs) != 3 {
		t.Fatalf("import - --json: code %d %q %v", r.Code, r.Stdout, err)
	}
}

func TestExportFilters(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	exportCaptured(t, db)
	tests := []struct {
		args []string
		want []string // event types, in order
	}{
		{[]string{"--provider", "github"}, []string{"push"}},
		{[]string{"--type", "invoice.*"}, []string{"invoice.payment_succeeded"}},
		{[]string{"--since", "1h"}, []string{"invoice.payment_succeeded", "", "push"}},
		{[]string{"3", "1"}, []string{"push", "invoice.payment_succeeded"}},
		{[]string{"--event-id", "72d3162e-cc78-11e3-81ab-4c9367dc0958"}, []string{"push"}},
	}
	for _, tt := range tests {
		r := runBin(t, db, nil, append([]string{"export"}, tt.args...)...)
		if r.Code != 0 {
			t.Errorf("export %v: code %d %s", tt.args, r.Code, r.Stderr)
			continue
		}
		var types []string
		for _, l := range exportLines(t, []byte(r.Stdout)) {
			types = append(types, l["event_type"].(string))
		}
		if strings.Join(types, ",") != strings.Join(tt.want, ",") {
			t.Errorf("export %v: event types %q, want %q", tt.args, types, tt.want)
		}
	}
}

func TestExportImportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	// An existing, empty database: read-only commands refuse a missing one.
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	tests := []struct {
		name string
		db   string
		args []string
		want string
	}{
		{"other format", db, []string{"export", "--format", "xml"}, `--format: unknown format "xml" (want jsonl, har, curl, raw)`},
		{"nothing captured", db, []string{"export"}, "no deliveries match"},
		{"unknown id", db, []string{"export", "9"}, "no delivery 9"},
		{"bad id", db, []string{"export", "x"}, `invalid delivery id "x"`},
		{"ids and filters", db, []string{"export", "1", "--provider", "stripe"}, "not both"},
		{"bad since", db, []string{"export", "--since", "soon"}, "--since"},
		{"import no file", db, []string{"import", filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{"import no args", db, []string{"import"}, "import needs FILE"},
		{"import bad line", db, []string{"import", filepath.Join("testdata", "export", "bad_line2.jsonl")}, "line 2: body: illegal base64 data"},
		{"import empty", db, []string{"import", empty}, "no deliveries in it"},
		{"import into missing dir", filepath.Join(dir, "nope", "h.db"), []string{"import", filepath.Join("testdata", "export", "handwritten.jsonl")}, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBin(t, tt.db, nil, tt.args...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("code %d, stderr %q; want 2 and %q", r.Code, r.Stderr, tt.want)
			}
			if n := strings.Count(strings.TrimSpace(r.Stderr), "\n"); n > 0 && !strings.Contains(r.Stderr, "Usage") {
				t.Errorf("error is not one line: %q", r.Stderr)
			}
		})
	}
	// A file with a bad line adds nothing, not even its good first line.
	r := runBin(t, db, nil, "list", "--json")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "[]" {
		t.Errorf("rows after failed imports: %q (code %d)", r.Stdout, r.Code)
	}
	// export -o under a path that cannot be a directory fails without
	// leaving a file (a missing directory is created: TestReadmeExportIntoNewDirectory).
	runBin(t, db, nil, "import", filepath.Join("testdata", "export", "handwritten.jsonl"))
	notDir := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(notDir, "x.jsonl")
	if r := runBin(t, db, nil, "export", "-o", out); r.Code != 2 || !strings.Contains(r.Stderr, "export:") {
		t.Errorf("export -o under a plain file: code %d %q", r.Code, r.Stderr)
	}
}

func TestImportHandWrittenDetectsProvider(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	r := runBin(t, db, nil, "import", filepath.Join("testdata", "export", "handwritten.jsonl"))
	if r.Code != 0 || !regexp.MustCompile(`^imported 1 delivery from .* as id 1\n$`).MatchString(r.Stdout) {
		t.Fatalf("import: code %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	r = runBin(t, db, nil, "export", "1")
	l := exportLines(t, []byte(r.Stdout))[0]
	if l["provider"] != "github" || l["event_type"] != "issues.opened" || l["event_id"] != "d3b07384-d9a7-11ee-8000-000000000001" ||
		l["received_at"] != "2026-12-01T10:00:00Z" {
		t.Errorf("hand-written line imported as %v", l)
	}
	raw := runBin(t, db, nil, "show", "1", "--raw").Stdout
	if !strings.HasPrefix(raw, "POST /hooks/github HTTP/1.1\r\nHost: example.test\r\n") ||
		!strings.HasSuffix(raw, "Content-Length: 40\r\n\r\n{\"action\":\"opened\",\"issue\":{\"number\":7}}") {
		t.Errorf("raw bytes built for a hand-written line:\n%q", raw)
	}
}
