package check

import (
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// A delivery's scheme is resolved once and carried: a check of a delivery
// whose scheme no registry lookup by its name would find (a declaration of
// Stripe's scheme under a name registered nowhere) re-signs, re-identifies
// and judges every phase with that scheme. Looked up again by name
// anywhere below, the delivery would be treated as generic: re-signing
// would fail and burst and lost would be skipped.
func TestCheckUsesTheCarriedScheme(t *testing.T) {
	twin, err := verify.Declare(verify.Declaration{Name: "stripe-unregistered", SignatureHeader: "Stripe-Signature",
		Format: "t={timestamp},v1={signature}", Signed: "{timestamp}.{body}", Tolerance: 300e9,
		EventID: "$.id", EventType: "$.type", NewEventID: "evt_{random:24}"})
	if err != nil {
		t.Fatal(err)
	}
	if verify.KnownProvider("stripe-unregistered") {
		t.Fatal("the twin must not be registered")
	}
	for _, tc := range []struct {
		kind    string
		verdict string
	}{{"correct", report.VerdictPass}, {"double", report.VerdictFail}} {
		h, u := newHandler(t, tc.kind)
		d := delivery(t, 1, 4900)
		d.Provider, d.Scheme = "stripe-unregistered", twin
		c := run(t, options(h, u, d))
		if c.Verdict != tc.verdict {
			t.Fatalf("%s: verdict %s\n%+v", tc.kind, c.Verdict, c.Deliveries[0].Phases)
		}
		for _, p := range []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost, PhaseTamper} {
			ph := phaseOf(t, c, p)
			want := report.Pass
			if tc.kind == "double" && (p == PhaseDups || p == PhaseBurst || p == PhaseLost) {
				want = report.Fail
			}
			if ph.Status != want {
				t.Errorf("%s: %s %s, want %s: %s", tc.kind, p, ph.Status, want, ph.Message)
			}
		}
	}
}
