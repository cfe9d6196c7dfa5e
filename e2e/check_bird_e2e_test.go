package e2e

// Bird webhooks (issue 27 §1): check judges a handler written from Bird's
// documented verification, which signs the URL the handler is served at.

import (
	"fmt"
	"os"
	"os/exec"
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
	checkHandlerFromDocs(t, handlerFromDocs{
		start: func(t *testing.T, mode string) string {
			return startPython(t, "testdata/handlers/bird.py", birdKey, mode)
		},
		insert: func(t *testing.T, db string) int64 {
			req, err := verify.BuildDeliveryTo("bird", "sms.inbound", birdKey, "https://hooks.example.ngrok.app/webhooks/bird", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			return checkInsert(t, db, req)
		},
		route: "/webhooks/bird", secret: birdKey,
		flags: []string{"-n", "3", "--burst", "5", "--phases", "first,dups,tamper,burst,lost"},
		pass:  []string{"first", "tamper"},
		also: func(t *testing.T, mode string, c *report.Check) {
			if tp := checkPhase(t, c, "tamper"); tp.Attempts != 1 {
				t.Fatalf("tamper: %s %d %s", tp.Status, tp.Attempts, tp.Message)
			}
			if !strings.Contains(strings.Join(c.Notes, "\n"), "Bird sets no tolerance") {
				t.Fatalf("the note should say why no hour-old copy was sent: %q", c.Notes)
			}
		},
	})
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
	if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "verifies against another URL than the one the copy was sent to") ||
		!strings.Contains(r.Stderr, "the copy was signed for "+base+"/webhook/bird: if the handler verifies against the URL Bird was configured with") ||
		!strings.Contains(r.Stderr, "give that URL with --signed-url") {
		t.Fatalf("want exit 2 naming the URL signed for and --signed-url: %+v", r)
	}
	// Given the URL it verifies against, the handler is checked: copies are
	// signed for it and still sent to --to.
	r, c := checkRunJSON(t, db, "--to", base+"/webhook/bird", "--signed-url", "https://domain.com/webhook/bird", "--probe-http", base+"/work", "--secret", birdKey,
		"--settle", "50ms", "--phases", "first,dups,tamper", "-n", "2", fmt.Sprint(id))
	if r.Code != 0 || c == nil {
		t.Fatalf("with --signed-url: want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if tp := checkPhase(t, c, "tamper"); tp.Status != report.Pass {
		t.Fatalf("with --signed-url, tamper: %s %s", tp.Status, tp.Message)
	}
	// hookreplay.yaml's signed_url is the same.
	dir := filepath.Dir(db)
	yml := fmt.Sprintf("checks:\n  bird:\n    deliveries: {ids: [%d]}\n    to: %s/webhook/bird\n    signed_url: https://domain.com/webhook/bird\n    secret_env: BIRD_KEY_E2E\n    phases: [first]\n    settle: 50ms\n    probes:\n      work: {http: %s/work}\n", id, base, base)
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "--db", db, "check", "-q")
	cmd.Dir, cmd.Env = dir, binEnv("BIRD_KEY_E2E="+birdKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hookreplay.yaml with signed_url: want exit 0, got %v\n%s", err, out)
	}
}
