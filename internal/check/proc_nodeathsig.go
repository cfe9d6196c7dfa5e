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
