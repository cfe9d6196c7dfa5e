package keycheck_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/keycheck"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/testkit/idemapi"
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
