package verify

import (
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// TestTwitchVerificationAndRetry: the callback verification is a handshake
// whose challenge is answered; a retry is marked in
// Twitch-Eventsub-Message-Retry without touching the signature.
func TestTwitchVerificationAndRetry(t *testing.T) {
	s := Lookup("twitch")
	hs := &message.Request{Method: "POST", Target: "/", Headers: message.Headers{
		{Name: twitchID, Value: "e76c6bd4-55c9-4987-8304-da1588d8988b"}, {Name: twitchType, Value: "webhook_callback_verification"},
		{Name: twitchSubType, Value: "channel.follow"}, {Name: twitchSig, Value: "sha256=00"}},
		Body: []byte(`{"challenge":"pogchamp-kappa-360noscope-vohiyo","subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","type":"channel.follow","version":"2"}}`)}
	if c := s.Challenge(hs); c != "pogchamp-kappa-360noscope-vohiyo" {
		t.Errorf("challenge %q", c)
	}
	if h := Handshake(s, hs); h == "" {
		t.Error("the callback verification is not a handshake")
	}
	if id := Detect(hs); id.EventType != "webhook_callback_verification" {
		t.Errorf("type %q", id.EventType)
	}
	ev := build(t, Fixture{Provider: "twitch", Event: "channel.follow"}, t0)
	if s.Challenge(ev) != "" || Handshake(s, ev) != "" {
		t.Error("a notification is a handshake")
	}
	re := MarkRetry(ev, s, 2)
	if re.Headers.Get(twitchRetry) != "2" {
		t.Errorf("retry header %q", re.Headers.Get(twitchRetry))
	}
	if r, err := Verify(re, "twitch", secretOf("twitch"), Options{Now: t0}); err != nil || !r.Valid {
		t.Errorf("a marked retry no longer verifies: %+v %v", r, err)
	}
}
