package tui

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// TestCheckFormTeamStore: the check form is remembered in the store, and
// a team store (Postgres) is read by the whole team, its reader role
// included. The passwords the form's commands and URLs carry are
// remembered as [REDACTED] there; a SQLite file, the user's own, keeps
// them as typed.
func TestCheckFormTeamStore(t *testing.T) {
	pg := testkit.PostgresSchema(t, "tui_form")
	for _, c := range []struct {
		name   string
		st     *store.Store
		shared bool
	}{
		{"sqlite", fixtureStore(t), false},
		{"postgres", storeAt(t, pg, "testdata/deliveries.jsonl"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			const resetPw, tokenPw = "Tui-Reset-Pw-321", "Tui-Token-654"
			srv := naiveHandler()
			defer srv.Close()
			h := newHarness(t, c.st, 140, 40)
			h.env.newCheck = func(*config.Check) (CheckFunc, error) { return checkFunc(h, srv), nil }
			h.keys("G", "c")
			h.contains("> target URL")
			h.typeText(srv.URL + "/hooks")
			h.keys("tab", " ") // sql → cmd
			h.contains("probe kind       cmd")
			h.keys("tab")
			h.typeText("API_TOKEN=" + tokenPw + " echo 1")
			h.keys("tab", "tab", "tab") // secret env, phases, reset
			h.contains("> reset command")
			h.typeText("PGPASSWORD=" + resetPw + " true")
			h.keys("enter")
			h.contains("dups")
			v, ok, err := c.st.Setting(context.Background(), settingCheckForm)
			if err != nil || !ok {
				t.Fatalf("the form was not remembered: %v", err)
			}
			kept := strings.Contains(v, resetPw) || strings.Contains(v, tokenPw)
			if c.shared && (kept || !strings.Contains(v, "PGPASSWORD=[REDACTED] true")) {
				t.Fatalf("a team store remembers the form's passwords: %s", v)
			}
			if !c.shared && (!strings.Contains(v, resetPw) || !strings.Contains(v, tokenPw)) {
				t.Fatalf("a SQLite store lost what was typed: %s", v)
			}
		})
	}
}

// storeAt is the store at loc holding the deliveries of a JSONL fixture.
func storeAt(t *testing.T, loc, fixture string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ds, err := store.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ImportDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	return st
}
