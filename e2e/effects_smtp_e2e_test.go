package e2e

// Emails are effects (issue 20 §1): the built-in SMTP sink counts the
// messages real clients send — Python's smtplib (as Django's SMTP backend
// uses it) and Go's net/smtp — and reports say what was sent.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/smtp"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

// smtpPhases are the phases the SMTP tests run: first and dups in the
// default suite (a few seconds); burst and lost too under the slow tag,
// which repeats the correct handlers (smtp_slow_e2e_test.go).
var smtpPhases = "first,dups"

// smtpCheckArgs runs smtpPhases against handler base with
// the SMTP sink at sink, quickly.
func smtpCheckArgs(base, sink string, id int64, extra ...string) []string {
	return append([]string{"--to", base + "/webhooks/stripe", "--smtp-sink", sink, "--secret", checkSecret,
		"-n", "3", "--burst", "6", "--phases", smtpPhases, "--settle", "100ms", fmt.Sprint(id)}, extra...)
}

// A Python handler that emails a receipt for every delivery fails dups, and
// the report says which emails went out; the same handler deduplicating on
// the event id passes, run after run.
func TestCheckSMTPSinkPythonSmtplib(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		variant string
		code    int
	}{{"naive", 1}, {"dedupe", 0}} {
		t.Run(tc.variant, func(t *testing.T) {
			t.Parallel()
			sink := freeAddr(t)
			base := startPython(t, "testdata/handlers/receipt.py", sink, tc.variant)
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			r, c := checkRunJSON(t, db, smtpCheckArgs(base, sink, id, "--smtp-match", "subject:Your receipt*")...)
			if r.Code != tc.code || c == nil {
				t.Fatalf("%s: want exit %d, got %d\n%s\n%s", tc.variant, tc.code, r.Code, r.Stdout, r.Stderr)
			}
			if c.Probes[len(c.Probes)-1] != "emails" {
				t.Fatalf("the SMTP sink's probe should be called emails: %q", c.Probes)
			}
			first := checkPhase(t, c, "first")
			if len(first.Effects) != 1 || first.Effects[0].Kind != report.EffectEmail || first.Effects[0].Subject != "Your receipt" ||
				strings.Join(first.Effects[0].To, ",") != "ada@example.com" {
				t.Fatalf("first's effect should be one receipt to ada@example.com: %+v", first.Effects)
			}
			if tc.code == 0 {
				return
			}
			dups := checkPhase(t, c, "dups")
			if dups.Status != report.Fail || len(dups.Violations) == 0 {
				t.Fatalf("dups should fail: %s %q", dups.Status, dups.Message)
			}
			if d := dups.Violations[0].Detail; d != `dups sent "Your receipt" to ada@example.com ×2` {
				t.Fatalf("the violation should say what was sent, got %q", d)
			}
			text := runBin(t, db, nil, append([]string{"check", "--no-color"}, smtpCheckArgs(base, sink, id, "--phases", "first,dups")...)...)
			if !strings.Contains(text.Stdout, `probe emails: before 1, after 2, want 1 — dups sent "Your receipt" to ada@example.com ×2`) ||
				!strings.Contains(text.Stdout, "the smtp sink accepted 3 emails:") {
				t.Fatalf("the text report should say what was sent:\n%s", text.Stdout)
			}
		})
	}
}

// A handler that sends a receipt on every delivery but gives each the event
// id as its X-Bird-Idempotency-Key is correct with Bird, which sends one
// email per key: the sink counts the repeats once and the report says so.
func TestCheckSMTPSinkBirdIdempotencyKey(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	sink := freeAddr(t)
	base := startPython(t, "testdata/handlers/receipt.py", sink, "birdkey")
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	r, c := checkRunJSON(t, db, smtpCheckArgs(base, sink, id)...)
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if dups := checkPhase(t, c, "dups"); dups.Status != report.Pass {
		t.Fatalf("dups: %s %s", dups.Status, dups.Message)
	}
	notes := strings.Join(c.Notes, "\n")
	if !strings.Contains(notes, "repeating an X-Bird-Idempotency-Key it had already seen, not counted as effects (Bird sends one email per key): \"Your receipt\" to ada@example.com ×") {
		t.Fatalf("the report should say the repeats were not counted: %q", c.Notes)
	}
}

// goMailHandler is a Go handler sending its receipt with net/smtp (AUTH
// PLAIN) to the SMTP server at smtpAddr: once per event id when dedupe, else
// once per delivery. Welcome emails to another address are sent each time
// and must not count under --smtp-match to:*@example.com.
type goMailHandler struct {
	smtpAddr string
	dedupe   bool
	mu       sync.Mutex
	seen     map[string]bool
}

func (h *goMailHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	auth := smtp.PlainAuth("", "shop", "app-password", "127.0.0.1")
	send := func(to, subject string) error {
		msg := "From: shop@example.com\r\nTo: " + to + "\r\nSubject: " + subject + "\r\n\r\nHello.\r\n"
		return smtp.SendMail(h.smtpAddr, auth, "shop@example.com", []string{to}, []byte(msg))
	}
	if err := send("audit@internal.test", "Webhook seen"); err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dedupe && h.seen[ev.ID] {
		return
	}
	if err := send("alice@example.com", "Your receipt"); err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	h.seen[ev.ID] = true
}

// Go's net/smtp as the sender, with --smtp-match keeping an audit email
// every delivery sends out of the count.
func TestCheckSMTPSinkGoNetSMTP(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, dedupe := range []bool{false, true} {
		t.Run(fmt.Sprint("dedupe=", dedupe), func(t *testing.T) {
			t.Parallel()
			sink := freeAddr(t)
			base := serveHandler(t, &goMailHandler{smtpAddr: sink, dedupe: dedupe, seen: map[string]bool{}})
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			r, c := checkRunJSON(t, db, smtpCheckArgs(base, sink, id, "--smtp-match", "to:*@example.com")...)
			want := map[bool]int{false: 1, true: 0}[dedupe]
			if r.Code != want || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", want, r.Code, r.Stdout, r.Stderr)
			}
			if !dedupe && checkPhase(t, c, "dups").Violations[0].Detail != `dups sent "Your receipt" to alice@example.com ×2` {
				t.Fatalf("dups: %+v", checkPhase(t, c, "dups").Violations)
			}
		})
	}
}
