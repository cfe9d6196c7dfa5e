package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestStoreE2EForeignTriggerRefusedOrDropped: a --db whose deliveries table
// carries a trigger hookreplay did not create (one that deletes each
// delivery as capture stores it) is refused by every command, naming the
// flag that drops it; with --drop-foreign-triggers it is dropped and said.
func TestStoreE2EForeignTriggerRefusedOrDropped(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	if r := runBin(t, db, nil, "import", "testdata/hostile/terminal.jsonl"); r.Code != 0 {
		t.Fatalf("import: %+v", r)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(`CREATE TRIGGER gone AFTER INSERT ON deliveries BEGIN DELETE FROM deliveries WHERE id = NEW.id; END`)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"import", "testdata/hostile/terminal.jsonl"}} {
		r := runBin(t, db, nil, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "holds trigger gone that hookreplay did not create") ||
			!strings.Contains(r.Stderr, "drop them with --drop-foreign-triggers") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("%v on a database with a foreign trigger: %+v", args, r)
		}
	}
	r := runBin(t, db, nil, "--drop-foreign-triggers", "import", "testdata/hostile/terminal.jsonl")
	if r.Code != 0 || !strings.Contains(r.Stderr, "dropped trigger gone from "+db) {
		t.Fatalf("--drop-foreign-triggers: %+v", r)
	}
	if r := runBin(t, db, nil, "list", "--jq", "length"); r.Code != 0 || r.Stdout != "4\n" {
		t.Errorf("after the drop: %+v", r)
	}
}

// TestImportCurlNamesTheFilesItRead: import --format curl says every local
// file its commands made it read, and refuses the system's own files.
func TestImportCurlNamesTheFilesItRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"body.json": `{"a":1}`, "event.json": `{"e":2}`,
		"c.sh":   "curl -d @" + dir + "/body.json http://h/a\ncurl -d @" + dir + "/event.json http://h/b\ncurl -d @" + dir + "/body.json http://h/c\n",
		"env.sh": "curl -d @/proc/self/environ http://h/a\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "h.db")
	r := runBin(t, db, nil, "import", filepath.Join(dir, "c.sh"), "--format", "curl")
	if r.Code != 0 || !strings.Contains(r.Stderr, "read 2 local files: "+dir+"/body.json, "+dir+"/event.json\n") {
		t.Errorf("import: %+v", r)
	}
	r = runBin(t, db, nil, "import", filepath.Join(dir, "env.sh"), "--format", "curl")
	if r.Code != 2 || !strings.Contains(r.Stderr, "-d @/proc/self/environ: is under /proc") {
		t.Errorf("import of @/proc/self/environ: %+v", r)
	}
}
