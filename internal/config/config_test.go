package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

var ciEnv = env(map[string]string{"PGPASSWORD": "pw", "GITHUB_STEP_SUMMARY": "/tmp/summary.md"})

func TestLoadValid(t *testing.T) {
	f, err := Load("testdata/valid.yaml", ciEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Checks) != 2 || f.Checks[0].Name != "wallet" || f.Checks[1].Name != "latest" {
		t.Fatalf("checks %+v, want wallet then latest", f.Checks)
	}
	seed := int64(42)
	want := &Check{
		Name: "wallet", Line: 3,
		Deliveries: Deliveries{From: []string{"testdata/stripe.jsonl", "testdata/more.jsonl"}},
		To:         "http://127.0.0.1:8080/webhooks/stripe",
		Serve:      "./bin/server --listen 127.0.0.1:8080",
		Reset:      "./scripts/reset-db",
		Probes: []Probe{
			{Name: "balance", Line: 10, SQL: "SELECT balance FROM wallets WHERE customer = 'cus_1'", DSN: "postgres://app:pw@localhost/app"},
			{Name: "emails", Line: 13, Cmd: "psql -tAc 'select count(*) from emails'"},
			{Name: "calls", Line: 14, Sink: "127.0.0.1:9100"},
		},
		Phases:    []string{"first", "dups", "burst"},
		SecretEnv: "STRIPE_WEBHOOK_SECRET",
		Copies:    5, Burst: 8, Settle: 100 * time.Millisecond, SettleMax: 3 * time.Second,
		ProviderTimeout: 10 * time.Second, Seed: &seed,
		Reports: []Report{{Format: "junit", Path: "reports/wallet.xml"}, {Format: "markdown", Path: "/tmp/summary.md", shared: true}},
	}
	if !reflect.DeepEqual(f.Checks[0], want) {
		t.Errorf("wallet\n got %+v\nwant %+v", f.Checks[0], want)
	}
	latest := f.Checks[1]
	wantD := Deliveries{Provider: "github", Type: "push", Since: 7 * 24 * time.Hour, Limit: 3}
	if !reflect.DeepEqual(latest.Deliveries, wantD) || !latest.Insecure || !reflect.DeepEqual(latest.Phases, []string{"first", "dups"}) ||
		latest.Probes[0].HTTP != "http://127.0.0.1:8080/count" {
		t.Errorf("latest %+v", latest)
	}
}

