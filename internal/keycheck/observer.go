package keycheck

import (
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Observer follows a keycheck as it happens (cmd's progress lines, the
// TUI). Calls come from the goroutine that called Run, one at a time, in
// the order things happen; an Observer must return quickly and must not
// modify what it is given.
type Observer interface {
	// CheckStarted is called before a check sends anything.
	CheckStarted(name string)
	// Attempt is called for every request sent, once recorded.
	Attempt(a store.Attempt)
	// CheckDone is called with every check's result, skipped ones too.
	CheckDone(res report.KeyCheckResult)
}

// NopObserver ignores everything.
type NopObserver struct{}

// CheckStarted does nothing.
func (NopObserver) CheckStarted(string) {}

// Attempt does nothing.
func (NopObserver) Attempt(store.Attempt) {}

// CheckDone does nothing.
func (NopObserver) CheckDone(report.KeyCheckResult) {}

var _ Observer = NopObserver{}
