//go:build slow

package e2e

// The memory-scale half of list_memory_e2e_test.go (behind the slow tag: it
// fills a store with thousands of deliveries and samples peak RSS, timing-
// and machine-bound): the commands that walk a whole store (list --limit 0
// as a table and as JSON, export, import of an export) hold one delivery at
// a time, never every row or every body.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// peakRSS runs hookreplay with args, its stdout to a file, and returns its
// peak resident set size and what it printed. The peak is VmHWM, sampled
// every few milliseconds while it runs: the kernel's maxrss after it exits
// would also count this test process's own peak (Go starts children with
// vfork, sharing its memory until exec).
func peakRSS(t *testing.T, db string, args ...string) (int64, string) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c := exec.Command(binPath, append([]string{"--db", db}, args...)...)
	c.Env = binEnv()
	c.Stdout = out
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", c.Process.Pid)
	var peak int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if kb := statusKB(status, "VmHWM:"); kb > peak {
			peak = kb
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("hookreplay %v: %v\n%s", args, err, errb.String())
			}
			if peak == 0 {
				t.Skip("no /proc/PID/status VmHWM on this system")
			}
			b, err := os.ReadFile(out.Name())
			if err != nil {
				t.Fatal(err)
			}
			return peak << 10, string(b)
		case <-tick.C:
		}
	}
}

// statusKB reads a "Name:  N kB" line of a /proc/PID/status file; 0 when
// absent (the process has exited).
func statusKB(path, name string) int64 {
	b, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == name {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb
		}
	}
	return 0
}

// TestListE2EWholeStoreInConstantMemory: a store of 1500 deliveries with
// 32 KiB bodies (47 MiB of bodies, as much again of wire bytes) is listed
// whole, exported and imported into another store, each under 96 MiB of
// peak RSS (25 to 45 MiB is seen, whatever the store's size: the Go heap
// stays under 5 MiB; the rest is the runtime's and SQLite's working memory).
// Before they streamed, each held every delivery with its bytes: on this
// store the table peaked at 164 MiB, the JSONL export at 251 MiB, the HAR
// export at 1.2 GiB and the import of the export at 418 MiB.
func TestListE2EWholeStoreInConstantMemory(t *testing.T) {
	const n, size, bound = 1500, 32 << 10, 96 << 20
	dir := t.TempDir()
	db := filepath.Join(dir, "big.db")
	fillStore(t, db, n, size)
	for _, args := range [][]string{
		{"list", "--limit", "0"},
		{"list", "--limit", "0", "--json"},
		{"export", "-o", filepath.Join(dir, "all.jsonl")},
		{"export", "--format", "har", "-o", filepath.Join(dir, "all.har")},
		{"import", filepath.Join(dir, "all.jsonl")}, // into copy.db
	} {
		on := db
		if args[0] == "import" {
			on = filepath.Join(dir, "copy.db")
		}
		peak, out := peakRSS(t, on, args...)
		t.Logf("%v: peak RSS %.1f MiB", args, float64(peak)/(1<<20))
		if peak > bound && !raceEnabled { // the race detector's shadow memory grows with the heap
			t.Errorf("%v: peak RSS %.1f MiB for %d deliveries of %d KiB: it holds the store, not one delivery at a time",
				args, float64(peak)/(1<<20), n, size>>10)
		}
		if args[1] == "--limit" && args[len(args)-1] == "0" {
			if lines := strings.Count(out, "\n"); lines != n+1 {
				t.Errorf("list --limit 0 printed %d lines, want %d", lines, n+1)
			}
			if first := strings.SplitN(out, "\n", 3); !strings.HasPrefix(first[1], fmt.Sprint(n, " ")) ||
				!strings.HasSuffix(first[1], " 200") || strings.Index(first[0], "STATUS") != strings.LastIndex(first[1], "200") {
				t.Errorf("list --limit 0 table:\n%s\n%s", first[0], first[1])
			}
		}
	}
	if r := runBin(t, filepath.Join(dir, "copy.db"), nil, "list", "--limit", "0", "--json", "id"); strings.Count(r.Stdout, `"id"`) != n {
		t.Errorf("the import of the export holds %d deliveries, want %d", strings.Count(r.Stdout, `"id"`), n)
	}
}
