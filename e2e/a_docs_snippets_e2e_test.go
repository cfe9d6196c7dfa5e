// The file's name starts with "a_" so that TestDocSnippetsRun, the longest
// parallel test (its documents side by side, docs/demo.md alone 35 s), is
// the first parallel test released: go test runs a package's tests in the
// order of its files' names, and released last it alone held the package's
// end for half a minute after the others (go test -json ./e2e).

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// snippet is a shell block of the documentation marked runnable.
type snippet struct {
	File string // repository path
	Line int    // line of the opening fence
	Exit int    // the exit code the block ends with
	Code string
}

// runnableMarker precedes a ```sh block that runs as written, after the
// document's runnable blocks above it in the same shell, from an empty
// directory: <!-- runnable --> (exit 0) or <!-- runnable: exit N -->.
var runnableMarker = regexp.MustCompile(`^<!-- runnable(?:: exit (\d+))? -->$`)

// docSnippets extracts the runnable blocks of the README, CONTRIBUTING.md and
// docs/*.md. A marker not followed by a ```sh or ```bash block is an error,
// so a marker cannot silently stop testing anything.
func docSnippets(t *testing.T) []snippet {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md"}
	more, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	var out []snippet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			m := runnableMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
			if m == nil {
				continue
			}
			exit := 0
			if m[1] != "" {
				exit, _ = strconv.Atoi(m[1])
			}
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			if j >= len(lines) || (lines[j] != "```sh" && lines[j] != "```bash") {
				t.Fatalf("%s:%d: a runnable marker must be followed by a ```sh block", f, i+1)
			}
			var code []string
			k := j + 1
			for ; k < len(lines) && lines[k] != "```"; k++ {
				code = append(code, lines[k])
			}
			if k >= len(lines) {
				t.Fatalf("%s:%d: unterminated code block", f, j+1)
			}
			out = append(out, snippet{File: f, Line: j + 1, Exit: exit, Code: strings.Join(code, "\n") + "\n"})
			i = k
		}
	}
	return out
}

// TestDocSnippetsRun runs the runnable blocks of each document in order, in
// one bash session per document, as a reader following it does: one empty
// directory, the built binary first on PATH, and whatever a block leaves
// behind (files, exported variables, the current directory, background
// jobs it did not stop) still there for the next block. So a block that
// leaves a capture running on a port a later block wants fails the test
// ("address already in use" anywhere fails it), as it would fail the reader,
// and so does a document that leaves background jobs running at its end.
// Commands run without set -e, as typed into a shell: a block passes when
// none of its commands failed, or, for <!-- runnable: exit N -->, when
// exactly one failed, with code N (a check that finds the bug, followed by
// the lines that stop what the block started). Blocks use fixed ports, as a
// reader would: when the
// machine allows it each document gets a network namespace of its own
// (unshare -rn), so documents cannot collide with each other or anything
// else listening; otherwise they run one after another on the machine's
// loopback. Whatever a document's session started is killed when it ends.
// The --help examples of helpExamples run the same way, each a document.
func TestDocSnippetsRun(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	if testing.Short() {
		t.Skip("runs the documentation's snippets (a minute); skipped with -short")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	snippets := docSnippets(t)
	inREADME := 0
	for _, s := range snippets {
		if s.File == "README.md" {
			inREADME++
		}
	}
	// The README's quick start and the guide's capture → check → CI path at least.
	if inREADME < 1 || len(snippets) < 5 {
		t.Fatalf("only %d runnable snippets (%d in the README): markers lost?", len(snippets), inREADME)
	}
	snippets = append(snippets, helpExampleSnippets(t)...)
	isolate := netnsWorks()
	if !isolate {
		t.Log("unshare -rn is not available: snippets run on the machine's loopback (fixed ports)")
	}
	binDir := filepath.Dir(binPath)
	var files []string
	byFile := map[string][]snippet{}
	for _, s := range snippets {
		if byFile[s.File] == nil {
			files = append(files, s.File)
		}
		byFile[s.File] = append(byFile[s.File], s)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			if isolate {
				t.Parallel() // a network namespace each: documents cannot collide
			}
			runDocument(t, byFile[f], binDir, isolate)
		})
	}
}

// blockResult is how one block of a session ended: its last command's exit
// code and the commands that failed in it ("CODE@LINE: COMMAND").
type blockResult struct {
	Code  int
	Fails []string
}

