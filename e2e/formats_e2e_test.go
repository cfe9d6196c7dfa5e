package e2e

// End-to-end tests of the HAR, curl, ngrok and raw formats through the real
// binary: deliveries captured over real TCP, exported in each format,
// imported into a fresh database (format detected from the content), and
// compared byte for byte with show --raw.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestExportImportEveryFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	raws := exportCaptured(t, src)
	for _, format := range []string{"har", "raw"} {
		t.Run(format, func(t *testing.T) {
			file := filepath.Join(dir, "deliveries."+format)
			if r := runBin(t, src, nil, "export", "--format", format, "-o", file); r.Code != 0 {
				t.Fatalf("export --format %s: code %d %s", format, r.Code, r.Stderr)
			}
			dst := filepath.Join(dir, format+".db")
			r := runBin(t, dst, nil, "import", file)
			if r.Code != 0 || strings.TrimSpace(r.Stdout) != "imported 3 deliveries from "+file+" as ids 1-3" {
				t.Fatalf("import: code %d %q %q", r.Code, r.Stdout, r.Stderr)
			}
			for i, raw := range raws {
				got := runBin(t, dst, nil, "show", strconv.Itoa(i+1), "--raw")
				if got.Code != 0 || got.Stdout != string(raw) {
					t.Errorf("%s: show --raw after %s export and import:\n%q\nwant\n%q", exportFixtures[i], format, got.Stdout, raw)
				}
			}
			var d struct {
				Provider  string `json:"provider"`
				EventType string `json:"event_type"`
				Origin    string `json:"origin"`
			}
			r = runBin(t, dst, nil, "show", "1", "--json")
			if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || d.Provider != "stripe" ||
				d.EventType != "invoice.payment_succeeded" || d.Origin != format+":"+file {
				t.Errorf("show 1 --json after %s import: %+v %v", format, d, err)
			}
		})
	}
}

// TestImportForeignFormats imports files written by other tools, with the
// format detected, and checks that provider detection ran as on capture.
func TestImportForeignFormats(t *testing.T) {
	t.Parallel()
	fixtures := filepath.Join("internal", "exchange", "testdata", "import")
	db := filepath.Join(t.TempDir(), "h.db")
	for _, tt := range []struct {
		file      string
		stdin     bool
		providers []string
	}{
		{"chrome_devtools.har", false, []string{"github", "generic"}},
		{"ngrok_requests.json", true, []string{"stripe", "github"}},
		{"chrome_copy_as_curl.sh", false, []string{"shopify"}},
	} {
		path := filepath.Join(fixtures, tt.file)
		var r result
		if tt.stdin {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r = runBin(t, db, data, "import", "-", "--json")
		} else {
			r = runBin(t, db, nil, "import", path, "--json")
		}
		var got struct {
			Imported int     `json:"imported"`
			IDs      []int64 `json:"ids"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 || got.Imported != len(tt.providers) {
			t.Fatalf("import %s: code %d %q %q", tt.file, r.Code, r.Stdout, r.Stderr)
		}
		for i, id := range got.IDs {
			var d struct{ Provider, Origin string }
			r := runBin(t, db, nil, "show", strconv.FormatInt(id, 10), "--json")
			if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || d.Provider != tt.providers[i] || !strings.HasSuffix(d.Origin, tt.file) && !strings.HasSuffix(d.Origin, ":stdin") {
				t.Errorf("%s delivery %d: %+v %v, want provider %s", tt.file, i+1, d, err, tt.providers[i])
			}
		}
	}
	// An explicit format that does not fit says what it expected.
	r := runBin(t, db, nil, "import", filepath.Join(fixtures, "mitmproxy.har"), "--format", "curl")
	if r.Code != 2 || !strings.Contains(r.Stderr, "(curl)") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Errorf("import har as curl: code %d %q", r.Code, r.Stderr)
	}
	r = runBin(t, db, nil, "import", "README.md")
	if r.Code != 2 || !strings.Contains(r.Stderr, "cannot tell its format") {
		t.Errorf("import README.md: code %d %q", r.Code, r.Stderr)
	}
}
