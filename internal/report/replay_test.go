package report

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

func TestStandsFor(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                              "+0s",
		time.Second:                    "+1s",
		time.Minute:                    "+1m",
		2*time.Minute + 42*time.Second: "+2m42s",
		time.Hour:                      "+1h",
		42*time.Hour + 9*time.Minute:   "+42h9m",
		72 * time.Hour:                 "+3d",
		50*time.Hour + 30*time.Minute:  "+2d2h30m",
	} {
		if got := StandsFor(d); got != want {
			t.Errorf("StandsFor(%v) = %s, want %s", d, got, want)
		}
	}
	if got := copyList([]int{5, 2, 3, 4, 8}); got != "copies 2-5, 8" {
		t.Errorf("copyList: %s", got)
	}
}

// TestDuration pins the one duration format: capture lines, show, replay,
// runs and check reports all print durations through it (capture used to
// print 41µs as "0.0ms").
func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                          "0s",
		0:                                     "0s",
		41 * time.Microsecond:                 "41µs",
		806*time.Microsecond + 400:            "806µs",
		3200 * time.Microsecond:               "3.2ms",
		11*time.Millisecond + 400_000:         "11ms",
		time.Millisecond:                      "1ms",
		1140 * time.Millisecond:               "1.14s",
		2*time.Minute + 5*time.Second:         "2m5s",
		2*time.Minute + 5400*time.Millisecond: "2m5s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %s, want %s", d, got, want)
		}
	}
}

// TestOutcomeColours: every view colours an attempt by replay.Outcome with
// the one palette.
func TestOutcomeColours(t *testing.T) {
	p := Colors(true)
	for _, tc := range []struct {
		a    store.Attempt
		want string
	}{
		{store.Attempt{Copy: 1, Status: 200, Latency: 41 * time.Microsecond}, p.Paint(TonePass, "200") + "      41µs"},
		{store.Attempt{Copy: 1, Status: 503, Latency: time.Millisecond}, p.Paint(ToneFail, "503")},
		{store.Attempt{Copy: 1, Err: "connect: connection refused", Lost: true}, p.Paint(ToneFail, "ERR") + "  connect: connection refused"},
		{store.Attempt{Copy: 1, Lost: true}, p.Paint(ToneLost, "lost") + "  answer not read"},
	} {
		if got := AttemptLine(p, tc.a, false); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q lacks %q", replay.Outcome(tc.a), got, tc.want)
		}
	}
	if got := AttemptLine(Colors(false), store.Attempt{Copy: 1, Status: 500}, false); strings.Contains(got, "\x1b[") {
		t.Errorf("colour with colour off: %q", got)
	}
}

func TestProgressBar(t *testing.T) {
	pr := NewProgress(4)
	for _, a := range []store.Attempt{{Status: 200}, {Status: 200}, {Err: "read response: timeout after 1s"}} {
		pr.Add(a)
	}
	if got, want := pr.Bar(), "["+strings.Repeat("█", 22)+strings.Repeat("░", 8)+"] 3/4  2xx 2 · error 1"; got != want {
		t.Errorf("bar %q, want %q", got, want)
	}
}
