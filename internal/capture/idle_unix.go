//go:build unix

package capture

import (
	"errors"
	"syscall"
)

// watch needs no watcher here: reusable peeks.
func watch(*idleConn) {}

// reusable reports whether an idle handler connection is still open and
// silent: a non-blocking peek finds nothing to read (EAGAIN). End of file
// (the handler closed it) or unasked bytes make it unusable. One system
// call, where a watcher goroutine cost a read, a deadline and two wake-ups
// per forward.
func reusable(ic *idleConn) bool {
	sc, ok := ic.c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var one [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = n < 0 && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK))
		return true // never wait for the connection to become readable
	})
	return err == nil && open
}
