//go:build !unix

package capture

import (
	"errors"
	"os"
	"time"
)

// watch starts a goroutine reading from an idle handler connection: the
// handler closing it (or writing anything unasked) ends the read.
func watch(ic *idleConn) {
	ic.done = make(chan error, 1)
	go func() {
		var one [1]byte
		_, err := ic.c.Read(one[:])
		if err == nil {
			err = errors.New("unexpected bytes from an idle handler connection")
		}
		ic.done <- err
	}()
}

// reusable stops the watcher (an expired deadline ends its read with a
// timeout when the connection is still open) and reports whether the
// connection may carry the next forward.
func reusable(ic *idleConn) bool {
	ic.c.SetReadDeadline(time.Unix(1, 0))
	err := <-ic.done
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	ic.c.SetReadDeadline(time.Time{})
	return true
}
