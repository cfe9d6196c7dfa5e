package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/testkit"
)

// A Redis server whose reply announces 2^63−1 bytes, part-way through a
// check (issue 31 §1): the client allocated what it announced and check
// died with a Go panic and a goroutine dump, writing no report. Now the
// probe refuses the reply in one line naming it, exit 2, and the report of
// what ran is still written.
func TestCheckRedisHostileReplyLength(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	var reads atomic.Int64
	url := testkit.FakeRedis(t, func(cmd []string) string {
		if cmd[0] != "GET" {
			return "-ERR unexpected\r\n"
		}
		if reads.Add(1) > 3 {
			return "$9223372036854775807\r\n"
		}
		return "$1\r\n5\r\n"
	})
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	id := checkStripeDelivery(t, db)
	out := filepath.Join(dir, "report.json")
	r := runBin(t, db, nil, "check", "--to", base+"/webhooks/stripe", "--secret", checkSecret, "-n", "3", "--settle", "50ms",
		"--phases", "first,dups", "--probe-redis", "credits="+url+" GET credits", "--report", "json="+out, "--no-color", fmt.Sprint(id))
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	last := lines[len(lines)-1]
	if r.Code != 2 || strings.Contains(r.Stderr, "goroutine") || strings.Contains(r.Stderr, "panic") ||
		!strings.Contains(last, "credits") || !strings.Contains(last, "announces a 9223372036854775807-byte value") {
		t.Fatalf("want exit 2 and one line naming the probe, got %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var c report.Check
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Verdict != report.VerdictError || len(c.Deliveries) != 1 {
		t.Fatalf("want the report of what ran, verdict error: %v\n%s", err, b)
	}
}