// TestParseErrors: every problem is one line naming the file and the line it is on.
func TestParseErrors(t *testing.T) {
	head := "checks:\n  a:\n    deliveries: {from: x.jsonl}\n    to: http://127.0.0.1:1/h\n    probes: {n: {cmd: echo 1}}\n"
	for _, tt := range []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"unknown top key", "checks: {}\nchecs: 1\n", 2, `unknown key "checs"`},
		{"unknown check key", head + "    tos: x\n", 6, `check a: unknown key "tos" (known: deliveries, to,`},
		{"key given twice", head + "    probes: {n: {cmd: echo, dns: x}}\n", 6, `"probes" is given twice`},
		{"unknown probe key", "checks:\n  a:\n    to: http://x/\n    probes:\n      n: {sql: s, dns: x}\n", 5, `probe n: unknown key "dns"`},
		{"literal secret key", head + "    secret: abc\n", 6, "secret: a literal secret is refused"},
		{"literal secret in serve", head + "    serve: ./server --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", 6, "a literal secret (whsec_Mf…) is refused"},
		{"literal password in dsn", "checks:\n  a:\n    to: http://x/\n    probes:\n      n:\n        sql: s\n        dsn: postgres://u:hunter2@db/app\n", 7, "literal password is refused"},
		{"literal password kv", "checks:\n  a:\n    to: http://x/\n    probes:\n      n: {sql: s, dsn: 'host=db password=hunter2'}\n", 5, "literal password is refused"},
		{"type error int", head + "    copies: ten\n", 6, `copies: want a whole number, got "ten"`},
		{"type error bool", head + "    insecure: maybe\n", 6, `insecure: want true or false, got "maybe"`},
		{"type error list", head + "    serve: [a, b]\n", 6, "serve: want text, got a list"},
		{"duration unit", head + "    settle: 5\n", 6, "settle: 5: give a unit, e.g. 5s"},
		{"out of range", head + "    burst: 1\n", 6, "burst: 1 is out of range (2 to 1024)"},
		{"unknown phase", head + "    phases: [first, dupes]\n", 6, `unknown phase "dupes"`},
		{"unknown report", head + "    reports: {xml: r.xml}\n", 6, `reports: unknown key "xml"`},
		{"report to stdout", head + "    reports: {json: '-'}\n", 6, "give a file"},
		{"missing to", "checks:\n  a:\n    deliveries: {last: true}\n    probes: {n: {cmd: x}}\n", 2, "to: is required"},
		{"no probes", "checks:\n  a:\n    deliveries: {last: true}\n    to: http://x/\n", 2, "no probes"},
		{"no deliveries", "checks:\n  a:\n    to: http://x/\n    probes: {n: {cmd: x}}\n", 2, "which deliveries?"},
		{"bad url", "checks:\n  a:\n    deliveries: {last: true}\n    to: ftp://x/\n    probes: {n: {cmd: x}}\n", 4, "to: ftp://x/: want a URL (http://localhost:3000/webhooks), a port (3000) or host:port"},
		{"sql without dsn", "checks:\n  a:\n    deliveries: {last: true}\n    to: http://x/\n    probes:\n      n: {sql: s}\n", 6, "sql needs dsn"},
		{"two kinds", "checks:\n  a:\n    deliveries: {last: true}\n    to: http://x/\n    probes:\n      n: {cmd: x, http: 'http://y/'}\n", 6, "exactly one of"},
		{"unset env", "checks:\n  a:\n    deliveries: {last: true}\n    to: http://${NOPE}/\n    probes: {n: {cmd: x}}\n", 4, "NOPE is not set"},
		{"alias", "x: &a 1\nchecks: *a\n", 1, "anchors and aliases"},
		{"syntax", "checks:\n  a: [\n", 2, "not valid YAML"},
		{"secret_env name", head + "    secret_env: my secret\n", 6, "not an environment variable name"},
		{"same report twice", "checks:\n  a:\n    deliveries: {last: true}\n    to: http://x/\n    probes: {n: {cmd: x}}\n    reports: {junit: r.xml}\n  b:\n    deliveries: {last: true}\n    to: http://x/\n    probes: {n: {cmd: x}}\n    reports: {json: ./r.xml}\n", 7, "also written by check a"},
		{"limit without filter", "checks:\n  a:\n    deliveries: {from: x.jsonl, limit: 2}\n", 3, "limit applies to provider, type or since"},
		{"last with since", "checks:\n  a:\n    deliveries: {last: true, since: 2h}\n", 3, "only provider and type narrow them"},
		{"probe name", "checks:\n  a:\n    probes:\n      Balance: {cmd: x}\n", 4, "lower-case word"},
		{"match without sink", "checks:\n  a:\n    probes:\n      n: {cmd: x, match: POST /}\n", 4, "match is only for a sink"},
		{"redis write", "checks:\n  a:\n    probes:\n      n: {redis: 'redis://127.0.0.1:6379/0 DEL evt:1'}\n", 4, "redis: DEL is not a read hookreplay runs"},
		{"redis literal password", "checks:\n  a:\n    probes:\n      n: {redis: 'redis://u:hunter2@127.0.0.1:6379/0 DBSIZE'}\n", 4, "literal password is refused"},
		{"two smtp sinks", "checks:\n  a:\n    probes:\n      m: {smtp: 2525}\n      n: {smtp: 2526}\n", 5, "one smtp sink"},
		{"dedupe_ttl unit", head + "    dedupe_ttl: 24\n", 6, "dedupe_ttl: 24: give a unit"},
		{"kill without start", head + "    kill: docker compose kill -s SIGKILL app\n", 2, "kill and start go together"},
		{"bad check name", "checks:\n  a b:\n    to: http://x/\n", 2, `check name "a b"`},
		{"not a mapping", "- 1\n", 1, "want a mapping"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("ci.yaml", []byte(tt.yaml), env(nil))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %v, want a *config.Error", err)
			}
			if ce.Line != tt.line || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q (line %d), want line %d containing %q", err, ce.Line, tt.line, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "ci.yaml:") || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "yaml: ") {
				t.Errorf("error %q: want one line starting with the file name, without the library's words", err)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "MfKQ9r8GKYq") {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}

