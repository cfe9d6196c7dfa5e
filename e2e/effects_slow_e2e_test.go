//go:build slow

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
)

func init() {
	smtpPhases = "first,dups,burst,lost"
	correctRepeats = 5
}

// The correct SMTP handlers (Python smtplib, Go net/smtp) pass first, dups,
// burst and lost, run after run: no false positive from a receipt counted
// twice or late.
func TestCheckSMTPSinkNoFalsePositiveRepeated(t *testing.T) {
	pySink, goSink := freeAddr(t), freeAddr(t)
	handlers := map[string][2]string{
		"python": {startPython(t, "testdata/handlers/receipt.py", pySink, "dedupe"), pySink},
		"go":     {serveHandler(t, &goMailHandler{smtpAddr: goSink, seen: map[string]bool{}, dedupe: true}), goSink},
	}
	for name, h := range handlers {
		for i := range 5 {
			db := filepath.Join(t.TempDir(), fmt.Sprintf("h%d.db", i))
			id := checkStripeDelivery(t, db)
			if r, _ := checkRunJSON(t, db, smtpCheckArgs(h[0], h[1], id, "--smtp-match", "to:*@example.com")...); r.Code != 0 {
				t.Fatalf("%s run %d: exit %d\n%s\n%s", name, i, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
}
