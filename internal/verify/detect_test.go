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

// TestDetectIntercomAndGitHubApart: both sign in X-Hub-Signature; any
// X-GitHub-* header keeps a request GitHub's, and only Intercom's
// notification_event body is Intercom's.
func TestDetectIntercomAndGitHubApart(t *testing.T) {
	ic := build(t, Fixture{Provider: "intercom", Event: "conversation.user.created"}, t0)
	if p := Detect(ic).Provider; p != "intercom" {
		t.Fatalf("intercom sample detected as %s", p)
	}
	gh := ic.Clone()
	gh.Headers = gh.Headers.Set("X-GitHub-Event", "issues")
	if p := Detect(gh).Provider; p != "github" {
		t.Errorf("with X-GitHub-Event: %s, want github", p)
	}
	other := ic.Clone()
	other.Body = []byte(`{"action":"opened","issue":{"number":1}}`)
	if p := Detect(other).Provider; p == "intercom" {
		t.Errorf("a body that is no notification_event was taken for Intercom's")
	}
}
