package exchange

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/import")

// TestImportForeignFiles reads files as other tools write them (Chrome and
// mitmproxy HAR, the ngrok agent's JSON, Chrome's and Firefox's "Copy as
// cURL", hand-written curl) and compares the rebuilt wire bytes of every
// request with testdata/import/NAME.golden.
func TestImportForeignFiles(t *testing.T) {
	dir := filepath.Join("testdata", "import")
	for _, tt := range []struct {
		file   string
		format Format
		count  int
	}{
		{"chrome_devtools.har", HAR, 2},
		{"mitmproxy.har", HAR, 2},
		{"ngrok_requests.json", Ngrok, 2},
		{"chrome_copy_as_curl.sh", Curl, 1},
		{"firefox_and_hand.sh", Curl, 4},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if f, err := Detect(data); f != tt.format || err != nil {
				t.Errorf("Detect = %q, %v; want %q", f, err, tt.format)
			}
			ds, err := Read(data, tt.format, ReadOptions{Name: tt.file, ReadFile: LimitedReadFile(dir, DefaultMaxBody)})
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != tt.count {
				t.Fatalf("%d deliveries, want %d", len(ds), tt.count)
			}
			var got bytes.Buffer
			for i, d := range ds {
				fmt.Fprintf(&got, "### %d origin=%s received=%s remote=%q response=%d latency=%s\n",
					i+1, d.Origin, d.ReceivedAt.UTC().Format("2006-01-02T15:04:05.000000Z"), d.RemoteAddr, d.ResponseStatus, d.Latency)
				got.Write(d.Raw)
				got.WriteString("\n")
			}
			golden := filepath.Join(dir, tt.file+".golden")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("rebuilt requests differ from %s:\n got %q\nwant %q", golden, got.Bytes(), want)
			}
		})
	}
}

