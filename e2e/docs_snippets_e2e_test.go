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

// runnableMarker precedes a ```sh block that runs as written from an empty
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

// TestDocSnippetsRun runs every runnable block of the documentation with
// bash (set -e), in an empty directory, with the built binary first on PATH,
// and checks its exit code. Blocks use fixed ports, as a reader would: when
// the machine allows it each block gets a network namespace of its own
// (unshare -rn), so they cannot collide with anything else listening there;
// otherwise they run one after another on the machine's loopback. Whatever
// a block started in the background is killed when it ends.
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
	isolate := netnsWorks()
	if !isolate {
		t.Log("unshare -rn is not available: snippets run on the machine's loopback (fixed ports)")
	}
	binDir := filepath.Dir(binPath)
	for _, s := range snippets {
		t.Run(fmt.Sprintf("%s:%d", s.File, s.Line), func(t *testing.T) {
			runSnippet(t, s, binDir, isolate)
		})
	}
}

// runSnippet runs s from an empty directory and checks its exit code. A
// run whose output shows a server not listening yet (the block's "sleep 1"
// before its first request was not enough on a loaded machine) is run once
// more from a fresh directory; a second failure fails the test.
func runSnippet(t *testing.T, s snippet, binDir string, isolate bool) {
	code, out, took := runSnippetOnce(t, s, binDir, isolate)
	if code != s.Exit && notListeningYet(out) {
		t.Logf("%s:%d exited %d with a server not listening yet (after %s); running it again", s.File, s.Line, code, took)
		code, out, took = runSnippetOnce(t, s, binDir, isolate)
	}
	if code != s.Exit {
		t.Fatalf("%s:%d exited %d, want %d (after %s)\n--- block\n%s%s", s.File, s.Line, code, s.Exit, took, s.Code, out)
	}
	t.Logf("%s:%d exited %d in %s", s.File, s.Line, code, took)
}

func notListeningYet(out string) bool {
	return strings.Contains(out, "connection refused") || strings.Contains(out, "nothing is listening")
}

func runSnippetOnce(t *testing.T, s snippet, binDir string, isolate bool) (code int, out string, took time.Duration) {
	dir := t.TempDir()
	logs := t.TempDir()
	script := filepath.Join(logs, "snippet.sh")
	if err := os.WriteFile(script, []byte("set -e\n"+s.Code), 0o644); err != nil {
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
	c.Env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := c.Process.Pid
	defer func() {
		// The block's background jobs (a capture, a handler) are in its group.
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	limit := 120 * time.Second
	var werr error
	select {
	case werr = <-done:
	case <-time.After(limit):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s:%d did not finish within %s\n%s", s.File, s.Line, limit, snippetOutput(logs))
	}
	if ee, ok := werr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	return code, snippetOutput(logs), time.Since(start).Round(time.Millisecond)
}

func snippetOutput(logs string) string {
	var b strings.Builder
	for _, name := range []string{"stdout", "stderr"} {
		data, _ := os.ReadFile(filepath.Join(logs, name))
		fmt.Fprintf(&b, "--- %s\n", name)
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		n := 0
		for sc.Scan() {
			if n++; n > 200 {
				b.WriteString("…\n")
				break
			}
			b.WriteString(sc.Text() + "\n")
		}
	}
	return b.String()
}

// netnsWorks reports whether a block can get a network namespace of its own
// with a working loopback (unprivileged user namespaces and ip(8)).
func netnsWorks() bool {
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	return exec.Command("unshare", "-rn", "sh", "-c", "ip link set lo up").Run() == nil
}
