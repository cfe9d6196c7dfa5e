package e2e

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

// handlerFromDocs is a check of a handler written from a provider's
// documented verification, run in its two modes: "correct" works each event
// once and passes (exit 0), "naive" works every copy it is sent and fails
// dups and burst (exit 1). Both verify the signature.
type handlerFromDocs struct {
	start  func(t *testing.T, mode string) string // starts the handler in mode; its URL base
	insert func(t *testing.T, db string) int64    // stores the delivery to check; its id
	route  string                                 // the webhook route under the base
	secret string
	flags  []string // check's -n, --burst and --phases
	pass   []string // phases that pass in both modes
	// also makes the provider's own assertions on the report of mode's run;
	// nil when there are none.
	also func(t *testing.T, mode string, c *report.Check)
}

// checkHandlerFromDocs runs h's check in each mode, probing base+"/work",
// and asserts the exit code, the phases that pass in both modes, dups and
// burst passing when correct and failing when naive, and no warning for the
// correct handler; then h.also.
func checkHandlerFromDocs(t *testing.T, h handlerFromDocs) {
	t.Helper()
	for _, tc := range []struct {
		mode string
		code int
	}{{"correct", 0}, {"naive", 1}} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			base := h.start(t, tc.mode)
			db := filepath.Join(t.TempDir(), "h.db")
			id := h.insert(t, db)
			args := append([]string{"--to", base + h.route, "--probe-http", base + "/work", "--secret", h.secret, "--settle", "50ms"}, h.flags...)
			r, c := checkRunJSON(t, db, append(args, fmt.Sprint(id))...)
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			for _, p := range h.pass {
				if got := checkPhase(t, c, p); got.Status != report.Pass {
					t.Fatalf("%s: %s: %s", p, got.Status, got.Message)
				}
			}
			want := report.Pass
			if tc.mode == "naive" {
				want = report.Fail
			}
			for _, p := range []string{"dups", "burst"} {
				if got := checkPhase(t, c, p); got.Status != want {
					t.Fatalf("%s: %s, want %s: %s", p, got.Status, want, got.Message)
				}
			}
			if tc.mode == "correct" && len(c.Warnings) > 0 {
				t.Fatalf("a correct handler should not be warned: %q", c.Warnings)
			}
			if h.also != nil {
				h.also(t, tc.mode, c)
			}
		})
	}
}