// runDocument runs a document's blocks in one session and checks each. A
// session whose output shows a server not listening yet (a block's "sleep
// 1" before its first request was not enough on a loaded machine) is run
// once more from a fresh directory, as on a machine that needs longer
// waits: each sleep of the blocks lasts slowSleeps times as long; a second
// failure fails the test.
func runDocument(t *testing.T, blocks []snippet, binDir string, isolate bool) {
	results, left, out, took := runSession(t, blocks, binDir, isolate)
	if bad := badBlock(blocks, results); bad >= 0 && notListeningYet(out[bad]) {
		t.Logf("%s:%d failed with a server not listening yet (after %s); running the document again with each sleep %d times as long", blocks[bad].File, blocks[bad].Line, took, slowSleeps)
		results, left, out, took = runSession(t, blocks, slowSleepDir(t)+string(os.PathListSeparator)+binDir, isolate)
	}
	if bad := badBlock(blocks, results); bad >= 0 {
		s := blocks[bad]
		var r blockResult
		if bad < len(results) {
			r = results[bad]
		}
		want := "no command to fail"
		if s.Exit != 0 {
			want = fmt.Sprintf("exactly one command to fail, with exit %d", s.Exit)
		}
		t.Fatalf("%s:%d (block %d of %d, run in one shell after the blocks above it) ended with exit %d, failed commands %q; want %s (after %s)\n--- block\n%s%s",
			s.File, s.Line, bad+1, len(blocks), r.Code, r.Fails, want, took, s.Code, out[bad])
	}
	for i, s := range blocks {
		if strings.Contains(out[i], "address already in use") {
			t.Fatalf("%s:%d (block %d of %d): a port it wants is still taken, most likely by a background job an earlier block did not stop (kill %%1 %%2; wait)\n--- block\n%s%s",
				s.File, s.Line, i+1, len(blocks), s.Code, out[i])
		}
	}
	if len(left) > 0 {
		t.Fatalf("%s: %d background jobs still running after its last block: the block that starts a job (cmd &), or a later one, must stop it (kill %%1 %%2; wait)", blocks[0].File, len(left))
	}
	for i, s := range blocks {
		t.Logf("%s:%d ended with exit %d, failed commands %q", s.File, s.Line, results[i].Code, results[i].Fails)
	}
	t.Logf("%s: %d blocks in one session in %s", blocks[0].File, len(blocks), took)
}

// badBlock is the index of the first block that did not end as its marker
// says (a block that did not run at all counts), or -1.
func badBlock(blocks []snippet, results []blockResult) int {
	for i, s := range blocks {
		if i >= len(results) {
			return i
		}
		r := results[i]
		switch {
		case s.Exit == 0 && (r.Code != 0 || len(r.Fails) > 0):
			return i
		case s.Exit != 0 && (len(r.Fails) != 1 || !strings.HasPrefix(r.Fails[0], strconv.Itoa(s.Exit)+"@")):
			return i
		}
	}
	return -1
}

// slowSleeps is how many times longer a document's sleeps last when it is
// run again because a server was not listening yet: under the race
// detector on a loaded 2-core machine a capture took over 9 s to listen
// (.ci/run, 2026-12-05) where the README gives it 1 s.
const slowSleeps = 8