// The effect probes and the retention inputs map onto their flags' values.
func TestParseEffectProbes(t *testing.T) {
	y := "checks:\n  a:\n    deliveries: {last: true}\n    to: http://x/\n    dedupe_ttl: 24h\n    forget: redis-cli DEL evt:$HOOKREPLAY_EVENT_ID\n" +
		"    probes:\n      seen: {redis: \"redis://127.0.0.1:6379/0 KEYS-COUNT 'evt:*'\"}\n      emails: {smtp: 2525, match: ['to:*@example.com']}\n"
	f, err := Parse("ci.yaml", []byte(y), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Checks[0]
	if c.DedupeTTL != 24*time.Hour || c.Forget != "redis-cli DEL evt:$HOOKREPLAY_EVENT_ID" || c.Probes[0].Redis != "redis://127.0.0.1:6379/0 KEYS-COUNT 'evt:*'" ||
		c.Probes[1].SMTP != "2525" || c.Probes[1].Match[0] != "to:*@example.com" {
		t.Fatalf("parsed %+v %+v", c, c.Probes)
	}
}

// Every check may append its Markdown report to $GITHUB_STEP_SUMMARY.
func TestStepSummaryShared(t *testing.T) {
	check := func(name string) string {
		return "  " + name + ":\n    deliveries: {last: true}\n    to: http://x/\n    probes: {n: {cmd: x}}\n    reports: {markdown: '${GITHUB_STEP_SUMMARY}'}\n"
	}
	f, err := Parse("ci.yaml", []byte("checks:\n"+check("a")+check("b")), env(map[string]string{"GITHUB_STEP_SUMMARY": "/tmp/s.md"}))
	if err != nil || len(f.Checks) != 2 || f.Checks[1].Reports[0].Path != "/tmp/s.md" {
		t.Fatalf("two checks appending to the step summary: %v", err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	if got := Find(dir); got != "" {
		t.Fatalf("Find in an empty dir = %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yml"), []byte("checks: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Find(dir); got != filepath.Join(dir, "hookreplay.yml") {
		t.Fatalf("Find = %q, want the .yml", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte("checks: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Find(dir); got != filepath.Join(dir, "hookreplay.yaml") {
		t.Fatalf("Find = %q, want the .yaml first", got)
	}
	if _, err := Load(filepath.Join(dir, "nope.yaml"), nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Load of a missing file = %v", err)
	}
}

// FuzzParse: whatever the bytes, Parse returns a config or a one-line
// *Error, never panics, and never echoes a secret-shaped value.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/valid.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("checks:\n  a:\n    to: http://x/\n    secret: whsec_abcdefghijkl\n"))
	f.Add([]byte("a: &x [*x, *x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("f.yaml", data, env(map[string]string{"V": "v"}))
		if err != nil {
			assertOneLineError(t, err)
			return
		}
		if len(cfg.Checks) == 0 {
			t.Fatal("a config without checks was accepted")
		}
		for _, c := range cfg.Checks {
			if c.To == "" || len(c.Probes) == 0 {
				t.Fatalf("check %s accepted without to or probes", c.Name)
			}
		}
	})
}

// Every value a ${VAR} was replaced with, and the credential-named
// variables a shell command refers to, are FromEnv; an error quoting one
// shows [REDACTED].
func TestFromEnv(t *testing.T) {
	e := env(map[string]string{"URL": "http://127.0.0.1:9000/hook", "API_TOKEN": "tok-123456", "HOME": "/home/ci", "PGPASSWORD": "pw-abcdef"})
	y := `checks:
  a:
    deliveries: {last: true}
    to: ${URL}
    reset: 'curl -H "Authorization: Bearer $API_TOKEN" -d "" http://127.0.0.1:9000/reset && ls $HOME'
    probes:
      n: {dsn: "postgres://app:${PGPASSWORD}@127.0.0.1/app", sql: "SELECT 1"}
`
	f, err := Parse("ci.yaml", []byte(y), e)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.FromEnv, " ")
	if got != "http://127.0.0.1:9000/hook tok-123456 pw-abcdef" {
		t.Fatalf("FromEnv = %q", f.FromEnv)
	}
	bad := env(map[string]string{"URL": "http://127.0.0.1:notaport-s3cret/x"})
	_, err = Parse("ci.yaml", []byte("checks:\n  a:\n    deliveries: {last: true}\n    to: ${URL}\n    probes: {n: {cmd: echo 1}}\n"), bad)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("err = %v", err)
	}
}

// assertOneLineError fails t unless err, refusing a config or a
// declaration, is a *config.Error of one line (what the fuzz targets hold
// every refusal to).
func assertOneLineError(t *testing.T, err error) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want *config.Error", err, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error spans lines: %q", err)
	}
}
