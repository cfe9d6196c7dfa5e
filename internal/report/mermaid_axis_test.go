package report

import (
	"strings"
	"testing"
	"time"
)

// The chart's axis shows times from the phase's start in units that do not
// wrap: a crash phase of 75 s (kill and start commands of a slow service)
// was labelled with %S, so 75 s read "15.000 s".
func TestMermaidAxisDoesNotWrap(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for d, want := range map[time.Duration]string{
		300 * time.Millisecond: "axisFormat %L ms\n", 3 * time.Second: "axisFormat %S.%L s\n", 75 * time.Second: "axisFormat %M:%S min\n",
	} {
		s := &TimelineSection{Phase: "crash", Start: start, End: start.Add(d),
			Copies: []TimelineCopy{{Copy: 1, Start: start.Add(d / 2), End: start.Add(d/2 + time.Millisecond)}}}
		if got := s.Mermaid(); !strings.Contains(got, want) {
			t.Errorf("a %v phase: want %q in\n%s", d, want, got)
		}
	}
}
