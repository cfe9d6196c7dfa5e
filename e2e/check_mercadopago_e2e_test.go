package e2e

// Mercado Pago notifications (issue 27 §1): check judges a handler written
// from Mercado Pago's documented verification code, whose signature covers
// the query's data.id, the x-request-id and a timestamp but not the body.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

const mpSecret = "8f0e6c2a4b1d9e7f3a5c8b2d6e4f1a9c"

// The handler that works each payment once passes; the one that works every
// notification fails dups and burst. Tamper forges the query's data.id (a
// changed body is no forgery: Mercado Pago does not sign it), which both
// refuse, and sends no hour-old copy (Mercado Pago sets no tolerance, and the
// documented code checks none).
func TestCheckMercadoPagoHandlerFromDocs(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		mode string
		code int
	}{{"correct", 0}, {"naive", 1}} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			base := startNode(t, "testdata/handlers/mercadopago.js", "SECRET="+mpSecret, "MODE="+tc.mode)
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkInsertSample(t, db, "mercadopago", "payment.updated", mpSecret)
			r, c := checkRunJSON(t, db, "--to", base+"/notifications", "--probe-http", base+"/work", "--secret", mpSecret,
				"--settle", "50ms", "-n", "3", "--burst", "5", "--phases", "first,dups,tamper,burst,lost", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			if first := checkPhase(t, c, "first"); first.Status != report.Pass {
				t.Fatalf("first: %s %s", first.Status, first.Message)
			}
			tp := checkPhase(t, c, "tamper")
			if tp.Status != report.Pass || tp.Attempts != 1 || !strings.Contains(tp.Message, "data.id changed after signing") {
				t.Fatalf("tamper should forge data.id once and pass: %s %d %s", tp.Status, tp.Attempts, tp.Message)
			}
			if !strings.Contains(strings.Join(c.Notes, "\n"), "Mercado Pago sets no tolerance") {
				t.Fatalf("the note should say why no hour-old copy was sent: %q", c.Notes)
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
				t.Fatalf("a handler deduping on data.id should not be warned: %q", c.Warnings)
			}
		})
	}
}
