package e2e

// End-to-end tests of the limits on what a user can type: every number and
// every body read from a file or stdin is bounded, and a value beyond the
// bound is one line on stderr and exit 2 before anything is allocated. The
// binary runs under a 4 GiB address-space limit (ulimit -v), so a command that
// tried to allocate for the value would die with "out of memory" instead of
// taking the test machine's memory.

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runCapped runs hookreplay with stdin from the file stdin ("" for none)
// under an address-space limit (not with -race, whose shadow memory needs
// more) and a deadline.
func runCapped(t *testing.T, stdin string, args ...string) (result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var c *exec.Cmd
	if raceEnabled {
		c = exec.CommandContext(ctx, binPath, args...)
	} else {
		c = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `ulimit -v 4194304 && exec "$0" "$@"`, binPath}, args...)...)
	}
	c.Env = binEnv()
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c.Stdin = f
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run hookreplay %v: %v", args, err)
	}
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}, took
}

func TestLimitsE2ENumbersAreBoundedBeforeAllocation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	id := strconv.FormatInt(checkStripeDelivery(t, db), 10)
	h := startReplayHandler(t, func(w http.ResponseWriter, a replayArrival) { w.WriteHeader(200) })
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 10<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	replay := func(extra ...string) []string {
		return append([]string{"--db", db, "replay", id, "--to", h.URL}, extra...)
	}
	check := func(extra ...string) []string {
		return append([]string{"--db", db, "check", id, "--to", h.URL, "--probe-http", h.URL}, extra...)
	}
	cases := []struct {
		args  []string
		stdin string
		want  string // in the one line on stderr
	}{
		{replay("--concurrency", "100000000"), "", "--concurrency 100000000 is out of range (1 to 1024)"},
		{replay("-n", "1000000000000"), "", "-n 1000000000000 is out of range (1 to 100000)"},
		{replay("--lose-response", "99999999999"), "", "--lose-response 99999999999 is out of range (0 to 100000)"},
		{replay("-n", "0"), "", "-n 0 is out of range (1 to 100000)"},
		{replay("--timeout", "2562047h"), "", "--timeout 2562047h0m0s is out of range (1ns to 24h0m0s)"},
		{replay("--speedup", "NaN"), "", "--speedup NaN is out of range"},
		{replay("--body-file", "/dev/zero"), "", "--body-file /dev/zero: larger than 10MiB"},
		{replay("--body-file", big), "", "larger than 10MiB"},
		{check("-n", "1000000000000"), "", "-n 1000000000000 is out of range (1 to 100000)"},
		{check("--burst", "100000000"), "", "--burst 100000000 is out of range (2 to 1024)"},
		{check("--settle-max", "2562047h"), "", "--settle-max 2562047h0m0s is out of range"},
		{check("--provider-timeout", "-1s"), "", "--provider-timeout -1s is out of range"},
		{[]string{"--db", db, "capture", "--listen", "127.0.0.1:0", "--max-body", "4EiB"}, "", "--max-body"},
		{[]string{"--db", db, "capture", "--listen", "127.0.0.1:0", "--max-body", "2GiB"}, "", "--max-body 2GiB is out of range (1 byte to 1GiB)"},
		{[]string{"--db", db, "import", "--max-body", "3GiB", "-"}, "", "--max-body 3GiB is out of range (1 byte to 1GiB)"},
		{[]string{"--db", db, "list", "--limit", "-1"}, "", "--limit -1 is out of range (0 to 1000000)"},
		{[]string{"--db", db, "runs", "--limit", "99999999999"}, "", "--limit 99999999999 is out of range (0 to 1000000)"},
		{[]string{"send", "--provider", "stripe", "--event", "invoice.paid", "--to", h.URL, "--secret", "s", "--timeout", "0s"}, "", "--timeout 0s is out of range"},
		{[]string{"verify", "--provider", "stripe", "--secret", "s", "--header", "Stripe-Signature: t=1,v1=00"}, "/dev/zero", "stdin: larger than 10MiB"},
		{[]string{"verify", "--provider", "stripe", "--secret", "s", "--tolerance", "2562047h"}, "", "--tolerance 2562047h0m0s is out of range"},
		{[]string{"sign", "--provider", "stripe", "--secret", "s"}, "/dev/zero", "stdin: larger than 10MiB"},
		{[]string{"verify", "--provider", "stripe", "--secret", "s", "--header", "Stripe-Signature: t=1,v1=00"}, big, "stdin: larger than 10MiB"},
	}
	for _, c := range cases {
		r, took := runCapped(t, c.stdin, c.args...)
		stderr := strings.TrimSpace(r.Stderr)
		if r.Code != 2 || strings.Contains(stderr, "\n") || !strings.Contains(stderr, c.want) {
			t.Errorf("hookreplay %s: exit %d after %v, want exit 2 and one line containing %q; stderr (%d bytes):\n%.600s",
				strings.Join(c.args[2:], " "), r.Code, took, c.want, len(r.Stderr), r.Stderr)
			continue
		}
		if took > 5*time.Second {
			t.Errorf("hookreplay %s: took %v to refuse", strings.Join(c.args, " "), took)
		}
	}
	if n := len(h.arrivals()); n != 0 {
		t.Errorf("the handler got %d requests from refused commands", n)
	}
}
