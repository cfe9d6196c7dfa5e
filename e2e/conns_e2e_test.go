package e2e

// End-to-end tests of capture's connection cap: silent connections cannot
// keep a real delivery out, and beyond the cap capture answers 503 at once.

import (
	"bufio"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// captureStartLimited runs capture under a file-descriptor limit.
func captureStartLimited(t *testing.T, db string, nofile string, extra ...string) string {
	t.Helper()
	args := append([]string{"-c", `ulimit -n ` + nofile + ` && exec "$0" "$@"`, binPath, "--db", db, "capture", "--listen", "127.0.0.1:0"}, extra...)
	c := exec.Command("/bin/sh", args...)
	c.Env = binEnv()
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	re := regexp.MustCompile(`capturing on http://(\S+) into`)
	deadline := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("capture exited before listening")
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		case <-deadline:
			t.Fatal("capture did not report its address")
		}
	}
}

// deliverOnce sends one delivery on a new connection and returns the status
// and how long the answer took.
func deliverOnce(t *testing.T, addr string) (int, http.Header, time.Duration) {
	t.Helper()
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	body := `{"id":"evt_conns"}`
	if _, err := c.Write([]byte("POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)); err != nil {
		return 0, nil, time.Since(start)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, nil, time.Since(start)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, time.Since(start)
}

// dialMany opens n connections that send nothing (silent) or half a
// request line (slow), and closes them when the test ends.
func dialMany(t *testing.T, addr string, n int, send string) {
	t.Helper()
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		t.Cleanup(func() { c.Close() })
		if send != "" {
			c.Write([]byte(send))
		}
	}
}

func TestConnsE2ESilentConnectionsDoNotStarveDeliveries(t *testing.T) {
	db := t.TempDir() + "/h.db"
	// 128 descriptors, as a small container might give; 300 silent
	// connections (more than the descriptors) come before a real delivery.
	addr := captureStartLimited(t, db, "128")
	dialMany(t, addr, 300, "")
	time.Sleep(200 * time.Millisecond)
	status, _, took := deliverOnce(t, addr)
	if status != 200 || took > 3*time.Second {
		t.Fatalf("a delivery behind 300 silent connections: status %d after %v, want 200 within 3s", status, took)
	}
	t.Logf("a delivery behind 300 silent connections (ulimit -n 128): %d after %v", status, took.Round(time.Millisecond))
}

func TestConnsE2EBeyondTheCapIsAFast503(t *testing.T) {
	db := t.TempDir() + "/h.db"
	addr := captureStartLimited(t, db, "1024", "--max-conns", "8")
	// Eight connections in the middle of a request: busy, not idle.
	dialMany(t, addr, 8, "POST /hook HTTP/1.1\r\nHost: x\r\n")
	time.Sleep(200 * time.Millisecond)
	status, h, took := deliverOnce(t, addr)
	if status != 503 || took > time.Second || h.Get("Retry-After") == "" {
		t.Fatalf("beyond --max-conns 8: status %d after %v (Retry-After %q), want a 503 with Retry-After within 1s", status, took, h.Get("Retry-After"))
	}
	t.Logf("beyond --max-conns 8 (all busy): %d after %v", status, took.Round(time.Millisecond))
	if r := runBin(t, db, nil, "capture", "--max-conns", "0"); r.Code != 2 || !strings.Contains(r.Stderr, "--max-conns 0 is out of range") {
		t.Fatalf("--max-conns 0: %+v", r)
	}
}
