package report

import (
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// ClearLine returns to the start of the terminal line and clears it: the bar
// is redrawn in place, and a line printed while it shows replaces it.
const ClearLine = "\r\033[K"

// Progress tallies a replay's attempts as they come and draws them as one
// bar line: "[██████░░░…] 120/500  2xx 118 · 5xx 2".
type Progress struct {
	planned int
	seen    int
	counts  map[string]int
}

// NewProgress starts a tally for planned attempts.
func NewProgress(planned int) *Progress {
	return &Progress{planned: planned, counts: map[string]int{}}
}

// Add counts a and returns its outcome (replay.Outcome; an attempt with no
// outcome counts as an error).
func (p *Progress) Add(a store.Attempt) string {
	p.seen++
	o := replay.Outcome(a)
	if o == "" {
		o = replay.OutcomeError
	}
	p.counts[o]++
	return o
}

// Bar is the progress line, without a line end.
func (p *Progress) Bar() string {
	const width = 30
	total := max(p.planned, p.seen, 1)
	filled := width * p.seen / total
	var parts []string
	for _, k := range []string{"2xx", "3xx", "4xx", "5xx", replay.OutcomeLost, replay.OutcomeError} {
		if n := p.counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	return fmt.Sprintf("[%s%s] %d/%d  %s", strings.Repeat("█", filled), strings.Repeat("░", width-filled), p.seen, total, strings.Join(parts, " · "))
}
