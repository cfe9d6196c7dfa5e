package keycheck_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/demo/idemapi"
	"github.com/hookreplay/hookreplay/internal/keycheck"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// fullOptions is a keycheck of api with every check's input given.
func fullOptions(t *testing.T, api *idemapi.API, p keycheck.Profile) keycheck.Options {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	down := filepath.Join(t.TempDir(), "store-down")
	api.StoreDown = down
	ps, err := probe.FromSpecs(context.Background(), probe.Specs{HTTP: []string{"count=" + srv.URL + "/debug/count"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ps.Close() })
	u, _ := url.Parse(srv.URL + "/v1/messages")
	return keycheck.Options{
		Target:       u,
		Headers:      message.Headers{{Name: "Authorization", Value: "AccessKey acct_a"}},
		Body:         []byte(`{"to":"+31600000000","text":"hi {{nonce}}"}`),
		SlowBody:     []byte(`{"to":"+31600000000","text":"slow {{nonce}}","delay_ms":400}`),
		FailBody:     []byte(`{"to":"+31600000000","text":"fail {{nonce}}","fail_once":true}`),
		InvalidBody:  []byte(`{"to":"+31600000000"}`),
		OtherAccount: message.Headers{{Name: "Authorization", Value: "AccessKey acct_b"}},
		Also:         []keycheck.Route{{Method: "PATCH", Path: "/v1/messages/{id}", Body: []byte(`{"text":"edited"}`)}, {Method: "DELETE", Path: "/v1/messages/{id}"}},
		StoreDownCmd: "touch " + down,
		StoreUpCmd:   "rm -f " + down,
		TTL:          0,
		Profile:      p,
		Probes:       ps.Probes,
		LearnSettle:  true,
	}
}

func statuses(k *report.KeyCheck) map[string]report.KeyCheckResult {
	out := map[string]report.KeyCheckResult{}
	for _, c := range k.Checks {
		out[c.Name] = c
	}
	return out
}

func TestCorrectAPIPassesEveryCheck(t *testing.T) {
	t.Parallel()
	o := fullOptions(t, idemapi.New(idemapi.Correct), keycheck.Bird)
	start := time.Now()
	k, err := keycheck.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full keycheck took %s", time.Since(start))
	for _, c := range k.Checks {
		want := report.Pass
		switch c.Name {
		case "4xx":
			want = report.Info
		case "expiry":
			want = report.Skip
		}
		if c.Status != want {
			t.Errorf("%s: %s (want %s): %s | %s", c.Name, c.Status, want, c.Why, c.Observed)
		}
	}
	if k.Verdict != report.VerdictPass {
		t.Errorf("verdict %s", k.Verdict)
	}
}

func TestEachMistakeIsCaughtByItsCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		m      idemapi.Mistake
		check  string
		why    string
		checks []string
	}{
		{idemapi.Race, "burst", "check-then-insert", nil},
		{idemapi.Store5xx, "5xx", "stored 500 was replayed", nil},
		{idemapi.NoFingerprint, "reuse-body", "no fingerprint", nil},
		// demo api --help says 4xx fails too: the stored 400 answers the valid body.
		{idemapi.NoFingerprint, "4xx", "no fingerprint: the valid body with the key got the stored 400", nil},
		{idemapi.NoInFlight, "in-flight", "no in-flight marker", nil},
		{idemapi.NoReplayHeader, "replay-header", "no replay header", nil},
		{idemapi.Unscoped, "scope", "data leak", nil},
	}
	for _, tc := range cases {
		t.Run(string(tc.m), func(t *testing.T) {
			t.Parallel()
			o := fullOptions(t, idemapi.New(tc.m), keycheck.Bird)
			o.Checks = []string{tc.check}
			if tc.m == idemapi.Race {
				o.Checks = []string{"replay", "lost", "in-flight", "reuse-body", "no-key", "burst"}
			}
			k, err := keycheck.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			got := statuses(k)[tc.check]
			if got.Status != report.Fail || !strings.Contains(got.Why, tc.why) {
				t.Errorf("%s: %s %q, want fail naming %q", tc.check, got.Status, got.Why, tc.why)
			}
			if k.Verdict != report.VerdictFail {
				t.Errorf("verdict %s", k.Verdict)
			}
			if tc.m == idemapi.Race {
				// Sequential and overlapping checks cannot see this race.
				for _, name := range []string{"replay", "lost", "in-flight", "reuse-body", "no-key"} {
					if s := statuses(k)[name]; s.Status != report.Pass {
						t.Errorf("race API: %s %s: %s", name, s.Status, s.Why)
					}
				}
			}
		})
	}
}

