package e2e

// Paddle Billing (issue 27 §3): its 5-second signature tolerance is the
// shortest of any provider, so check must sign every copy of one event
// within it, however many it sends: a handler written from Paddle's docs
// passes when correct, fails dups and burst when naive, and is never
// refused a correctly signed copy.

import (
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

const paddleSecret = "pdl_ntfset_01hv8wz9ymdx3e4t7fb4r0mbxh_e2eKey"

func TestCheckPaddleHandlerFromDocs(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	checkHandlerFromDocs(t, handlerFromDocs{
		start: func(t *testing.T, mode string) string {
			return startNode(t, "testdata/handlers/paddle.js", "SECRET="+paddleSecret, "MODE="+mode)
		},
		insert: func(t *testing.T, db string) int64 {
			return checkInsertSample(t, db, "paddle", "transaction.completed", paddleSecret)
		},
		route: "/webhooks/paddle", secret: paddleSecret,
		flags: []string{"-n", "4", "--burst", "12", "--phases", "first,dups,tamper,burst"},
		pass:  []string{"first", "tamper"},
		also: func(t *testing.T, mode string, c *report.Check) {
			for _, p := range []string{"dups", "burst"} {
				if got := checkPhase(t, c, p); mode == "correct" && len(got.Warnings) > 0 {
					// Copies signed beyond Paddle's 5 s were answered 401.
					t.Fatalf("%s: a correct handler was warned: %q", p, got.Warnings)
				}
			}
		},
	})
}
