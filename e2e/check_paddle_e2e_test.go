package e2e

// Paddle Billing (issue 27 §3): its 5-second signature tolerance is the
// shortest of any provider, so check must sign every copy of one event
// within it, however many it sends: a handler written from Paddle's docs
// passes when correct, fails dups and burst when naive, and is never
// refused a correctly signed copy.

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

const paddleSecret = "pdl_ntfset_01hv8wz9ymdx3e4t7fb4r0mbxh_e2eKey"

func TestCheckPaddleHandlerFromDocs(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		mode string
		code int
	}{{"correct", 0}, {"naive", 1}} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			base := startNode(t, "testdata/handlers/paddle.js", "SECRET="+paddleSecret, "MODE="+tc.mode)
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkInsertSample(t, db, "paddle", "transaction.completed", paddleSecret)
			r, c := checkRunJSON(t, db, "--to", base+"/webhooks/paddle", "--probe-http", base+"/work", "--secret", paddleSecret,
				"--settle", "50ms", "-n", "4", "--burst", "12", "--phases", "first,dups,tamper,burst", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			if tc.mode == "correct" && len(c.Warnings) > 0 {
				t.Fatalf("a correct handler should not be warned: %q", c.Warnings)
			}
			for _, p := range []string{"first", "tamper"} {
				if got := checkPhase(t, c, p); got.Status != report.Pass {
					t.Fatalf("%s: %s: %s", p, got.Status, got.Message)
				}
			}
			want := report.Pass
			if tc.mode == "naive" {
				want = report.Fail
			}
			for _, p := range []string{"dups", "burst"} {
				got := checkPhase(t, c, p)
				if got.Status != want {
					t.Fatalf("%s: %s, want %s: %s", p, got.Status, want, got.Message)
				}
				if tc.mode == "correct" && len(got.Warnings) > 0 {
					// Copies signed beyond Paddle's 5 s were answered 401.
					t.Fatalf("%s: a correct handler was warned: %q", p, got.Warnings)
				}
			}
		})
	}
}
