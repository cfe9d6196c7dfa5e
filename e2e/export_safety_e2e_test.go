package e2e

// End-to-end tests of what `export -o PATH` may write over, and of --redact:
// the real binary, deliveries stored in a real SQLite file, exports read
// back and their raw bytes parsed again.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// storeRaw stores raw wire bytes as a captured delivery, with a recorded
// response, and returns its id.
func storeRaw(t *testing.T, db string, raw []byte, respHeaders message.Headers) int64 {
	t.Helper()
	req, err := message.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := &store.Delivery{Source: "test", Provider: "generic", Method: req.Method, Target: req.Target, Proto: req.Proto,
		Headers: req.Headers, Body: req.Body, Raw: raw, ResponseStatus: 200, ResponseHeaders: respHeaders, ResponseBody: []byte("ok")}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func TestExportE2EOutputPathSafety(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	checkStripeDelivery(t, db)
	mode := func(p string) os.FileMode {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode()
	}
	refused := func(what, path, want string) {
		t.Helper()
		r := runBin(t, db, nil, "export", "-o", path)
		msg := strings.TrimSpace(r.Stderr)
		if r.Code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, want) {
			t.Errorf("export -o %s: exit %d, want 2 and one line containing %q:\n%s", what, r.Code, want, r.Stderr)
		}
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("a FIFO", fifo, "not a regular file")
	if mode(fifo)&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: mode %v", mode(fifo))
	}

	target := filepath.Join(dir, "target.txt")
	if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	refused("a symlink", link, "symbolic link")
	if mode(link)&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: mode %v", mode(link))
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the symlink's target was written: %q", b)
	}

	// A missing directory is created (the README's testdata/webhooks flow), not silently.
	missing := filepath.Join(dir, "no", "such", "out.jsonl")
	if r := runBin(t, db, nil, "export", "-o", missing); r.Code != 0 || !strings.Contains(r.Stderr, "created directory "+filepath.Dir(missing)) {
		t.Errorf("export into a missing directory: exit %d, want 0 and 'created directory':\n%s", r.Code, r.Stderr)
	}

	refused("a directory", dir, "not a regular file")

	fresh := filepath.Join(dir, "fresh.jsonl")
	if r := runBin(t, db, nil, "export", "-o", fresh); r.Code != 0 {
		t.Fatalf("export to a new file: %+v", r)
	}
	if m := mode(fresh).Perm(); m != 0o600 {
		t.Errorf("a new export has mode %v, want 0600 (it carries captured requests)", m)
	}

	existing := filepath.Join(dir, "existing.jsonl")
	if err := os.WriteFile(existing, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(existing, 0o640); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, db, nil, "export", "-o", existing); r.Code != 0 {
		t.Fatalf("export over an existing file: %+v", r)
	}
	if m := mode(existing).Perm(); m != 0o640 {
		t.Errorf("export changed an existing file's mode to %v, want 0640 kept", m)
	}
	if b, _ := os.ReadFile(existing); !bytes.Contains(b, []byte(`"schema_version"`)) {
		t.Errorf("the existing file was not replaced by the export: %q", b)
	}
}

// exportDelivery is the part of an export line the redaction test reads.
type exportDelivery struct {
	Headers         message.Headers `json:"headers"`
	Raw             string          `json:"raw"`
	Body            string          `json:"body"`
	ResponseHeaders message.Headers `json:"response_headers"`
}

func TestExportE2ERedact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	body := `{"card": {"number": "4242424242424242", "cvc": "123"}, "amount": 5}`
	plain := "POST /hooks HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sk_live_SECRET1\r\n" +
		"Cookie: session=SECRET2\r\nX-Api-Key: SECRET3\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	chunked := "POST /hooks HTTP/1.1\r\nHost: localhost\r\nProxy-Authorization: Basic U0VDUkVUNA==\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
	storeRaw(t, db, []byte(plain), message.Headers{{Name: "Set-Cookie", Value: "sid=SECRET5; HttpOnly"}})
	storeRaw(t, db, []byte(chunked), nil)
	secrets := []string{"SECRET1", "SECRET2", "SECRET3", "U0VDUkVUNA==", "SECRET5", "4242424242424242"}

	// Without --redact: the export is verbatim, with a warning naming the headers.
	r := runBin(t, db, nil, "export")
	if r.Code != 0 {
		t.Fatalf("export: %+v", r)
	}
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization", "Set-Cookie"} {
		if !strings.Contains(r.Stderr, h) {
			t.Errorf("export without --redact did not warn about %s:\n%s", h, r.Stderr)
		}
	}
	if !strings.Contains(r.Stderr, "--redact") {
		t.Errorf("the warning does not say how to redact:\n%s", r.Stderr)
	}

	r = runBin(t, db, nil, "export", "--redact", "--redact-header", "x-api-key", "--redact-json", "card.number")
	if r.Code != 0 || strings.Contains(r.Stderr, "credential") {
		t.Fatalf("export --redact: %+v", r)
	}
	for _, s := range secrets {
		// Secrets may also appear base64-encoded inside raw/body: decode first.
		if strings.Contains(r.Stdout, s) {
			t.Errorf("export --redact still holds %q", s)
		}
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d", len(lines))
	}
	for i, l := range lines {
		var d exportDelivery
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(d.Raw)
		bodyB, _ := base64.StdEncoding.DecodeString(d.Body)
		for _, s := range secrets {
			if bytes.Contains(raw, []byte(s)) || bytes.Contains(bodyB, []byte(s)) || strings.Contains(l, s) {
				t.Errorf("delivery %d: redacted export still holds %q in raw or body:\n%s", i+1, s, raw)
			}
		}
		// The raw bytes say what the headers and body say.
		req, err := message.Parse(raw)
		if err != nil {
			t.Fatalf("delivery %d: redacted raw bytes do not parse: %v\n%q", i+1, err, raw)
		}
		if !bytes.Equal(req.Body, bodyB) {
			t.Errorf("delivery %d: raw body %q != body %q", i+1, req.Body, bodyB)
		}
		if got, want := headerText(req.Headers), headerText(d.Headers); got != want {
			t.Errorf("delivery %d: raw headers\n%s\n!= headers\n%s", i+1, got, want)
		}
		if cl := req.Headers.Get("Content-Length"); cl != strconv.Itoa(len(bodyB)) {
			t.Errorf("delivery %d: Content-Length %q for a %d-byte body", i+1, cl, len(bodyB))
		}
		if !json.Valid(bodyB) || !bytes.Contains(bodyB, []byte(`"cvc": "123"`)) {
			t.Errorf("delivery %d: the rest of the body was not kept byte for byte: %s", i+1, bodyB)
		}
		if !strings.Contains(l, "[REDACTED]") {
			t.Errorf("delivery %d: no redaction marker:\n%s", i+1, l)
		}
	}
	// A redacted export can be imported and checked from.
	file := filepath.Join(dir, "redacted.jsonl")
	if err := os.WriteFile(file, []byte(r.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, filepath.Join(dir, "other.db"), nil, "import", file); r.Code != 0 {
		t.Fatalf("import of a redacted export: %+v", r)
	}
}

func headerText(h message.Headers) string {
	var b strings.Builder
	for _, x := range h {
		b.WriteString(x.Name + ": " + x.Value + "\n")
	}
	return b.String()
}
