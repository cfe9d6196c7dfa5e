package exchange

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCurlDataFiles: -d @FILE and --data-binary @FILE read a file as curl
// does, relative to the working directory, then beside the curl file; a
// file that cannot be read is one line naming it, never Go's "open …:".
func TestCurlDataFiles(t *testing.T) {
	work, beside := t.TempDir(), t.TempDir()
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(work, "body.json"), "{\"a\":1}\n")
	write(filepath.Join(work, "dir", "nested.json"), `{"n":2}`)
	write(filepath.Join(beside, "only-beside.json"), `{"b":2}`)
	write(filepath.Join(beside, "out.sh.1.body"), "bin\x00ary")
	write(filepath.Join(work, "big.bin"), strings.Repeat("x", 101))
	if err := os.Symlink("/proc/self/environ", filepath.Join(work, "env-link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)

	for _, tc := range []struct {
		name, cmd, body, err string
	}{
		{"relative to the working directory", `curl -d @body.json http://h/`, `{"a":1}`, ""},
		{"binary keeps the newline", `curl --data-binary @body.json http://h/`, "{\"a\":1}\n", ""},
		{"a relative path with a directory", `curl --data-binary @dir/nested.json http://h/`, `{"n":2}`, ""},
		{"absolute", `curl --data-binary @` + filepath.Join(work, "body.json") + ` http://h/`, "{\"a\":1}\n", ""},
		{"beside the curl file", `curl --data-binary @only-beside.json http://h/`, `{"b":2}`, ""},
		{"an export's body file from elsewhere", `curl --data-binary @exports/out.sh.1.body http://h/`, "bin\x00ary", ""},
		{"json", `curl --json @dir/nested.json http://h/`, `{"n":2}`, ""},

		{"missing", `curl -d @nope.json http://h/`, "", "line 1: -d @nope.json: no such file (looked for " + filepath.Join(work, "nope.json") + ", " + filepath.Join(beside, "nope.json") + ")"},
		{"missing absolute", `curl -d @/nonexistent/x.json http://h/`, "", "-d @/nonexistent/x.json: no such file (looked for /nonexistent/x.json)"},
		{"stdin", `curl --data-binary @- http://h/`, "", "--data-binary @- reads stdin; save the body to a file and name it"},
		{"no name", `curl --data-binary @ http://h/`, "", "--data-binary @: names no file"},
		{"a directory", `curl -d @dir http://h/`, "", "-d @dir: is a directory"},
		{"a device", `curl -d @/dev/zero http://h/`, "", "-d @/dev/zero: is not a regular file"},
		// /proc/self/environ is a regular file: the importer's environment.
		{"the importer's environment", `curl -d @/proc/self/environ http://h/`, "", "-d @/proc/self/environ: is under /proc, the system's own files"},
		{"a link to it", `curl -d @env-link http://h/`, "", "-d @env-link: is under /proc"},
		{"over the limit", `curl --data-binary @big.bin http://h/`, "", "--data-binary @big.bin: is 101 bytes, over the 100-byte body limit (--max-body)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := Read([]byte(tc.cmd+"\n"), Curl, ReadOptions{Name: "c.sh", MaxBody: 100, ReadFile: LimitedReadFile(beside, 100)})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "open ") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(ds[0].Body) != tc.body {
				t.Errorf("body %q, want %q", ds[0].Body, tc.body)
			}
		})
	}
}
