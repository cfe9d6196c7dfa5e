package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestCaptureForwarderHints: capture's start-up lines on stderr name the
// port it really listens on in a ready command per forwarder; -q hides them.
func TestCaptureForwarderHints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, addr := captureStart(t, dir+"/h.db")
	want := []string{
		"stripe listen --forward-to " + addr + "/webhooks/stripe",
		"gh webhook forward --repo=OWNER/REPO --events=push --url=http://" + addr + "/webhooks/github",
		"smee --url https://smee.io/CHANNEL --target http://" + addr + "/webhooks/github",
		"ngrok http " + addr,
		"cloudflared tunnel --url http://" + addr,
	}
	var stdout, stderr string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if stdout, stderr = p.Output(); strings.Contains(stderr, "cloudflared") {
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("start-up lines went to stdout (it carries one line per delivery): %q", stdout)
	}
	p.stop(5 * time.Second)

	q, _ := captureStart(t, dir+"/h.db", "-q")
	time.Sleep(200 * time.Millisecond)
	if _, stderr := q.Output(); strings.Contains(stderr, "stripe listen") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("-q: want only the capturing line, got:\n%s", stderr)
	}
	q.stop(5 * time.Second)
}