// A race in which every copy of a burst ran is the race, not a key the API
// reads from another header: replay saw the key honoured. The burst's why
// suggested --key-header (seen by newuser trying keycheck on demo api race,
// where all 20 copies ran). Two copies, so that both run.
func TestRaceIsNotBlamedOnTheKeyHeader(t *testing.T) {
	t.Parallel()
	o := fullOptions(t, idemapi.New(idemapi.Race), keycheck.Bird)
	o.Checks = []string{"replay", "burst"}
	o.Burst = 2
	k, err := keycheck.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := statuses(k)["burst"]
	if got.Status != report.Fail || !strings.Contains(got.Why, "check-then-insert") || strings.Contains(got.Why, "a header other than") {
		t.Errorf("burst %s %q, want a fail naming check-then-insert and no other key header", got.Status, got.Why)
	}
	// The spread is rounded as every duration shown is (it read "last bytes
	// within 188.999µs").
	if m := regexp.MustCompile(`within [0-9]+\.[0-9]{3}`).FindString(got.Observed); m != "" {
		t.Errorf("burst observed %q: the spread is not rounded", got.Observed)
	}
}

// A correct API of each profile's contract passes every check under that
// profile: the profile decides the codes, not the defaults.
func TestCorrectAPIOfEachProfilePasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    keycheck.Profile
		c    idemapi.Contract
		skip []string
	}{
		{keycheck.IETF, idemapi.IETF, []string{"replay-header", "key-length", "expiry"}},
		{keycheck.Stripe, idemapi.Stripe, []string{"expiry"}},
	} {
		t.Run(tc.p.Name, func(t *testing.T) {
			t.Parallel()
			api := idemapi.New(idemapi.Correct)
			api.Contract = tc.c
			k, err := keycheck.Run(context.Background(), fullOptions(t, api, tc.p))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range k.Checks {
				want := report.Pass
				switch {
				case c.Name == "4xx":
					want = report.Info
				case slices.Contains(tc.skip, c.Name):
					want = report.Skip
				}
				if c.Status != want {
					t.Errorf("%s: %s (want %s): %s | %s", c.Name, c.Status, want, c.Why, c.Observed)
				}
			}
		})
	}
}

// Codes of another profile are a warn that names both, never a fail; an
// API that holds a copy until the first is done is a warn too.
func TestOtherProfilesCodesAndWaitingAreWarnings(t *testing.T) {
	t.Parallel()
	o := fullOptions(t, idemapi.New(idemapi.Correct), keycheck.IETF)
	o.Checks = []string{"reuse-body"}
	k, err := keycheck.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(k)["reuse-body"]; got.Status != report.Warn || got.Why != "409 for reuse: bird style; the ietf draft says 422" {
		t.Errorf("reuse-body under ietf: %s %q", got.Status, got.Why)
	}
	if k.Verdict != report.VerdictPass {
		t.Errorf("verdict %s", k.Verdict)
	}
	o = fullOptions(t, idemapi.New(idemapi.Blocking), keycheck.Bird)
	o.Checks = []string{"in-flight"}
	if k, err = keycheck.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := statuses(k)["in-flight"]; got.Status != report.Warn || !strings.Contains(got.Why, "waited, then replayed") {
		t.Errorf("in-flight of a blocking API: %s %q", got.Status, got.Why)
	}
}

// Fiber's middleware reads its key from X-Idempotency-Key. A keycheck that
// sends Idempotency-Key (the default) must find that out and stop with a
// setup error naming the header — not fail replay, lost, burst, reuse and
// key-length on a key the API never read. The same API with the header
// given passes.
func TestKeyInAnotherHeaderIsASetupError(t *testing.T) {
	t.Parallel()
	for _, checks := range [][]string{nil, {"burst"}, {"lost"}, {"key-length"}} {
		api := idemapi.New(idemapi.Correct)
		api.KeyHeader = "X-Idempotency-Key"
		o := fullOptions(t, api, keycheck.Bird)
		o.Checks = checks
		o.Name = func(in keycheck.Input) string {
			if in == keycheck.InputKeyHeader {
				return "--key-header"
			}
			return ""
		}
		k, err := keycheck.Run(context.Background(), o)
		var se *keycheck.SetupError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "honours it in X-Idempotency-Key") || !strings.Contains(err.Error(), "give --key-header X-Idempotency-Key") {
			t.Errorf("checks %v: %v, want a setup error naming --key-header X-Idempotency-Key", checks, err)
		}
		// The report of what ran names the check that stopped.
		if k == nil || k.Checks[len(k.Checks)-1].Name == "" || k.Checks[len(k.Checks)-1].Status != report.Error {
			t.Errorf("checks %v: the stopped check is not named in the report: %+v", checks, k)
		}
		o.KeyHeader = "X-Idempotency-Key"
		o.Checks = []string{"replay", "burst", "lost"}
		k, err = keycheck.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if k.Verdict != report.VerdictPass {
			t.Errorf("with --key-header X-Idempotency-Key: verdict %s: %+v", k.Verdict, k.Checks)
		}
	}
}

