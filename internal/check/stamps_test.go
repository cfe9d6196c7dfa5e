package check

import (
	"testing"
	"time"
)

// Copies of one event sent within a second get distinct signature times
// (now first, then the nearest free seconds, earlier first), never further
// than maxStampSpread from now; another event starts again at now.
func TestSignStampsDistinctPerEvent(t *testing.T) {
	var s signStamps
	now := time.Unix(1_800_000_000, 0).Add(400 * time.Millisecond)
	var got []int64
	for range 5 {
		got = append(got, s.at("evt_a", now, 0).Unix()-now.Unix())
	}
	want := []int64{0, -1, 1, -2, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("offsets of 5 copies sent at once: %v, want %v", got, want)
		}
	}
	if off := s.at("evt_b", now, 0).Unix() - now.Unix(); off != 0 {
		t.Errorf("another event's first copy signed %ds from now, want 0", off)
	}
	seen := map[int64]bool{}
	limit := int64(maxStampSpread / time.Second)
	for i := range 2*limit + 1 {
		u := s.at("evt_c", now, 0).Unix()
		if d := u - now.Unix(); d < -limit || d > limit || seen[u] {
			t.Fatalf("copy %d of evt_c signed at offset %d (seen before: %v)", i+1, d, seen[u])
		}
		seen[u] = true
	}
	if u := s.at("evt_c", now, 0); !u.Equal(now) {
		t.Errorf("with every second of the window used, a copy is signed at now, got %v", u)
	}
}

// A scheme with a short tolerance keeps every copy within half of it:
// Paddle refuses a signature more than 5 s old, so no copy of one event is
// signed more than 2 s from now, however many are sent at once.
func TestSignStampsWithinTolerance(t *testing.T) {
	var s signStamps
	now := time.Unix(1_800_000_000, 0).Add(900 * time.Millisecond)
	for i := range 20 {
		if d := s.at("evt_paddle", now, 5*time.Second).Sub(now); d < -3*time.Second || d > 2*time.Second {
			t.Fatalf("copy %d signed %v from now, beyond half of Paddle's 5 s", i+1, d)
		}
	}
}
