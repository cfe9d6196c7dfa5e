package e2e

// Deliveries checked side by side (issue 28 §2): with a probe scoped to
// each delivery's customer, --jobs N gives every delivery the verdict
// --jobs 1 gives it, phase by phase.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// scopedBalanceSQL reads the balance of the customer a delivery is about;
// totalBalanceSQL every customer's (not scoped: deliveries are grouped).
const totalBalanceSQL = "balance=SELECT COALESCE(SUM(balance), 0) FROM wallets"

// scopedBalanceSQL reads the balance of the customer a delivery is about.
const scopedBalanceSQL = "balance=SELECT COALESCE(SUM(balance), 0) FROM wallets WHERE customer = {{json:data.object.customer}}"

var customerField = regexp.MustCompile(`"customer": "cus_[^"]*"`)

// checkStripeFor stores a signed Stripe delivery of eventType about customer.
func checkStripeFor(t *testing.T, db, eventType, customer string) int64 {
	t.Helper()
	req, err := verify.BuildDelivery("stripe", eventType, checkSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req.Body = customerField.ReplaceAll(req.Body, []byte(`"customer": "`+customer+`"`))
	if req, err = verify.Sign(req, "stripe", checkSecret, verify.Options{Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return checkInsert(t, db, req)
}

// jobsDeliveries stores the mixed set the tests check: two customers paid
// (invoice.payment_succeeded), one invoiced (invoice.paid), and the first
// customer again, whose readings cannot be told from its first delivery's.
func jobsDeliveries(t *testing.T, db string) []string {
	t.Helper()
	var ids []string
	for _, d := range []struct{ typ, cus string }{
		{"invoice.payment_succeeded", "cus_jobsA"}, {"invoice.payment_succeeded", "cus_jobsB"},
		{"invoice.paid", "cus_jobsC"}, {"invoice.payment_succeeded", "cus_jobsA"},
	} {
		ids = append(ids, fmt.Sprint(checkStripeFor(t, db, d.typ, d.cus)))
	}
	return ids
}

// verdicts is each delivery's phase statuses, "id phase status" sorted.
func verdicts(c *report.Check) []string {
	var out []string
	for _, d := range c.Deliveries {
		for _, p := range d.Phases {
			out = append(out, fmt.Sprintf("%d %s %s", d.DeliveryID, p.Phase, p.Status))
		}
	}
	sort.Strings(out)
	return out
}

// checkBothModes checks ids against a fresh wallet variant once with
// --jobs 1 and once with --jobs 4 and fails unless every delivery's every
// phase has the same status and the exit codes agree; it returns the
// concurrent run's report.
func checkBothModes(t *testing.T, db, variant string, ids []string, extra ...string) *report.Check {
	t.Helper()
	return checkBothModesProbe(t, db, variant, scopedBalanceSQL, ids, extra...)
}

// checkBothModesProbe is checkBothModes with probe as the --probe-sql.
func checkBothModesProbe(t *testing.T, db, variant, probe string, ids []string, extra ...string) *report.Check {
	t.Helper()
	var got [2]*report.Check
	var codes [2]int
	for i, jobs := range []string{"1", "4"} {
		url, dsn := checkWallet(t, variant)
		args := append([]string{"--to", url, "--probe-sql", probe, "--dsn", dsn, "--secret", checkSecret, "--seed", "7", "--jobs", jobs}, extra...)
		r, c := checkRunJSON(t, db, append(args, ids...)...)
		if c == nil {
			t.Fatalf("%s --jobs %s: exit %d\n%s", variant, jobs, r.Code, r.Stderr)
		}
		got[i], codes[i] = c, r.Code
	}
	a, b := verdicts(got[0]), verdicts(got[1])
	if codes[0] != codes[1] || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("%s: --jobs 1 (exit %d) and --jobs 4 (exit %d) disagree:\n%s\n---\n%s\nconcurrent run:\n%s", variant, codes[0], codes[1],
			strings.Join(a, "\n"), strings.Join(b, "\n"), checkDump(got[1]))
	}
	return got[1]
}

// A correct wallet passes every delivery in both modes, and the
// concurrent run says it ran side by side; a wallet that credits one event
// type again for every copy fails exactly that type's delivery (dups,
// burst, lost), in both modes.
func TestCheckJobsSameVerdicts(t *testing.T) {
	t.Parallel()
	db := t.TempDir() + "/h.db"
	ids := jobsDeliveries(t, db)
	fast := []string{"--settle", "100ms", "-n", "3", "--burst", "10", "--phases", "first,dups,burst,lost"}
	for _, variant := range []string{wallet.Fixed, wallet.PaidNaive} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			c := checkBothModes(t, db, variant, ids, fast...)
			notes := strings.Join(c.Notes, "\n")
			if !strings.Contains(notes, "up to 3 at a time") || !strings.Contains(notes, "2 of them read the same values") {
				t.Errorf("the report should say how the deliveries ran: %q", c.Notes)
			}
			for _, d := range c.Deliveries {
				for _, p := range d.Phases {
					bad := variant == wallet.PaidNaive && d.EventType == "invoice.paid" && p.Phase != "first"
					if bad && p.Status != report.Fail || !bad && p.Status != report.Pass {
						t.Errorf("%s: delivery %d (%s) %s %s: %s", variant, d.DeliveryID, d.EventType, p.Phase, p.Status, p.Message)
					}
				}
			}
		})
	}
}

