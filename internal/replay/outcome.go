package replay

import (
	"fmt"

	"github.com/hookreplay/hookreplay/internal/store"
)

// Outcomes of an attempt besides the status classes "1xx" … "5xx".
const (
	// OutcomeError: no answer, because connecting, writing or reading failed
	// (refused, reset, timed out; the attempt's Err says which).
	OutcomeError = "error"
	// OutcomeLost: the answer was deliberately not read (--lose-response).
	OutcomeLost = "lost"
)

// Outcome classifies how attempt a ended; it is the one rule every summary,
// progress bar and view counts and colours attempts by. An answered attempt
// is its status class ("2xx", "4xx", ...); else a failed one is
// OutcomeError, even when its answer was to be lost (it never got that far);
// else a lost one is OutcomeLost. An attempt with none of these (never sent)
// is "".
func Outcome(a store.Attempt) string {
	switch {
	case a.Status != 0:
		return fmt.Sprintf("%dxx", a.Status/100)
	case a.Err != "":
		return OutcomeError
	case a.Lost:
		return OutcomeLost
	}
	return ""
}