// slowSleepDir returns a directory whose sleep, first on PATH, sleeps
// slowSleeps times as long as asked.
func slowSleepDir(t *testing.T) string {
	dir := t.TempDir()
	real, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nexec %s \"$(awk -v s=\"$1\" 'BEGIN { print s * %d }')\"\n", real, slowSleeps)
	if err := os.WriteFile(filepath.Join(dir, "sleep"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// notListeningYet reports whether a session's output shows a server not
// listening yet: hookreplay's words, Go's, or bash's /dev/tcp ("connect:
// Connection refused", capitalised).
func notListeningYet(out string) bool {
	out = strings.ToLower(out)
	return strings.Contains(out, "connection refused") || strings.Contains(out, "nothing is listening")
}

// sessionDriver runs the blocks (files block1.sh …) one after another in
// the current shell, as a reader pastes them. The ERR trap notes each
// command that fails (the commands set -e would stop at) without stopping,
// except the "source" of the block itself. Between blocks it reports and
// forgets finished jobs, as an interactive shell does at its prompt (a
// script's bash keeps them, numbering the next job %3 where the reader's
// shell says %1). Each block's end is written to
// the results file, and its start to both output streams; the jobs still
// running at the end go to the file left.
const sessionDriver = `set -E
trap 'rc=$?; [[ $BASH_COMMAND == "source "* ]] || __hr_fails+=("$rc@$LINENO: $BASH_COMMAND")' ERR
for __hr_i in $(seq 1 "$__HR_BLOCKS"); do
	__hr_fails=()
	echo "=== block $__hr_i"
	echo "=== block $__hr_i" >&2
	source "$__HR_LOGS/block$__hr_i.sh" </dev/null
	__hr_rc=$?
	jobs >/dev/null 2>&1 # as a prompt does: forget finished jobs, so the next block's start at %1 again
	{ printf '%s' "$__hr_rc"; for __hr_f in "${__hr_fails[@]}"; do printf '\t%s' "${__hr_f//[$'\t\n']/ }"; done; printf '\n'; } >> "$__HR_LOGS/results"
done
jobs -pr > "$__HR_LOGS/left"
`

// runSession runs blocks in one bash session in an empty directory and
// returns each block's result, the background jobs (pids) still running
// after the last block, and each block's output (stdout then stderr).
func runSession(t *testing.T, blocks []snippet, binDir string, isolate bool) (results []blockResult, left []string, out []string, took time.Duration) {
	dir := t.TempDir()
	logs := t.TempDir()
	for i, s := range blocks {
		if err := os.WriteFile(filepath.Join(logs, fmt.Sprintf("block%d.sh", i+1)), []byte(s.Code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(logs, "session.sh")
	if err := os.WriteFile(script, []byte(sessionDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, err := os.Create(filepath.Join(logs, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(logs, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var c *exec.Cmd
	if isolate {
		c = exec.Command("unshare", "-rn", "bash", "-c", `ip link set lo up && exec bash "$0"`, script)
	} else {
		c = exec.Command("bash", script)
	}
	c.Dir = dir
	// Files, not pipes: background jobs keep their output open after bash
	// exits, and Wait must not wait for them.
	c.Stdout, c.Stderr = stdout, stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOOKREPLAY_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	c.Env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1", "GORACE=atexit_sleep_ms=0",
		"__HR_LOGS="+logs, fmt.Sprintf("__HR_BLOCKS=%d", len(blocks)))
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := c.Process.Pid
	defer func() {
		// The session's background jobs (a capture, a handler) are in its group.
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	limit := time.Duration(len(blocks)) * 120 * time.Second
	select {
	case err = <-done:
	case <-time.After(limit):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s: the session did not finish within %s\n%s", blocks[0].File, limit, strings.Join(sessionOutput(logs, len(blocks)), ""))
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	took = time.Since(start).Round(time.Millisecond)
	data, _ := os.ReadFile(filepath.Join(logs, "results"))
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		code, _ := strconv.Atoi(f[0])
		results = append(results, blockResult{Code: code, Fails: f[1:]})
	}
	data, _ = os.ReadFile(filepath.Join(logs, "left"))
	left = strings.Fields(string(data))
	return results, left, sessionOutput(logs, len(blocks)), took
}

// sessionOutput splits the session's stdout and stderr at the blocks'
// "=== block N" lines: each block's output, at most 200 lines of each.
func sessionOutput(logs string, n int) []string {
	outs := make([]strings.Builder, n+1)
	for _, name := range []string{"stdout", "stderr"} {
		data, _ := os.ReadFile(filepath.Join(logs, name))
		cur, lines := 0, 0
		for i := range outs {
			fmt.Fprintf(&outs[i], "--- %s\n", name)
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "=== block "); ok {
				if i, err := strconv.Atoi(k); err == nil && i >= 1 && i <= n {
					cur, lines = i, 0
					continue
				}
			}
			if lines++; lines > 200 {
				if lines == 201 {
					outs[cur].WriteString("…\n")
				}
				continue
			}
			outs[cur].WriteString(sc.Text() + "\n")
		}
	}
	res := make([]string, n)
	for i := range res {
		res[i] = outs[i+1].String()
	}
	return res
}

// netnsWorks reports whether a session can get a network namespace of its
// own with a working loopback (unprivileged user namespaces and ip(8)).
func netnsWorks() bool {
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	return exec.Command("unshare", "-rn", "sh", "-c", "ip link set lo up").Run() == nil
}
