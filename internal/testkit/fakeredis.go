package testkit

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
)

// FakeRedis serves the Redis protocol on 127.0.0.1:0 with answer's reply to
// each command (its words, upper-cased name first); an empty answer closes
// the connection. HELLO is refused, so clients speak RESP2. It returns the
// server's redis:// URL. Tests use it for replies a real server never
// sends (hostile lengths, malformed lines).
func FakeRedis(t testing.TB, answer func(cmd []string) string) string {
	t.Helper()
	addr := fakeServer(t, func(c net.Conn) {
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
	})
	return "redis://" + addr + "/0"
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
