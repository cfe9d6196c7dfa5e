package testkit

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FakeRedis serves the Redis protocol on 127.0.0.1:0 with answer's reply to
// each command (its words, upper-cased name first); an empty answer closes
// the connection. HELLO is refused, so clients speak RESP2. It returns the
// server's redis:// URL. Tests use it for replies a real server never
// sends (hostile lengths, malformed lines).
func FakeRedis(t testing.TB, answer func(cmd []string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					cmd, err := readRESPCommand(r)
					if err != nil {
						return
					}
					var reply string
					if cmd[0] == "HELLO" {
						reply = "-ERR unknown command 'HELLO'\r\n"
					} else if reply = answer(cmd); reply == "" {
						return
					}
					if _, err := io.WriteString(c, reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "redis://" + ln.Addr().String() + "/0"
}

// readRESPCommand reads one command, an array of bulk strings.
func readRESPCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 || n > 1024 {
		return nil, io.ErrUnexpectedEOF
	}
	out := make([]string, n)
	for i := range out {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || l < 0 || l > 1<<20 {
			return nil, io.ErrUnexpectedEOF
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		out[i] = string(b[:l])
	}
	out[0] = strings.ToUpper(out[0])
	return out, nil
}
