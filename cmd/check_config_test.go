package cmd

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// checkOptionsFrom runs check with args through runF and returns the options
// of every check it would run.
func checkOptionsFrom(t *testing.T, args ...string) ([]*checkOptions, int, string) {
	t.Helper()
	var got []*checkOptions
	io, _, _, _ := iostreams.Test()
	cmd := newCheckCmd(newFactory(io), func(o *checkOptions) error { got = append(got, o); return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	code, msg := exitCode(cmd.Execute())
	for _, o := range got {
		o.IO, o.Store, o.ExistingStore = nil, nil, nil // functions and streams are not comparable
	}
	return got, code, msg
}

// A config check becomes exactly the options its command line builds.
func TestCheckConfigMapsOntoFlags(t *testing.T) {
	t.Setenv("HOOKREPLAY_CFG_SECRET", "whsec_cfgtest")
	t.Setenv("HOOKREPLAY_CFG_PW", "pw")
	path := filepath.Join(t.TempDir(), "ci.yaml")
	yaml := `checks:
  wallet:
    deliveries: {from: [a.jsonl, b.jsonl], ids: [7], event_id: evt_1}
    to: http://127.0.0.1:8080/hook
    serve: ./server
    reset: ./reset
    probes:
      balance: {sql: SELECT 1, dsn: 'postgres://u:${HOOKREPLAY_CFG_PW}@db/app'}
      mails: {cmd: echo 2}
      api: {http: 'http://127.0.0.1:9/count'}
      calls: {sink: '127.0.0.1:9100', match: 'POST /v1/send'}
    phases: [first, dups, crash]
    secret_env: HOOKREPLAY_CFG_SECRET
    copies: 4
    burst: 6
    jobs: 3
    settle: 150ms
    settle_max: 2s
    provider_timeout: 3s
    max_time: 90s
    seed: 5
    insecure: true
    reports: {junit: out.xml, markdown: out.md}
  other:
    deliveries: {last: true, provider: Stripe, type: 'invoice.*'}
    to: http://127.0.0.1:8081/hook
    probes: {n: {cmd: echo 1}}
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, code, msg := checkOptionsFrom(t, "--config", path)
	if code != 0 || len(fromFile) != 2 {
		t.Fatalf("config: exit %d %q, %d checks", code, msg, len(fromFile))
	}
	fromFlags, code, msg := checkOptionsFrom(t, "7", "--from", "a.jsonl", "--from", "b.jsonl", "--event-id", "evt_1",
		"--to", "http://127.0.0.1:8080/hook", "--serve", "./server", "--reset-cmd", "./reset",
		"--probe-sql", "balance=SELECT 1", "--dsn", "postgres://u:pw@db/app", "--probe-cmd", "mails=echo 2",
		"--probe-http", "api=http://127.0.0.1:9/count", "--sink", "calls=127.0.0.1:9100", "--sink-match", "POST /v1/send", "--phases", "first,dups,crash",
		"--secret-env", "HOOKREPLAY_CFG_SECRET", "-n", "4", "--burst", "6", "--jobs", "3", "--settle", "150ms", "--settle-max", "2s",
		"--provider-timeout", "3s", "--max-time", "90s", "--seed", "5", "--insecure", "--report", "junit=out.xml", "--report", "markdown=out.md")
	if code != 0 || len(fromFlags) != 1 {
		t.Fatalf("flags: exit %d %q", code, msg)
	}
	if !reflect.DeepEqual(fromFile[0], fromFlags[0]) {
		t.Errorf("config check\n%+v\nflags\n%+v", fromFile[0], fromFlags[0])
	}
	defaults, _, _ := checkOptionsFrom(t, "--last", "--provider", "stripe", "--type", "invoice.*", "--to", "http://127.0.0.1:8081/hook", "--probe-cmd", "n=echo 1")
	if !reflect.DeepEqual(fromFile[1], defaults[0]) {
		t.Errorf("a check with no settings does not get the flags' defaults:\n%+v\n%+v", fromFile[1], defaults[0])
	}

	only, code, _ := checkOptionsFrom(t, "--config", path, "other")
	if code != 0 || len(only) != 1 || only[0].To != "http://127.0.0.1:8081/hook" {
		t.Errorf("check NAME: exit %d, %+v", code, only)
	}
	// --jobs is the machine's: it goes with a config file, for every check.
	jobs, code, msg := checkOptionsFrom(t, "--config", path, "--jobs", "2")
	if code != 0 || len(jobs) != 2 || jobs[0].Jobs != 2 || jobs[1].Jobs != 2 {
		t.Errorf("--config with --jobs 2: exit %d %q, %+v", code, msg, jobs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", path, "nope"}, `has no check "nope" (its checks: wallet, other)`},
		{[]string{"--config", path, "--to", "http://x/"}, "--to: the checks' settings come from"},
		{[]string{"--config", path, "-n", "3", "--burst", "4"}, "--burst, --copies: the checks' settings come from"},
		{[]string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, "missing.yaml: no such file"},
	} {
		_, code, msg := checkOptionsFrom(t, tc.args...)
		if code != 2 || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: want exit 2 with %q, got %d %q", tc.args, tc.want, code, msg)
		}
	}
}

// hookreplay.yaml's to: and check's --to read a handler's address through
// one parser: the same forms become the same URL, and a bad value is
// refused with the same words after the key or flag that holds it.
func TestConfigToAndFlagToAgree(t *testing.T) {
	for _, tc := range []struct{ to, want, err string }{
		{to: "3000", want: "http://127.0.0.1:3000"},
		{to: ":3000", want: "http://127.0.0.1:3000"},
		{to: "localhost:3000", want: "http://localhost:3000"},
		{to: "3000/webhooks/stripe", want: "http://127.0.0.1:3000/webhooks/stripe"},
		{to: "https://example.com/hook", want: "https://example.com/hook"},
		{to: "ftp://x/", err: "ftp://x/: want a URL (http://localhost:3000/webhooks), a port (3000) or host:port"},
		{to: "example.com/hook", err: "example.com/hook: want a URL"},
		{to: "99999", err: "99999: port 99999 is out of range (1 to 65535)"},
		{to: "localhost:70000", err: "localhost:70000: port 70000 is out of range (1 to 65535)"},
	} {
		path := filepath.Join(t.TempDir(), "ci.yaml")
		yaml := "checks:\n  a:\n    deliveries: {last: true}\n    to: '" + tc.to + "'\n    probes: {n: {cmd: echo 1}}\n"
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		fromFile, fileCode, fileMsg := checkOptionsFrom(t, "--config", path)

		io, _, _, _ := iostreams.Test()
		var fromFlag *checkOptions
		flagCode, flagMsg := captureRunFlags(newCheckCmd(newFactory(io), func(o *checkOptions) error { fromFlag = o; return nil }),
			io, []string{"--last", "--to", tc.to, "--probe-cmd", "n=echo 1"})

		if tc.err != "" {
			if fileCode != 2 || !strings.Contains(fileMsg, "ci.yaml:4: check a: to: "+tc.err) {
				t.Errorf("to: %s: exit %d %q, want 2 and %q", tc.to, fileCode, fileMsg, tc.err)
			}
			if flagCode != 2 || !strings.HasPrefix(flagMsg, "--to "+tc.err) {
				t.Errorf("--to %s: exit %d %q, want 2 and %q", tc.to, flagCode, flagMsg, tc.err)
			}
			continue
		}
		if fileCode != 0 || len(fromFile) != 1 || fromFile[0].To != tc.want {
			t.Errorf("to: %s: exit %d %q %+v, want To %s", tc.to, fileCode, fileMsg, fromFile, tc.want)
		}
		if flagCode != 0 || fromFlag == nil || fromFlag.To != tc.want {
			t.Errorf("--to %s: exit %d %q, want To %s", tc.to, flagCode, flagMsg, tc.want)
		}
	}
}

// A config's one_per_type is check --one-per-type with its filters.
func TestCheckConfigOnePerType(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ci.yaml")
	yaml := `checks:
  nightly:
    deliveries: {one_per_type: true, provider: Stripe, type: 'invoice.*', since: 24h}
    to: http://127.0.0.1:8081/hook
    probes: {n: {cmd: echo 1}}
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	got, code, msg := checkOptionsFrom(t, "--config", path)
	if code != 0 || len(got) != 1 {
		t.Fatalf("exit %d %q", code, msg)
	}
	if o := got[0]; !o.OnePerType || o.OnlyProvider != "stripe" || o.OnlyType != "invoice.*" || o.OnlySince != 24*time.Hour || len(o.IDs) != 0 {
		t.Errorf("one_per_type: %+v", o.deliverySelector)
	}
	bad := strings.Replace(yaml, "since: 24h", "limit: 3", 1)
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code, msg := checkOptionsFrom(t, "--config", path); code != 2 || !strings.Contains(msg, "one_per_type takes the newest delivery of each type") {
		t.Errorf("one_per_type with limit: exit %d %q", code, msg)
	}
}
