//go:build !windows

package check

import (
	"os/exec"
	"syscall"
)

// ownGroup makes c the leader of a new process group, so that the handler and
// every child it starts can be signalled together.
func ownGroup(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends SIGTERM (kill false) or SIGKILL (kill true) to c's process group.
func signalGroup(c *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-c.Process.Pid, sig)
}

// killGroup sends SIGTERM (kill false) or SIGKILL (kill true) to process
// group pgid.
func killGroup(pgid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pgid, sig)
}

// groupAlive reports whether process group pgid has a member left.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