// An API that reads its key from a header keycheck does not know fails
// replay (the key was not honoured), and the fail says which headers were
// tried and how to name another.
func TestKeyIgnoredInEveryKnownHeaderHintsKeyHeader(t *testing.T) {
	t.Parallel()
	api := idemapi.New(idemapi.Correct)
	api.KeyHeader = "Request-Key"
	o := fullOptions(t, api, keycheck.Bird)
	o.Checks = []string{"replay"}
	k, err := keycheck.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := statuses(k)["replay"]
	if got.Status != report.Fail || !strings.Contains(got.Why, "X-Idempotency-Key was ignored too") || !strings.Contains(got.Why, "give the key's header NAME") {
		t.Errorf("replay: %s %q", got.Status, got.Why)
	}
}

// A key over the maximum is judged by what matters: refused (any status,
// nothing done) is safe — a 5xx is a warn; accepted and kept whole is a
// longer maximum (warn); accepted and cut, so that two keys differing at
// their end are one, is a fail.
func TestKeyLengthJudgesWhatTheAPIKeeps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		api      func() *idemapi.API
		want     report.Status
		why      string
		observed string
	}{
		{"uuid-only-500", func() *idemapi.API {
			a := idemapi.New(idemapi.Correct)
			a.Contract = idemapi.Fiber
			return a
		}, report.Warn, "refused with 500", "invalid length: 256 != 36"},
		{"no-maximum", func() *idemapi.API {
			a := idemapi.New(idemapi.Correct)
			a.Contract.MaxKeyLength = -1
			return a
		}, report.Warn, "kept whole", ""},
		{"cut", func() *idemapi.API { return idemapi.New(idemapi.CutKeys) }, report.Fail, "keys are cut", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := fullOptions(t, tc.api(), keycheck.Bird)
			o.Checks = []string{"key-length"}
			k, err := keycheck.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			got := statuses(k)["key-length"]
			if got.Status != tc.want || !strings.Contains(got.Why, tc.why) || !strings.Contains(got.Observed, tc.observed) {
				t.Errorf("key-length: %s %q | %s; want %s naming %q", got.Status, got.Why, got.Observed, tc.want, tc.why)
			}
		})
	}
}

// Middleware that accepts UUID keys only refuses every key of another
// pattern; the first request's setup error must say that the key was
// refused (the same request without one succeeded) and name the key
// pattern, not send the user to fix the body.
func TestRefusedKeyPatternIsNamed(t *testing.T) {
	t.Parallel()
	api := idemapi.New(idemapi.Correct)
	api.Contract = idemapi.Fiber
	o := fullOptions(t, api, keycheck.Bird)
	o.KeyPattern = "test-{{nonce}}"
	_, err := keycheck.Run(context.Background(), o)
	var se *keycheck.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "refused the key itself (23 characters") || !strings.Contains(err.Error(), "UUIDs only") {
		t.Errorf("got %v, want a setup error saying the key was refused", err)
	}
}

// An API built on Fiber's middleware/idempotency as its docs show (keys
// in X-Idempotency-Key, 36 characters only, no fingerprint, keys global,
// a copy in flight held until the first is done, no replay header) gets
// the statuses keycheck gave the real Fiber v2.52.15 and v3.1.0 (see
// docs/keycheck.md, "Tried on real middleware").
func TestFiberLikeAPI(t *testing.T) {
	t.Parallel()
	api := idemapi.New(idemapi.NoFingerprint)
	api.Mistakes = []idemapi.Mistake{idemapi.Unscoped, idemapi.Blocking}
	api.KeyHeader = "X-Idempotency-Key"
	api.Contract = idemapi.Fiber
	o := fullOptions(t, api, keycheck.Bird)
	o.KeyHeader = "X-Idempotency-Key"
	o.StoreDownCmd, o.StoreUpCmd = "", "" // Fiber's default store is in memory
	k, err := keycheck.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]report.Status{
		"first": report.Pass, "replay": report.Pass, "replay-header": report.Fail, "lost": report.Pass, "burst": report.Pass,
		"in-flight": report.Warn, "reuse-body": report.Fail, "reuse-whitespace": report.Fail, "reuse-query": report.Fail,
		"reuse-method": report.Fail, "no-key": report.Pass, "safe-get": report.Pass, "methods": report.Pass, "5xx": report.Pass,
		"4xx": report.Info, "key-length": report.Warn, "scope": report.Fail, "outage": report.Skip, "expiry": report.Skip,
	}
	for _, c := range k.Checks {
		if c.Status != want[c.Name] {
			t.Errorf("%s: %s (want %s): %s | %s", c.Name, c.Status, want[c.Name], c.Why, c.Observed)
		}
	}
}

