//go:build !linux && !freebsd

package check

import "os/exec"

// serveCommand is the command --serve runs cmd with: sh -c in its own
// process group. These systems cannot signal a child when its parent dies,
// so a handler outlives a hookreplay killed with kill -9
// (docs/reliability.md says what to do about it).
func serveCommand(cmd string) *exec.Cmd {
	c := exec.Command("sh", "-c", cmd)
	ownGroup(c)
	return c
}

// serveKeeper is nil here: without a parent-death signal a guard could not
// stop the group when hookreplay dies.
func serveKeeper(int) *exec.Cmd { return nil }
