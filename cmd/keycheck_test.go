package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/keycheck"
)

// Every key a keycheck may have in hookreplay.yaml is a keycheck flag, so
// the file runs exactly as the command line would.
func TestKeyCheckConfigKeysAreFlags(t *testing.T) {
	fl := pflag.NewFlagSet("keycheck", pflag.ContinueOnError)
	var checks string
	keycheckFlags(fl, &keycheckOptions{}, &checks)
	for _, k := range config.KeyCheckKeys {
		if fl.Lookup(strings.ReplaceAll(k, "_", "-")) == nil {
			t.Errorf("config key %s is no keycheck flag", k)
		}
	}
}

func TestKeycheckFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	var got *keycheckOptions
	cmd := newKeycheckCmd(f, func(o *keycheckOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--to", "8080/v1/messages", "--body", `{"a":1}`, "--checks", "burst,5xx", "--settle", "50ms", "--profile", "stripe"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.To != "http://127.0.0.1:8080/v1/messages" || strings.Join(got.Checks, ",") != "burst,5xx" || !got.SettleSet || got.Profile != "stripe" {
		t.Errorf("parsed %+v", got)
	}
	cmd = newKeycheckCmd(f, func(o *keycheckOptions) error { return nil })
	cmd.SetArgs([]string{"--to", "8080", "--checks", "burst,nope"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `unknown check "nope"`) {
		t.Errorf("unknown check: %v", err)
	}
}

func TestKeycheckProfileOverrides(t *testing.T) {
	o := &keycheckOptions{Profile: "ietf", ReuseStatus: 409, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: 64, OutageStatus: -1, ReplayHeader: "X-Replayed", Replay5xx: "true"}
	p, err := keycheckProfile(o)
	if err != nil {
		t.Fatal(err)
	}
	if p.ReuseStatus != 409 || p.InFlightStatus != 409 || p.MaxKeyLength != 64 || p.KeyTooLongStatus != 400 || p.ReplayHeader != "X-Replayed" || p.ReplayValue != "true" || !p.Replays5xx {
		t.Errorf("profile %+v", p)
	}
	if !strings.HasPrefix(p.Name, "ietf (") {
		t.Errorf("name %q does not say it was overridden", p.Name)
	}
	for _, bad := range []*keycheckOptions{
		{Profile: "paypal", ReuseStatus: -1, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: -1, OutageStatus: -1},
		{Profile: "bird", ReuseStatus: 42, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: -1, OutageStatus: -1},
		{Profile: "bird", ReuseStatus: -1, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: -1, OutageStatus: -1, Replay5xx: "maybe"},
		{Profile: "ietf", ReuseStatus: -1, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: -1, OutageStatus: -1, OpenFingerprint: "query,path"},
	} {
		if _, err := keycheckProfile(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	// The ietf draft leaves whitespace, query and method to the server;
	// --whitespace-reuse takes whitespace back, --open-fingerprint sets them.
	for _, tc := range []struct {
		profile, whitespace, open string
		want                      []string
	}{
		{"ietf", "", "", []string{"whitespace", "query", "method"}},
		{"ietf", "true", "", []string{"query", "method"}},
		{"ietf", "", "none", nil},
		{"bird", "", "Method, query", []string{"method", "query"}},
	} {
		p, err := keycheckProfile(&keycheckOptions{Profile: tc.profile, ReuseStatus: -1, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: -1, OutageStatus: -1, WhitespaceReuse: tc.whitespace, OpenFingerprint: tc.open})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.OpenFingerprint, tc.want) {
			t.Errorf("%+v: open fingerprint %v, want %v", tc, p.OpenFingerprint, tc.want)
		}
	}
	if p, err := keycheckProfile(&keycheckOptions{Profile: "bird", ReuseStatus: -1, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: -1, OutageStatus: -1, Replay5xx: "either"}); err != nil || !p.Open5xx {
		t.Errorf("--replay-5xx either: %+v, %v", p, err)
	}
	if p, err := keycheckProfile(&keycheckOptions{Profile: "ietf", ReuseStatus: -1, InFlightStatus: -1, KeyTooLongStatus: -1, MaxKeyLength: -1, OutageStatus: -1, Replay5xx: "false"}); err != nil || p.Open5xx || p.Replays5xx {
		t.Errorf("--replay-5xx false under ietf: %+v, %v", p, err)
	}
	if !slices.Equal(keycheck.IETF.OpenFingerprint, keycheck.FingerprintParts) {
		t.Errorf("an override changed the ietf profile itself: %v", keycheck.IETF.OpenFingerprint)
	}
	if _, ok := keycheck.ProfileNamed("bird"); !ok {
		t.Error("no bird profile")
	}
}

func TestKeycheckConfigMapsOntoFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hookreplay.yaml")
	yaml := `keychecks:
  messages:
    to: 8080/v1/messages
    body: {to: "+31600000000", text: "hi {{nonce}}"}
    header: ["Authorization: AccessKey acct_a"]
    other_account: "Authorization: AccessKey acct_b"
    profile: ietf
    reuse_status: 409
    checks: [burst, scope]
    burst: 30
    settle: 80ms
    probes:
      count: {http: http://127.0.0.1:8080/debug/count}
    reports:
      junit: out/keycheck.xml
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	o, err := keycheckOptionsFromConfig(&keycheckOptions{IO: f.IO}, cfg.KeyChecks[0])
	if err != nil {
		t.Fatal(err)
	}
	if o.To != "http://127.0.0.1:8080/v1/messages" || o.Body != `{"text":"hi {{nonce}}","to":"+31600000000"}` || o.Profile != "ietf" || o.ReuseStatus != 409 ||
		o.Burst != 30 || !o.SettleSet || strings.Join(o.Checks, ",") != "burst,scope" || len(o.OtherAccount) != 1 || len(o.Headers) != 1 ||
		len(o.probes.ProbeHTTP) != 1 || !strings.HasPrefix(o.probes.ProbeHTTP[0], "count=") || len(o.Reports) != 1 || o.InFlightStatus != -1 {
		t.Errorf("mapped %+v", o)
	}
}

// Usage mistakes are one line and exit 2, before anything is sent.
func TestKeycheckUsageErrors(t *testing.T) {
	base := func() *keycheckOptions {
		io, _, _, _ := iostreams.Test()
		f := newFactory(io)
		o := &keycheckOptions{IO: io, Store: f.Store}
		fl := pflag.NewFlagSet("keycheck", pflag.ContinueOnError)
		var checks string
		keycheckFlags(fl, o, &checks)
		o.To, o.Body = "http://127.0.0.1:1/v1/messages", `{"a":1}`
		o.probes.ProbeHTTP = []string{"http://127.0.0.1:1/count"}
		f.DBPath = filepath.Join(t.TempDir(), "h.db")
		return o
	}
	for _, tc := range []struct {
		edit func(*keycheckOptions)
		want string
	}{
		{func(o *keycheckOptions) { o.To = "" }, "--to URL is required"},
		{func(o *keycheckOptions) { o.Body = "" }, "--body is required"},
		{func(o *keycheckOptions) { o.probes.ProbeHTTP = nil }, "no probe given"},
		{func(o *keycheckOptions) { o.StoreDown = "true" }, "--store-down-cmd and --store-up-cmd go together"},
		{func(o *keycheckOptions) { o.Key = "fixed" }, "a pattern needs {{uuid}} or {{nonce}}"},
		{func(o *keycheckOptions) { o.Also = []string{"PATCH messages"} }, "--also \"PATCH messages\": want 'METHOD /path'"},
		{func(o *keycheckOptions) { o.Headers = []string{"no colon"} }, "-H: header \"no …\" is not of the form"},
		{func(o *keycheckOptions) { o.Burst = 1 }, "--burst 1 is out of range"},
		{func(o *keycheckOptions) { o.Profile = "paypal" }, `--profile "paypal"`},
		{func(o *keycheckOptions) { o.JSON, o.Reports = true, []string{"junit=-"} }, "only one report can go there"},
	} {
		o := base()
		tc.edit(o)
		err := keycheckRun(context.Background(), o)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want exit 2 saying %q, got %v", tc.want, err)
		}
	}
}
