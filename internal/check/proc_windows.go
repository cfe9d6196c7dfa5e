//go:build windows

package check

import "os/exec"

// ownGroup is a no-op on Windows: there are no POSIX process groups, and the
// handler is killed on its own.
func ownGroup(*exec.Cmd) {}

// signalGroup kills c (Windows has no SIGTERM: both stop it at once).
func signalGroup(c *exec.Cmd, _ bool) { _ = c.Process.Kill() }

// killGroup is a no-op on Windows: there are no process groups.
func killGroup(int, bool) {}

// groupAlive is false on Windows: there are no process groups.
func groupAlive(int) bool { return false }
