package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddCheck: a check added by the TUI's form loads back as it was
// given, beside the checks already in the file (kept, comments too); a
// taken name is refused and the file left alone.
func TestAddCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookreplay.yaml")
	orig, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Check{Name: "tui-wallet", Deliveries: Deliveries{EventIDs: []string{"evt_1"}}, To: "http://127.0.0.1:3000/webhooks",
		Reset: "./reset", Serve: "node server.js", Kill: "kill -KILL $(cat app.pid)", Start: "./start-app", Probes: []Probe{{Name: "sql", SQL: "SELECT count(*) FROM t", DSN: "sqlite:app.db"}},
		Phases: []string{"first", "dups"}, SecretEnv: "STRIPE_WEBHOOK_SECRET"}
	lookup := env(map[string]string{"PGPASSWORD": "x", "GITHUB_STEP_SUMMARY": "/tmp/s"})
	if err := AddCheck(path, c, lookup); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Checks) != 3 || f.Checks[2].Name != "tui-wallet" {
		t.Fatalf("checks after adding: %d", len(f.Checks))
	}
	got := f.Checks[2]
	if got.To != c.To || got.Reset != c.Reset || got.Serve != c.Serve || got.Kill != c.Kill || got.Start != c.Start || got.SecretEnv != c.SecretEnv ||
		strings.Join(got.Phases, ",") != "first,dups" || len(got.Probes) != 1 || got.Probes[0].SQL != c.Probes[0].SQL ||
		got.Probes[0].DSN != "sqlite:app.db" || strings.Join(got.Deliveries.EventIDs, ",") != "evt_1" {
		t.Fatalf("loaded back %+v", got)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "# Two checks of one handler") {
		t.Errorf("the file's comment was lost:\n%s", b)
	}
	if err := AddCheck(path, c, lookup); err == nil || !strings.Contains(err.Error(), "already there") {
		t.Fatalf("adding a taken name: %v", err)
	}
	// A file that does not exist yet is created.
	fresh := filepath.Join(t.TempDir(), "hookreplay.yaml")
	if err := AddCheck(fresh, c, lookup); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(fresh, lookup); err != nil {
		t.Fatal(err)
	}
}