// With a probe that is not scoped (every customer's balance), the default
// checks the deliveries as a group: a correct wallet passes every delivery,
// each phase judged in the group; a wallet that credits invoice.paid again
// on every copy fails exactly that delivery (dups, burst, lost), with the
// message it gets alone; both modes agree phase by phase.
func TestCheckGroupSameVerdicts(t *testing.T) {
	t.Parallel()
	db := t.TempDir() + "/h.db"
	ids := jobsDeliveries(t, db)
	fast := []string{"--settle", "100ms", "-n", "3", "--burst", "10", "--phases", "first,dups,tamper,burst,lost"}
	for _, variant := range []string{wallet.Fixed, wallet.PaidNaive} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			c := checkBothModesProbe(t, db, variant, totalBalanceSQL, ids, fast...)
			notes := strings.Join(c.Notes, "\n")
			t.Logf("%s: notes:\n%s", variant, notes)
			if !strings.Contains(notes, "then the other 3 as a group") {
				t.Errorf("the report should say the deliveries ran as a group: %q", c.Notes)
			}
			for _, d := range c.Deliveries {
				for _, p := range d.Phases {
					bad := variant == wallet.PaidNaive && d.EventType == "invoice.paid" && (p.Phase == "dups" || p.Phase == "burst" || p.Phase == "lost")
					if bad && p.Status != report.Fail || !bad && p.Status != report.Pass {
						t.Errorf("%s: delivery %d (%s) %s %s: %s", variant, d.DeliveryID, d.EventType, p.Phase, p.Status, p.Message)
					}
					if bad && p.Phase == "dups" && !strings.Contains(p.Message, "2 of 2 duplicates did the work again (copies 2, 3)") {
						t.Errorf("the failing delivery's dups should read as alone: %s", p.Message)
					}
				}
			}
			if variant == wallet.Fixed && !strings.Contains(notes, "first 3, dups 3, tamper 3, burst 3, lost 3") {
				t.Errorf("every phase of every delivery should be judged in the group: %q", c.Notes)
			}
		})
	}
}

