package verify

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestReencoded: a body re-encoded after signing is recognised, and said
// how, only with the secret it was signed with; the causes are worded for
// who verified.
func TestReencoded(t *testing.T) {
	const secret = "whsec_test_secret"
	now := time.Now()
	stripe, err := BuildDelivery("stripe", "invoice.paid", secret, now)
	if err != nil {
		t.Fatal(err)
	}
	github, err := BuildDelivery("github", "push", secret, now)
	if err != nil {
		t.Fatal(err)
	}
	// GitHub sends compact JSON: sign the sample's body compacted.
	var gh bytes.Buffer
	if err := json.Compact(&gh, github.Body); err != nil {
		t.Fatal(err)
	}
	github.Body = gh.Bytes()
	if github, err = Sign(github, "github", secret, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	compact := func(b []byte) []byte {
		var out bytes.Buffer
		if err := json.Compact(&out, b); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	indent := func(b []byte) []byte {
		var out bytes.Buffer
		if err := json.Indent(&out, compact(b), "", "\t"); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	for _, tc := range []struct {
		name, provider string
		req            []byte
		edit           func([]byte) []byte
		want           string
	}{
		{"stripe compacted", "stripe", stripe.Body, compact, "signed pretty-printed"},
		{"github pretty-printed", "github", github.Body, indent, "signed compact"},
		{"newline added", "github", github.Body, func(b []byte) []byte { return append(append([]byte(nil), b...), '\n') }, "trailing newline was added"},
		{"another change", "stripe", stripe.Body, func(b []byte) []byte { return bytes.Replace(b, []byte("invoice"), []byte("invoicE"), 1) }, ""},
	} {
		req := stripe
		if tc.provider == "github" {
			req = github
		}
		c := req.Clone()
		c.Body = tc.edit(tc.req)
		opt := Options{Now: now}
		if r, _ := Verify(c, tc.provider, secret, opt); r.Valid {
			t.Fatalf("%s: the edited body still verifies", tc.name)
		}
		got := Reencoded(Lookup(tc.provider), c, secret, opt)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Reencoded = %q, want %q", tc.name, got, tc.want)
		}
		if got := Reencoded(Lookup(tc.provider), c, "whsec_another", opt); got != "" {
			t.Errorf("%s, another secret: Reencoded = %q", tc.name, got)
		}
		why := WhyMismatch(Lookup(tc.provider), c, "whsec_another", "STRIPE_SECRET", opt)
		if !strings.Contains(why, "another secret (check that STRIPE_SECRET is") || !strings.Contains(why, "re-encoded") || !strings.Contains(why, "proxy") {
			t.Errorf("%s: WhyMismatch with another secret = %q", tc.name, why)
		}
	}
	if h := MismatchCauses(ByHandler, "--secret"); !strings.Contains(h, "the handler verifies with another secret (check that --secret is its signing secret)") || !strings.Contains(h, "express.json()") {
		t.Errorf("MismatchCauses(ByHandler) = %q", h)
	}
}
