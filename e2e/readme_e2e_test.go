package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeExportIntoNewDirectory follows "Committing captured webhooks" in
// docs/import-export.md (once in the README) and step 3 of docs/guide.md:
// export -o testdata/webhooks/invoice-paid.jsonl in a repository
// that has no testdata/webhooks yet (it failed with "no such file or
// directory"), then import it into a fresh database with the same bytes.
func TestReadmeExportIntoNewDirectory(t *testing.T) {
	t.Parallel()
	db, ds := replayStore(t, "stripe_invoice_paid.http")
	out := filepath.Join(t.TempDir(), "testdata", "webhooks", "invoice-paid.jsonl")
	r := runBin(t, db, nil, "export", "1", "-o", out)
	if r.Code != 0 || !strings.Contains(r.Stderr, "exported 1 delivery to "+out) {
		t.Fatalf("export: code %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	if r := runBin(t, fresh, nil, "import", out); r.Code != 0 {
		t.Fatalf("import: code %d\n%s", r.Code, r.Stderr)
	}
	r = runBin(t, fresh, nil, "show", "1", "--raw")
	if r.Code != 0 || r.Stdout != string(ds[0].Raw) {
		t.Fatalf("imported delivery differs (code %d)", r.Code)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*tmp*")); len(m) != 0 {
		t.Fatalf("temporary files left behind: %v", m)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