// The ietf draft computes the fingerprint from the payload (a checksum, or
// a match of its fields) and leaves a key's uniqueness to the resource
// owner: an API that compares the parsed body, leaves the query and method
// out, or keys by method and URL is not failed for it under ietf (info),
// while bird, which names whitespace, query and method, fails it. Another
// body with a used key that gets the stored answer fails under every
// profile.
func TestIETFLeavesTheFingerprintBeyondTheBodyToTheServer(t *testing.T) {
	t.Parallel()
	fiberLike := func() *idemapi.API { return idemapi.New(idemapi.NoFingerprint) }
	perURL := func() *idemapi.API {
		a := idemapi.New(idemapi.Correct)
		a.Contract = idemapi.IETF
		a.Contract.ParsedJSON, a.Contract.KeyPerURL = true, true
		return a
	}
	for _, tc := range []struct {
		name string
		api  func() *idemapi.API
		p    keycheck.Profile
		want map[string]report.Status
	}{
		{"no-fingerprint-ietf", fiberLike, keycheck.IETF, map[string]report.Status{"reuse-body": report.Fail, "reuse-whitespace": report.Info, "reuse-query": report.Info, "reuse-method": report.Info}},
		{"no-fingerprint-bird", fiberLike, keycheck.Bird, map[string]report.Status{"reuse-body": report.Fail, "reuse-whitespace": report.Fail, "reuse-query": report.Fail, "reuse-method": report.Fail}},
		{"per-url-ietf", perURL, keycheck.IETF, map[string]report.Status{"reuse-body": report.Pass, "reuse-whitespace": report.Info, "reuse-query": report.Info}},
		{"per-url-bird", perURL, keycheck.Bird, map[string]report.Status{"reuse-whitespace": report.Fail, "reuse-query": report.Fail}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := fullOptions(t, tc.api(), tc.p)
			o.Checks = []string{"reuse-body", "reuse-whitespace", "reuse-query", "reuse-method"}
			k, err := keycheck.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			got := statuses(k)
			for name, want := range tc.want {
				if got[name].Status != want {
					t.Errorf("%s: %s (want %s): %s | %s", name, got[name].Status, want, got[name].Why, got[name].Observed)
				}
			}
		})
	}
}

// The ietf draft answers a retry with "the result of the previously
// completed operation, success or an error" and leaves other errors to the
// server's documentation: a stored 5xx replayed is info under ietf (as
// @node-idempotency does), a fail under bird.
func TestIETFLeavesA5xxToTheServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    keycheck.Profile
		want report.Status
	}{{keycheck.IETF, report.Info}, {keycheck.Bird, report.Fail}} {
		api := idemapi.New(idemapi.Correct)
		api.Contract = idemapi.IETF
		api.Contract.Keep5xx = true
		o := fullOptions(t, api, tc.p)
		o.Checks = []string{"5xx"}
		k, err := keycheck.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got := statuses(k)["5xx"]; got.Status != tc.want {
			t.Errorf("%s: 5xx %s %q, want %s", tc.p.Name, got.Status, got.Why, tc.want)
		}
	}
}

// Replays marked with another profile's header (@node-idempotency sends
// Idempotent-Replayed, Stripe's) can be told from new operations: a warn
// naming both headers, as another profile's status code is, not the fail
// "a client cannot tell it from a new operation".
func TestReplayHeaderOfAnotherProfileIsAWarn(t *testing.T) {
	t.Parallel()
	api := idemapi.New(idemapi.Correct)
	api.Contract.ReplayHeader = "Idempotent-Replayed"
	o := fullOptions(t, api, keycheck.Bird)
	o.Checks = []string{"replay", "replay-header"}
	k, err := keycheck.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := statuses(k)["replay-header"]
	if got.Status != report.Warn || !strings.Contains(got.Why, "Idempotent-Replayed: true, stripe style") {
		t.Errorf("replay-header: %s %q | %s", got.Status, got.Why, got.Observed)
	}
}
