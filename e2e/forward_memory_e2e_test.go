//go:build slow

package e2e

// End-to-end tests of capture's memory: a handler answering 64 MiB to
// several deliveries at once is streamed to the senders, not buffered (a
// bounded prefix of each answer is stored, with the full length); large
// request bodies sent at once are held within the body budget.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// vmHWM is the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

func TestForwardE2ELargeAnswersAreStreamed(t *testing.T) {
	const size, senders = 64 << 20, 8
	chunk := []byte(strings.Repeat("0123456789abcdef", 4096)) // 64 KiB
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(size))
		}
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	db := filepath.Join(t.TempDir(), "h.db")
	p, addr := captureStart(t, db, "--forward", "http://"+ln.Addr().String())
	got := sendAtOnce(addr, senders, 120*time.Second, func(i int, c net.Conn) string {
		target := "/hook"
		if i%2 == 1 {
			target += "?chunked=1" // the handler does not say its length
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", target)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err.Error()
		}
		n, err := io.Copy(io.Discard, resp.Body)
		return fmt.Sprintf("%d %d %v", resp.StatusCode, n, err)
	})
	for i, g := range got {
		if want := fmt.Sprintf("200 %d <nil>", size); g != want {
			t.Errorf("sender %d got %q, want %q (the whole answer)", i+1, g, want)
		}
	}
	peak := vmHWM(t, p.cmd.Process.Pid)
	t.Logf("capture peak RSS (VmHWM) forwarding %d concurrent %d MiB answers: %.1f MiB", senders, size>>20, float64(peak)/(1<<20))
	if peak > 160<<20 && !raceEnabled { // the race detector multiplies memory
		t.Errorf("capture's peak RSS was %.1f MiB forwarding %d x %d MiB: the answers were buffered", float64(peak)/(1<<20), senders, size>>20)
	}
	p.stop(5 * time.Second)

	r := runBin(t, db, nil, "show", "1", "--json")
	var v struct {
		Response struct {
			Status     int    `json:"status"`
			BodyBase64 string `json:"body_base64"`
			BodySize   int64  `json:"body_size"`
			Truncated  bool   `json:"body_truncated"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		t.Fatalf("show --json: %v\n%.500s", err, r.Stdout)
	}
	if stored := len(v.Response.BodyBase64) * 3 / 4; v.Response.Status != 200 || !v.Response.Truncated || v.Response.BodySize != size || stored > 2<<20 {
		t.Errorf("stored response: status %d, %d bytes kept, body_size %d, truncated %v; want a prefix of at most 1MiB, body_size %d, truncated",
			v.Response.Status, stored, v.Response.BodySize, v.Response.Truncated, size)
	}
}

// TestCaptureE2EBodiesAtOnceAreBounded: 48 senders of a 10MiB body (the
// default --max-body) at once. capture holds at most its body budget
// (128MiB) of request bodies: the rest wait for room or are answered 503
// with Retry-After. Every sender answered 200 has its delivery stored with
// its bytes. Before the budget capture's peak RSS grew with the senders:
// 1.5 GB for 64, 5.9 GB for 250.
func TestCaptureE2EBodiesAtOnceAreBounded(t *testing.T) {
	const size, senders = 10 << 20, 48
	db := filepath.Join(t.TempDir(), "h.db")
	p, addr := captureStart(t, db)
	body := []byte(strings.Repeat("b", size))
	got := sendAtOnce(addr, senders, 90*time.Second, func(i int, c net.Conn) string {
		go func() {
			fmt.Fprintf(c, "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
			c.Write(body) // fails when capture refuses the body: its answer is read below
		}()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "refused" // a 503 the connection's reset destroyed
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
			return "503 without Retry-After"
		}
		return strconv.Itoa(resp.StatusCode)
	})
	peak := vmHWM(t, p.cmd.Process.Pid)
	p.stop(10 * time.Second)
	counts := map[string]int{}
	for _, g := range got {
		counts[g]++
	}
	t.Logf("%d senders of %d MiB at once: %v; capture peak RSS (VmHWM) %.1f MiB", senders, size>>20, counts, float64(peak)/(1<<20))
	if counts["200"]+counts["503"]+counts["refused"] != senders || counts["200"] < 10 {
		t.Errorf("answers %v: want 200 (at least 10) or 503 with Retry-After", counts)
	}
	if peak > 600<<20 && !raceEnabled { // the race detector multiplies memory
		t.Errorf("capture's peak RSS was %.1f MiB with %d x %d MiB bodies at once: the bodies were not bounded", float64(peak)/(1<<20), senders, size>>20)
	}
	listed := captureList(t, db, "--limit", "0")
	if len(listed) != counts["200"] {
		t.Errorf("%d deliveries stored, %d answered 200", len(listed), counts["200"])
	}
	for _, d := range listed {
		if d.BodySize != size {
			t.Errorf("delivery %d stored with a body of %d bytes", d.ID, d.BodySize)
		}
	}
}

// sendAtOnce runs send for n senders at once, each on its own connection
// to addr with a deadline, and returns what each one said (a dial error
// when it could not connect).
func sendAtOnce(addr string, n int, deadline time.Duration, send func(i int, c net.Conn) string) []string {
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				got[i] = err.Error()
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(deadline))
			got[i] = send(i, c)
		}()
	}
	wg.Wait()
	return got
}