// Ctrl-C while deliveries run side by side writes the report of every
// delivery: each one's judged phases as judged, the phase in progress
// interrupted; the progress showed the deliveries in flight and a total.
func TestCheckJobsInterruptWritesEveryDelivery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	ids := jobsDeliveries(t, db)[:3]
	// Each copy takes 300 ms inside the handler: the signal comes while
	// the deliveries' dups are sending.
	url, dsn := checkWallet(t, wallet.Fixed, func(o *wallet.Options) { o.Delay = 300 * time.Millisecond; o.Variant = wallet.Slow })
	jsonPath := filepath.Join(dir, "r.json")
	args := append([]string{"check", "--to", url, "--probe-sql", scopedBalanceSQL, "--dsn", dsn, "--secret", checkSecret, "--settle", "100ms",
		"--phases", "first,dups", "--jobs", "3", "--report", "json=" + jsonPath}, ids...)
	p := startBin(t, db, args...)
	waitStderr(t, p, "in flight", 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatal("check did not stop within 15s of SIGINT")
	}
	_, stderr := p.Output()
	if code := p.cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	var rc report.Check
	if err := json.Unmarshal([]byte(readFile(t, jsonPath)), &rc); err != nil {
		t.Fatalf("no JSON report: %v\n%s", err, stderr)
	}
	if rc.Verdict != report.VerdictInterrupted || len(rc.Deliveries) != 3 {
		t.Fatalf("verdict %s, %d deliveries, want interrupted with all 3\n%s", rc.Verdict, len(rc.Deliveries), checkDump(&rc))
	}
	for _, d := range rc.Deliveries {
		last := d.Phases[len(d.Phases)-1]
		if last.Status != report.Interrupted && last.Status != report.Pass {
			t.Errorf("delivery %d: %s %s, want pass or interrupted", d.DeliveryID, last.Phase, last.Status)
		}
	}
	if !strings.Contains(stderr, "0 of 3 judged") {
		t.Errorf("the progress should show a total:\n%s", stderr)
	}
}

// Ctrl-C while deliveries run as a group (a probe that is not scoped)
// writes the report of every delivery: the first, checked alone, as
// judged; the others' first phase marked interrupted. The group's first
// copies, duplicates and control events are sent back to back, and none of
// them is judged before the last control event has been read and its
// late-effect window watched (internal/check/grouptest_pipe.go).
func TestCheckGroupInterruptWritesEveryDelivery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	ids := jobsDeliveries(t, db)[:3]
	// Each copy takes 100 ms inside the handler (its work done before):
	// the signal comes while the group's duplicates are sending.
	url, dsn := checkWallet(t, wallet.Fixed, func(o *wallet.Options) { o.Delay = 100 * time.Millisecond; o.Variant = wallet.Slow })
	jsonPath := filepath.Join(dir, "r.json")
	args := append([]string{"check", "--to", url, "--probe-sql", totalBalanceSQL, "--dsn", dsn, "--secret", checkSecret, "--settle", "100ms",
		"--phases", "first,dups,burst", "--burst", "5", "--report", "json=" + jsonPath}, ids...)
	p := startBin(t, db, args...)
	waitStderr(t, p, "dups     delivery "+ids[1]+" copy", 60*time.Second)
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatal("check did not stop within 15s of SIGINT")
	}
	_, stderr := p.Output()
	if code := p.cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	var rc report.Check
	if err := json.Unmarshal([]byte(readFile(t, jsonPath)), &rc); err != nil {
		t.Fatalf("no JSON report: %v\n%s", err, stderr)
	}
	if rc.Verdict != report.VerdictInterrupted || len(rc.Deliveries) != 3 {
		t.Fatalf("verdict %s, %d deliveries, want interrupted with all 3\n%s", rc.Verdict, len(rc.Deliveries), checkDump(&rc))
	}
	for i, d := range rc.Deliveries {
		if i > 0 && len(d.Phases) != 1 {
			t.Errorf("delivery %d: %d phases, want first only (interrupted)", d.DeliveryID, len(d.Phases))
		}
		for _, ph := range d.Phases {
			want := report.Pass
			if i > 0 {
				want = report.Interrupted
			}
			if ph.Status != want {
				t.Errorf("delivery %d: %s %s, want %s: %s", d.DeliveryID, ph.Phase, ph.Status, want, ph.Message)
			}
		}
	}
}
