package e2e

// What unseen handlers showed about check (issue 30): a forged copy refused
// with a 5xx, an email lost between a commit and its send, a handler started
// by a wrapper that daemonizes.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

// A handler whose signature check throws, so its framework answers 500 (an
// Express error handler, say), refuses the forged copies and does nothing:
// providers retry every non-2xx alike, so tamper passes, and the text, the
// JSON and the exit code all say so; the line names the 500s.
func TestCheckTamperRefusedWith5xxPasses(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	h := &qaHandler{Amount: 50, Dedupe: true, Verify: true, VerifyStatus: 500}
	url, dsn := startQAHandler(t, h)
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	args := []string{"--to", url, "--probe-sql", qaBalanceSQL, "--dsn", dsn, "--secret", checkSecret,
		"--settle", "50ms", "--settle-max", "1s", "--phases", "first,tamper", fmt.Sprint(id)}
	r, c := checkRunJSON(t, db, args...)
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	p := checkPhase(t, c, "tamper")
	if p.Status != report.Pass || !strings.Contains(p.Message, "answered 500") || len(p.Warnings) > 0 {
		t.Fatalf("tamper refused with 500 and no effect: %+v", p)
	}
	txt := runBin(t, db, nil, append([]string{"check", "--no-color"}, args...)...)
	if txt.Code != 0 || !strings.Contains(txt.Stdout, "✓ tamper") || strings.Contains(txt.Stdout, "! tamper") {
		t.Fatalf("text report of the same run (exit %d):\n%s\n%s", txt.Code, txt.Stdout, txt.Stderr)
	}
}
