package testkit

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Redis returns a Redis server for the test, as a redis:// URL, and a key
// prefix no other test uses (tests sharing a server keep to their prefix).
// The server is HOOKREPLAY_TEST_REDIS when set; otherwise a private
// redis-server from PATH, on a free port, persisting nothing, stopped when
// the test ends. Without either the test is skipped loudly, except in CI
// (env CI set), where it fails: .ci/run installs redis-server.
func Redis(t testing.TB) (url, prefix string) {
	t.Helper()
	prefix = fmt.Sprintf("t%d:", time.Now().UnixNano())
	if u := os.Getenv("HOOKREPLAY_TEST_REDIS"); u != "" {
		return u, prefix
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but redis-server is not on PATH and HOOKREPLAY_TEST_REDIS is not set: .ci/run must install redis-server")
		}
		t.Skip("!!!!! SKIPPING REDIS TEST: install redis-server or set HOOKREPLAY_TEST_REDIS=redis://... !!!!!")
	}
	var last error
	for range 3 {
		addr, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
		cmd.Dir = t.TempDir()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if last = waitRedis(addr, 5*time.Second); last == nil {
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			return "redis://" + addr + "/0", prefix
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Fatalf("redis-server did not start: %v", last)
	return "", ""
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitRedis waits until the server at addr answers PING.
func waitRedis(addr string, max time.Duration) error {
	deadline := time.Now().Add(max)
	var err error
	for time.Now().Before(deadline) {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte("PING\r\n"))
			line, rerr := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if rerr == nil && strings.HasPrefix(line, "+PONG") {
				return nil
			}
			err = fmt.Errorf("answered %q", line)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}
