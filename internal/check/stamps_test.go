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
		got = append(got, s.at("evt_a", now).Unix()-now.Unix())
	}
	want := []int64{0, -1, 1, -2, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("offsets of 5 copies sent at once: %v, want %v", got, want)
		}
	}
	if off := s.at("evt_b", now).Unix() - now.Unix(); off != 0 {
		t.Errorf("another event's first copy signed %ds from now, want 0", off)
	}
	seen := map[int64]bool{}
	limit := int64(maxStampSpread / time.Second)
	for i := range 2*limit + 1 {
		u := s.at("evt_c", now).Unix()
		if d := u - now.Unix(); d < -limit || d > limit || seen[u] {
			t.Fatalf("copy %d of evt_c signed at offset %d (seen before: %v)", i+1, d, seen[u])
		}
		seen[u] = true
	}
	if u := s.at("evt_c", now); !u.Equal(now) {
		t.Errorf("with every second of the window used, a copy is signed at now, got %v", u)
	}
}
