package exchange

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// fuzzMaxBody keeps each fuzzed body small, so memory stays bounded however
// hostile the input.
const fuzzMaxBody = 1 << 16

// checkImported is what every reader promises for any input: no panic, and
// each delivery it returns holds a request that parses back to the same
// method and target, within the body limit.
func checkImported(t *testing.T, ds []*store.Delivery, err error) {
	if err != nil {
		if bytes.ContainsRune([]byte(err.Error()), '\n') {
			t.Errorf("error spans lines: %q", err)
		}
		return
	}
	for _, d := range ds {
		if len(d.Body) > fuzzMaxBody {
			t.Fatalf("body of %d bytes over the limit", len(d.Body))
		}
		req, perr := message.Parse(d.Raw)
		if perr != nil {
			t.Fatalf("imported raw does not parse: %v\n%q", perr, d.Raw)
		}
		if req.Method != d.Method || req.Target != d.Target || !bytes.Equal(req.Body, d.Body) {
			t.Fatalf("fields disagree with raw: %s %s %q vs %q", d.Method, d.Target, d.Body, d.Raw)
		}
	}
}

func addSeeds(f *testing.F, glob string) {
	names, _ := filepath.Glob(glob)
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
}

// FuzzReadHAR: HAR files, from the import fixtures and testdata/fuzz/FuzzReadHAR.
func FuzzReadHAR(f *testing.F) {
	addSeeds(f, filepath.Join("testdata", "import", "*.har"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := Read(data, HAR, ReadOptions{MaxBody: fuzzMaxBody})
		checkImported(t, ds, err)
	})
}

// FuzzReadNgrok: the ngrok agent's JSON.
func FuzzReadNgrok(f *testing.F) {
	addSeeds(f, filepath.Join("testdata", "import", "*.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := Read(data, Ngrok, ReadOptions{MaxBody: fuzzMaxBody})
		checkImported(t, ds, err)
	})
}

// FuzzReadCurl: curl command files. @FILE references are refused (no
// ReadFile), so the fuzzer never reads the disk.
func FuzzReadCurl(f *testing.F) {
	addSeeds(f, filepath.Join("testdata", "import", "*.sh"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := Read(data, Curl, ReadOptions{MaxBody: fuzzMaxBody})
		checkImported(t, ds, err)
	})
}

// FuzzShellQuote: any NUL-free string survives shellQuote and splitShell.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "it's", "$'x'", "a\nb", "caf\xe9", "\\\"`$("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if bytes.IndexByte([]byte(s), 0) >= 0 {
			return
		}
		cmds, err := splitShell("curl " + shellQuote(s))
		if err != nil || len(cmds) != 1 || len(cmds[0].words) != 2 || cmds[0].words[1] != s {
			t.Fatalf("shellQuote(%q) = %s read back as %+v, %v", s, shellQuote(s), cmds, err)
		}
	})
}
