// Command hookreplay proves that a webhook handler is idempotent.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/hookreplay/hookreplay/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile()
	ee := cmd.Execute(ctx)
	stop()
	stopProfile()
	if ee == nil {
		return
	}
	if msg := ee.Error(); msg != "" {
		fmt.Fprintln(os.Stderr, "hookreplay: "+msg)
	}
	os.Exit(ee.Code)
}

// startProfile writes a CPU profile of the whole run to the file
// HOOKREPLAY_CPUPROFILE names (for docs/performance.md's profiling of the
// real binary under load); it returns the function that finishes it.
func startProfile() func() {
	path := os.Getenv("HOOKREPLAY_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "hookreplay: HOOKREPLAY_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
