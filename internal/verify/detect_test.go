package verify

import "testing"

// TestDetectOwnProviderOnly: every sample delivery, as send builds it, is
// claimed by its own scheme and by no other one, so that the order of the
// registry never decides between two providers.
func TestDetectOwnProviderOnly(t *testing.T) {
	for _, f := range Fixtures() {
		req := build(t, f, t0)
		for _, s := range Schemes() {
			got := s.Detects(req.Headers)
			if rd, ok := s.(RequestDetector); ok {
				got = rd.DetectsRequest(req)
			}
			if want := s.Name() == f.Provider; got != want {
				t.Errorf("%s %s: %s.Detects = %v", f.Provider, f.Event, s.Name(), got)
			}
		}
		if got := Detect(req).Provider; got != f.Provider {
			t.Errorf("%s %s detected as %s", f.Provider, f.Event, got)
		}
	}
}
