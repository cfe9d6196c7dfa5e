package e2e

// End-to-end test of Ctrl-C: capture, replay and check each stop promptly on
// SIGINT while busy with a handler that never answers, and exit with their
// documented code (capture 0 after draining, replay and check 130).

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestInterruptE2EEveryCommandStopsOnCtrlC(t *testing.T) {
	captureFastExit(t)
	// A handler that holds every request until the test ends.
	release := make(chan struct{})
	h := startReplayHandler(t, func(w http.ResponseWriter, a replayArrival) {
		select {
		case <-release:
		case <-time.After(60 * time.Second):
		}
		w.WriteHeader(200)
	})
	t.Cleanup(func() { close(release) })
	db := filepath.Join(t.TempDir(), "h.db")
	id := fmt.Sprint(checkStripeDelivery(t, db))

	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"replay", []string{"replay", id, "--to", h.URL, "-n", "50", "--concurrency", "8", "--timeout", "60s"}, 130},
		{"replay burst", []string{"replay", id, "--to", h.URL, "-n", "20", "--order", "burst", "--timeout", "60s"}, 130},
		{"check", []string{"check", id, "--to", h.URL, "--probe-cmd", "echo 1", "--settle", "100ms"}, 130},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startBin(t, db, c.args...)
			time.Sleep(700 * time.Millisecond) // copies in flight, the handler holding them
			start := time.Now()
			p.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-p.done:
			case <-time.After(9 * time.Second):
				p.cmd.Process.Signal(syscall.SIGQUIT)
				<-p.done
				_, stderr := p.Output()
				t.Fatalf("%s did not stop within 9s of Ctrl-C (copies on the wire get 5s); its goroutines:\n%s", c.name, stderr)
			}
			took := time.Since(start)
			_, stderr := p.Output()
			if code := p.cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(stderr, "interrupted") {
				t.Fatalf("%s after Ctrl-C: exit %d after %v, want %d and 'interrupted'\n%s", c.name, code, took, c.code, stderr)
			}
			t.Logf("%s stopped %v after Ctrl-C", c.name, took.Round(time.Millisecond))
		})
	}

	// capture forwarding to the same handler, one delivery waiting on it:
	// Ctrl-C drains for 15s, then answers it 503 (the handler never
	// answered) and exits 0.
	p, addr := captureStart(t, filepath.Join(t.TempDir(), "c.db"), "--forward", h.URL)
	done := make(chan captureAnswer, 1)
	go func() {
		body := `{"id":"evt_int"}`
		a := captureExchangeNoFatal(addr, fmt.Sprintf("POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
		done <- a
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("capture did not stop within 20s of Ctrl-C")
	}
	a := <-done
	t.Logf("capture stopped %v after Ctrl-C; the waiting sender got %d", time.Since(start).Round(time.Millisecond), a.Status)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 || a.Status != 503 {
		_, stderr := p.Output()
		t.Fatalf("capture after Ctrl-C: exit %d, sender got %d; want 0 and 503\n%s", code, a.Status, stderr)
	}
}

// captureExchangeNoFatal sends data on a new connection and reads one answer
// (status 0 when none came), for use off the test goroutine.
func captureExchangeNoFatal(addr, data string) captureAnswer {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return captureAnswer{}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, data); err != nil {
		return captureAnswer{}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return captureAnswer{}
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return captureAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
