//go:build linux || freebsd

package check

import (
	"os/exec"
	"syscall"
)

// groupGuard is the shell that leads the --serve process group where the
// kernel can signal a child when its parent dies (Linux, FreeBSD). The
// kernel signals only that one process, so the leader turns the signal
// into a SIGKILL to its whole group: a handler started through npm, a
// wrapper script or a server that forks workers dies with it, however deep.
// The command runs in the background of the leader, which waits for it:
// a trapped signal interrupts that wait at once (POSIX sh).
const groupGuard = `trap 'kill -KILL 0' USR2; sh -c "$1" & wait $!`

// serveCommand is the command --serve runs cmd with: led by groupGuard,
// which receives SIGUSR2 when hookreplay dies (even by kill -9, a CI job's
// timeout), so that the handler never outlives it holding its port.
//
// The kernel sends the parent-death signal when the thread that started the
// process exits, not the process: Start runs it from a goroutine locked to
// its thread for the process's lifetime.
func serveCommand(cmd string) *exec.Cmd {
	c := exec.Command("sh", "-c", groupGuard, "hookreplay-serve", cmd)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGUSR2}
	return c
}

// keeperGuard waits in a process group whose leader exited, until the
// parent-death signal makes it kill the group.
const keeperGuard = `trap 'kill -KILL 0' USR2; while :; do sleep 3600 & wait $!; done`

// serveKeeper is a guard that joins process group pgid, whose leader (the
// --serve command) exited 0 leaving its server running there: the group
// again dies with hookreplay, as it did while the leader lived.
func serveKeeper(pgid int) *exec.Cmd {
	c := exec.Command("sh", "-c", keeperGuard)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid, Pdeathsig: syscall.SIGUSR2}
	return c
}
