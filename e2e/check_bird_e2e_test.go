package e2e

// Bird webhooks (issue 27 §1): check judges a handler written from Bird's
// documented verification, which signs the URL the handler is served at.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

const birdKey = "bird-signing-key-e2e-7d1f"

// The delivery was captured at the URL Bird posts to (a tunnel's); check
// sends its copies to the handler's own URL and signs them for it. The
// handler that works each message once passes; the naive one fails dups and
// burst; both refuse the copy whose body was changed after signing. Bird
// sets no tolerance, so no hour-old copy is sent.
func TestCheckBirdHandlerFromDocs(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		mode string
		code int
	}{{"correct", 0}, {"naive", 1}} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			base := startPython(t, "testdata/handlers/bird.py", birdKey, tc.mode)
			db := filepath.Join(t.TempDir(), "h.db")
			req, err := verify.BuildDeliveryTo("bird", "sms.inbound", birdKey, "https://hooks.example.ngrok.app/webhooks/bird", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			id := checkInsert(t, db, req)
			r, c := checkRunJSON(t, db, "--to", base+"/webhooks/bird", "--probe-http", base+"/work", "--secret", birdKey,
				"--settle", "50ms", "-n", "3", "--burst", "5", "--phases", "first,dups,tamper,burst,lost", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			if first := checkPhase(t, c, "first"); first.Status != report.Pass {
				t.Fatalf("first: %s %s", first.Status, first.Message)
			}
			if tp := checkPhase(t, c, "tamper"); tp.Status != report.Pass || tp.Attempts != 1 {
				t.Fatalf("tamper: %s %d %s", tp.Status, tp.Attempts, tp.Message)
			}
			if !strings.Contains(strings.Join(c.Notes, "\n"), "Bird sets no tolerance") {
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
				t.Fatalf("a handler deduping on payload.id should not be warned: %q", c.Warnings)
			}
		})
	}
}

// A handler that verifies against a fixed public URL (as Bird's sample
// passes 'https://domain.com/webhook/bird') refuses every copy hookreplay
// signs for the URL it sends it to: a setup problem, exit 2, whose message
// names that cause.
func TestCheckBirdFixedURLIsASetupProblem(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	base := startPython(t, "testdata/handlers/bird.py", birdKey, "correct", "https://domain.com/webhook/bird")
	db := filepath.Join(t.TempDir(), "h.db")
	req, err := verify.BuildDeliveryTo("bird", "sms.inbound", birdKey, "https://domain.com/webhook/bird", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id := checkInsert(t, db, req)
	r := runBin(t, db, nil, "check", "--no-color", "--to", base+"/webhook/bird", "--probe-http", base+"/work", "--secret", birdKey,
		"--settle", "50ms", "--phases", "first", fmt.Sprint(id))
	if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "verifies against another URL than the one the copy was sent to") {
		t.Fatalf("want exit 2 naming the URL: %+v", r)
	}
}
