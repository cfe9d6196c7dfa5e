package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

func TestCheckFlags(t *testing.T) {
	t.Setenv("HOOKREPLAY_CHECK_SECRET", "whsec_env")
	for _, tc := range []struct {
		args    []string
		ok      func(*checkOptions) bool
		wantErr string
	}{
		{[]string{"7", "--to", "http://x/h", "--probe-cmd", "echo 1"}, func(o *checkOptions) bool {
			return len(o.IDs) == 1 && o.IDs[0] == 7 && o.N == 10 && o.Burst == 20 && len(o.Phases) == 0 && !o.SeedSet
		}, ""},
		{[]string{"--last", "--phases", "first, dups,burst", "--secret-env", "HOOKREPLAY_CHECK_SECRET", "-n", "3", "--seed", "9"}, func(o *checkOptions) bool {
			return o.Last && strings.Join(o.Phases, ",") == "first,dups,burst" && o.Secret == "whsec_env" && o.N == 3 && o.Seed == 9 && o.SeedSet
		}, ""},
		{[]string{"--last", "--phases", "first,nope"}, nil, `unknown phase "nope"`},
		{[]string{"x"}, nil, "not a positive number"},
		{[]string{"--last", "--secret", "a", "--secret-env", "HOOKREPLAY_CHECK_SECRET"}, nil, "not both"},
	} {
		var got *checkOptions
		io, _, _, _ := iostreams.Test()
		f := newFactory(io)
		cmd := newCheckCmd(f, func(o *checkOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		code, msg := exitCode(cmd.Execute())
		if tc.wantErr != "" {
			if code != 2 || !strings.Contains(msg, tc.wantErr) {
				t.Errorf("%v: want exit 2 with %q, got %d %q", tc.args, tc.wantErr, code, msg)
			}
			continue
		}
		if code != 0 || got == nil || !tc.ok(got) {
			t.Errorf("%v: exit %d %q, options %+v", tc.args, code, msg, got)
		}
	}
}

// Usage errors are caught before anything is opened or sent.
func TestCheckValidate(t *testing.T) {
	base := func() *checkOptions {
		return &checkOptions{To: "http://127.0.0.1:1/h", deliverySelector: deliverySelector{Last: true}, ProbeCmd: []string{"echo 1"}, N: 10, Burst: 20,
			Settle: 1, SettleMax: 2}
	}
	for _, tc := range []struct {
		edit func(*checkOptions)
		want string
	}{
		{func(o *checkOptions) { o.To = "" }, "--to URL is required"},
		{func(o *checkOptions) { o.To, o.Last = "", false }, "check needs deliveries, the handler's URL and a probe"},
		{func(o *checkOptions) { o.To = "ftp://x" }, "--to ftp://x: want a URL (http://localhost:3000/webhooks), a port (3000) or host:port"},
		{func(o *checkOptions) { o.Last = false }, "which delivery?"},
		{func(o *checkOptions) { o.ProbeCmd = nil }, "no probe given"},
		{func(o *checkOptions) { o.ProbeSQL = []string{"SELECT 1"} }, "--probe-sql needs --dsn"},
		{func(o *checkOptions) { o.Burst = 1 }, "--burst"},
		{func(o *checkOptions) { o.Phases = []string{"crash"} }, "needs --serve"},
		{func(o *checkOptions) { o.Phases = []string{"tamper"} }, "needs --secret"},
		{func(o *checkOptions) { o.Phases = []string{"order"} }, "needs --reset-cmd"},
		{func(o *checkOptions) { o.Reports = []string{"pdf=x"} }, "pdf"},
	} {
		o := base()
		tc.edit(o)
		_, err := checkValidate(o)
		code, msg := exitCode(err)
		if code != 2 || !strings.Contains(msg, tc.want) {
			t.Errorf("want exit 2 with %q, got %d %q", tc.want, code, msg)
		}
	}
	if _, err := checkValidate(base()); err != nil {
		t.Fatalf("valid options rejected: %v", err)
	}
}

// A check of deliveries from the store needs the store: run in the wrong
// directory (or with a mistyped --db) it says so and creates nothing, while
// a check of --from files creates the database it records the run in.
func TestCheckFromTheStoreNeedsTheStore(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	probeArgs := []string{"--to", "http://127.0.0.1:1/h", "--probe-cmd", "echo 1", "-q"}
	for _, sel := range [][]string{{"--last"}, {"1"}, {"--event-id", "evt_1"}} {
		args := append(append([]string{"--db", missing, "check"}, sel...), probeArgs...)
		code, msg, _ := runRoot(t, args...)
		if code != 2 || !strings.Contains(msg, "no database at "+missing) {
			t.Errorf("%v: exit %d %q, want 2 and no database at", sel, code, msg)
		}
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("check %v created %s", sel, missing)
		}
	}
	from := filepath.Join(dir, "none.jsonl")
	if err := os.WriteFile(from, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, msg, _ := runRoot(t, append([]string{"--db", missing, "check", "--from", from}, probeArgs...)...)
	if code != 2 || !strings.Contains(msg, "no deliveries in the file") {
		t.Fatalf("--from an empty file: exit %d %q", code, msg)
	}
	if _, err := os.Stat(missing); err != nil {
		t.Fatalf("check --from did not create its database: %v", err)
	}
}

// --from reads JSONL; a file of another format import reads (HAR here) is
// named as such, with the way to check it.
func TestCheckFromOtherFormatSaysImport(t *testing.T) {
	dir := t.TempDir()
	har := filepath.Join(dir, "devtools.har")
	if err := os.WriteFile(har, []byte("{\n  \"log\": {\n    \"entries\": []\n  }\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, msg, _ := runRoot(t, "--db", filepath.Join(dir, "h.db"), "check", "--from", har, "--to", "http://127.0.0.1:1/h", "--probe-cmd", "echo 1", "-q")
	if code != 2 || !strings.Contains(msg, "a har file, and --from reads JSONL") || !strings.Contains(msg, "'hookreplay import "+har+"'") {
		t.Errorf("--from a HAR file: exit %d %q", code, msg)
	}
}
