package verify

import (
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// TestZoomURLValidationAndIdentity: Zoom's url_validation is a handshake;
// an event's identity is its event_ts, and a fresh one is never reused.
func TestZoomURLValidationAndIdentity(t *testing.T) {
	s := Lookup("zoom")
	hs := &message.Request{Method: "POST", Target: "/", Headers: message.Headers{{Name: zoomSig, Value: "v0=00"}, {Name: zoomTS, Value: "1717664407"}},
		Body: []byte(`{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1717664407218,"event":"endpoint.url_validation"}`)}
	if Handshake(s, hs) == "" {
		t.Error("url_validation is not a handshake")
	}
	ev := build(t, Fixture{Provider: "zoom", Event: "meeting.started"}, t0)
	if Handshake(s, ev) != "" {
		t.Error("meeting.started is a handshake")
	}
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := s.NewEventID()
		if seen[id] {
			t.Fatalf("event_ts %s handed out twice", id)
		}
		seen[id] = true
	}
	if err := s.Reidentify(ev.Clone(), "evt_1"); err == nil {
		t.Error("a non-numeric event_ts was accepted")
	}
}
