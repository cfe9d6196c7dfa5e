package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// teamSources runs two captures into one store, one named with --source and
// one left to its default (the host name), and checks that list, show, export,
// import and the TUI tell them apart. db is a SQLite path or a Postgres URL.
func teamSources(t *testing.T, db, other string) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Fatalf("host name: %q %v", host, err)
	}
	_, staging := captureStart(t, db, "--source", "staging", "--quiet")
	_, laptop := captureStart(t, db, "--quiet")
	gh := mustRead(t, "testdata/export/github.http")
	stagingID := captureAckID(t, captureExchange(t, staging, gh, 1)[0])
	laptopID := captureAckID(t, captureExchange(t, laptop, gh, 1)[0])
	if stagingID == laptopID {
		t.Fatalf("two captures into one store gave the same id %d", stagingID)
	}

	sources := map[int64]string{}
	for _, d := range captureList(t, db) {
		sources[d.ID] = d.Source
	}
	if sources[stagingID] != "staging" || sources[laptopID] != host {
		t.Fatalf("list --json sources %v, want %d staging and %d %s", sources, stagingID, laptopID, host)
	}
	if l := captureList(t, db, "--source", "staging"); len(l) != 1 || l[0].ID != stagingID {
		t.Fatalf("list --source staging: %+v", l)
	}
	if l := captureList(t, db, "--source", host); len(l) != 1 || l[0].ID != laptopID {
		t.Fatalf("list --source %s: %+v", host, l)
	}
	r := runBin(t, db, nil, "list", "--source", "nowhere")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "no deliveries match") {
		t.Fatalf("list --source nowhere: %+v", r)
	}
	r = runBin(t, db, nil, "show", strconv.FormatInt(stagingID, 10), "--json")
	var shown struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &shown); err != nil || shown.Source != "staging" {
		t.Fatalf("show --json: source %q (%v)\n%s", shown.Source, err, r.Stdout)
	}
	r = runBin(t, db, nil, "show", strconv.FormatInt(stagingID, 10))
	if !strings.Contains(r.Stdout, "(source staging)") {
		t.Fatalf("show does not name the source:\n%s", r.Stdout)
	}

	// Shared onwards as JSONL, the source goes with it.
	r = runBin(t, db, nil, "export", "--source", "staging", "--format", "jsonl")
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 1 || !strings.Contains(r.Stdout, `"source":"staging"`) {
		t.Fatalf("export --source staging: %+v", r)
	}
	if imp := runBin(t, other, []byte(r.Stdout), "import", "-", "--format", "jsonl"); imp.Code != 0 {
		t.Fatalf("import: %+v", imp)
	}
	if l := captureList(t, other, "--source", "staging"); len(l) != 1 || l[0].Source != "staging" {
		t.Fatalf("imported: %+v", l)
	}

	// The TUI starts filtered by list's --source, and source: filters in it.
	tm := tuiTmux(t, fmt.Sprintf("NO_COLOR=1 %s --db '%s' tui --source staging; sleep 600", binPath, db))
	tm.waitFor("1/1 deliveries matching source:staging", fmt.Sprintf("> %d ", stagingID))
	tm.keys("/", "C-u")
	tm.text("source:" + host)
	tm.keys("Enter")
	tm.waitFor("1/1 deliveries matching source:"+host, fmt.Sprintf("> %d ", laptopID))
	tm.keys("q")
}

func TestTeamSourcesSQLite(t *testing.T) {
	captureFastExit(t)
	dir := t.TempDir()
	teamSources(t, filepath.Join(dir, "team.db"), filepath.Join(dir, "mine.db"))
}