// TestImportRefuses: what cannot be imported faithfully is refused with a
// line naming the entry and the reason.
func TestImportRefuses(t *testing.T) {
	for _, tt := range []struct {
		name   string
		format Format
		in     string
		want   string
	}{
		{"har not json", HAR, `{"log": {"entries": [}`, "not a HAR file: invalid JSON"},
		{"har no entries", HAR, `{"log": {}}`, `no "log.entries"`},
		{"har ftp url", HAR, `{"log":{"entries":[{"request":{"method":"GET","url":"ftp://h/x","headers":[]}}]}}`, "entry 1 (GET ftp://h/x): URL"},
		{"har header injection", HAR, `{"log":{"entries":[{"request":{"method":"POST","url":"http://h/","headers":[{"name":"X","value":"a\r\nEvil: 1"}]}}]}}`, "line break"},
		{"har bad base64", HAR, `{"log":{"entries":[{"request":{"method":"POST","url":"http://h/","headers":[],"postData":{"text":"!!","encoding":"base64"}}}]}}`, "postData.text is not base64"},
		{"har body over limit", HAR, `{"log":{"entries":[{"request":{"method":"POST","url":"http://h/","headers":[],"postData":{"text":"0123456789abcdef"}}}]}}`, "exceeds the 8-byte limit"},
		{"ngrok empty", Ngrok, `{"requests": []}`, "no captured requests"},
		{"ngrok truncated", Ngrok, `{"requests":[{"id":"x1","request":{"raw":"UE9TVCAvIEhUVFAvMS4xDQpIb3N0OiBoDQpDb250ZW50LUxlbmd0aDogMTAwDQoNCnNob3J0"}}]}`, "request 1 (id x1): body cut short after 5 bytes"},
		{"ngrok no raw", Ngrok, `[{"id":"x2","request":{"method":"GET"}}]`, `no "request.raw"`},
		{"curl form upload", Curl, `curl -F file=@x http://h/`, "curl option -F is not supported"},
		{"curl env var", Curl, `curl -H "Authorization: Bearer $TOKEN" http://h/`, "line 1: shell variable $T"},
		{"curl command substitution", Curl, `curl -d "$(cat secret)" http://h/`, "command substitution"},
		{"curl pipe", Curl, `curl http://h/ | jq .`, `'|' is not supported`},
		{"curl other command", Curl, "# setup\nexport X=1\n", `line 2: "export" is not a curl command`},
		{"curl two urls", Curl, `curl http://a/ http://b/`, "more than one URL"},
		{"curl no url", Curl, `curl -d x`, "no URL"},
		{"curl file refused", Curl, `curl -d @/etc/passwd http://h/`, "files named by curl commands are not read here"},
		{"curl stdin", Curl, `curl --data-binary @- http://h/`, "reads stdin"},
		{"curl unterminated", Curl, `curl 'http://h/`, "unterminated '"},
		{"curl bad header", Curl, `curl -H 'NoColon' http://h/`, "not of the form"},
		{"curl data over limit", Curl, `curl -d 0123456789 http://h/`, "exceeds the 8-byte body limit"},
		{"raw garbage", Raw, "POST / HTTP/1.1\r\nHost h\r\n\r\n", "request 1 (byte 0): not an HTTP request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read([]byte(tt.in), tt.format, ReadOptions{MaxBody: 8})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestDetect names formats from content and refuses what it cannot name.
func TestDetect(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Format
		err  string
	}{
		{"\xef\xbb\xbf\n  {\"log\": {\"entries\": []}}", HAR, ""},
		{`{"uri": "/api/requests/http", "requests": []}`, Ngrok, ""},
		{`{"id": "x", "tunnel_name": "t", "request": {"raw": ""}}`, Ngrok, ""},
		{`[{"request": {}}]`, Ngrok, ""},
		{`{"schema_version":1,"raw":"UE9TVA=="}` + "\n", JSONL, ""},
		{"#!/usr/bin/env bash\n# exported\n\ncurl -sS http://h/\n", Curl, ""},
		{"POST /hooks HTTP/1.1\r\nHost: h\r\n\r\n", Raw, ""},
		{"", "", "empty"},
		{"hello world\n", "", "cannot tell its format"},
	} {
		got, err := Detect([]byte(tt.in))
		if got != tt.want || (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Detect(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestShellQuoteRoundTrip: every word shellQuote writes reads back as the
// same bytes through splitShell (the reader bash-compatible files go
// through), including quotes, newlines, non-UTF-8 bytes and $.
func TestShellQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", `a"b\c$HOME` + "`x`", "line\nbreak\ttab", "cr\r\nlf", "caf\xe9", "\x01\x7f", "ünï €"} {
		cmds, err := splitShell("curl " + shellQuote(s) + "\n")
		if err != nil || len(cmds) != 1 || len(cmds[0].words) != 2 || cmds[0].words[1] != s {
			t.Errorf("shellQuote(%q) = %s read back as %+v, %v", s, shellQuote(s), cmds, err)
		}
	}
}

// TestHARLeavesOutNonRequests: a page's devtools HAR also lists data: and
// blob: URLs; they are left out with a note, the requests imported.
func TestHARLeavesOutNonRequests(t *testing.T) {
	in := `{"log":{"entries":[
		{"request":{"method":"GET","url":"data:image/png;base64,iVBORw0KGgo=","headers":[]}},
		{"request":{"method":"POST","url":"https://h.example/hook","headers":[{"name":"Content-Type","value":"text/plain"}],"postData":{"text":"hi"}}},
		{"request":{"method":"GET","url":"blob:https://h.example/0b1c","headers":[]}}]}}`
	var notes []string
	ds, err := Read([]byte(in), HAR, ReadOptions{Note: func(s string) { notes = append(notes, s) }})
	if err != nil || len(ds) != 1 || ds[0].Target != "/hook" {
		t.Fatalf("Read = %v, %v", ds, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "left out 2 HAR entries") {
		t.Errorf("notes %q", notes)
	}
}

// EachHAR reads entries in any key order, skips what is not a request and
// what it does not read, and words a broken file as Read did.
func TestEachHARStreams(t *testing.T) {
	har := `{"log":{"pages":[{"id":"p","title":{"deep":[1,2,{"x":null}]}}],"entries":[` +
		`{"request":{"method":"POST","url":"https://h/a","httpVersion":"HTTP/1.1","headers":[],"postData":{"mimeType":"text/plain","text":"one"}}},` +
		`{"request":{"method":"GET","url":"data:image/png;base64,AAAA","headers":[]}},` +
		`{"request":{"url":"https://h/b","method":"PUT","headers":[],"postData":{"mimeType":"text/plain","text":"two"}}}],"version":"1.2"}}`
	var got []string
	var notes []string
	err := EachHAR(strings.NewReader(har), ReadOptions{Name: "x.har", Note: func(s string) { notes = append(notes, s) }}, func(d *store.Delivery) error {
		got = append(got, d.Method+" "+d.Target+" "+string(d.Body)+" "+d.Origin)
		return nil
	})
	if err != nil || strings.Join(got, "|") != "POST /a one har:x.har|PUT /b two har:x.har" || len(notes) != 1 {
		t.Fatalf("EachHAR = %q, %v, notes %q", got, err, notes)
	}
	for in, want := range map[string]string{
		`{"log":{"version":"1.2"}}`:           `no "log.entries"`,
		`{"log":{"entries":{}}}`:              `"log.entries" is not a list`,
		`{"log":{"entries":[{"request":`:      "not a HAR file",
		`[1,2]`:                               `want a JSON object with "log"`,
		`{"log":{"entries":[]}} trailing`:     "text after its JSON",
		`{"log":{"entries":[{"request":5}]}}`: "not a HAR file",
	} {
		err := EachHAR(strings.NewReader(in), ReadOptions{}, func(*store.Delivery) error { return nil })
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("EachHAR(%s) = %v, want %q", in, err, want)
		}
	}
}
