package keycheck

import (
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// A holding API answers the first request and then its copy a few
// milliseconds apart; under load the client may read the copy's answer
// first. It was still held (a .ci/run reported "the copy answered 201, not
// 409" for the idemapi Blocking API). A copy answered at once was not.
func TestHeldIsNotTheOrderOfTheAnswers(t *testing.T) {
	sent := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC) // the copy's last byte
	slowDone := sent.Add(350 * time.Millisecond)
	for _, tc := range []struct {
		latency time.Duration
		want    bool
	}{
		{352 * time.Millisecond, true}, // after the first's answer
		{340 * time.Millisecond, true}, // read 10 ms before it
		{3 * time.Millisecond, false},  // at once
		{100 * time.Millisecond, false},
	} {
		cp := store.Attempt{CompletedAt: sent, Latency: tc.latency, Status: 201}
		if got := held(cp, slowDone); got != tc.want {
			t.Errorf("copy answered after %s, first %s after the copy was sent: held %v, want %v", tc.latency, slowDone.Sub(sent), got, tc.want)
		}
	}
	if held(store.Attempt{}, slowDone) {
		t.Error("a copy never sent was held")
	}
}
