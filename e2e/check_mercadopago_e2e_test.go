package e2e

// Mercado Pago notifications (issue 27 §1): check judges a handler written
// from Mercado Pago's documented verification code, whose signature covers
// the query's data.id, the x-request-id and a timestamp but not the body.

import (
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
	checkHandlerFromDocs(t, handlerFromDocs{
		start: func(t *testing.T, mode string) string {
			return startNode(t, "testdata/handlers/mercadopago.js", "SECRET="+mpSecret, "MODE="+mode)
		},
		insert: func(t *testing.T, db string) int64 {
			return checkInsertSample(t, db, "mercadopago", "payment.updated", mpSecret)
		},
		route: "/notifications", secret: mpSecret,
		flags: []string{"-n", "3", "--burst", "5", "--phases", "first,dups,tamper,burst,lost"},
		pass:  []string{"first", "tamper"},
		also: func(t *testing.T, mode string, c *report.Check) {
			if tp := checkPhase(t, c, "tamper"); tp.Attempts != 1 || !strings.Contains(tp.Message, "data.id changed after signing") {
				t.Fatalf("tamper should forge data.id once and pass: %s %d %s", tp.Status, tp.Attempts, tp.Message)
			}
			if !strings.Contains(strings.Join(c.Notes, "\n"), "Mercado Pago sets no tolerance") {
				t.Fatalf("the note should say why no hour-old copy was sent: %q", c.Notes)
			}
		},
	})
}
