// Command hookreplay proves that a webhook handler is idempotent.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/hookreplay/hookreplay/cmd"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/panics"
	"github.com/hookreplay/hookreplay/internal/termquery"
)

func main() {
	// The libraries' inits are done: CI goes back to what it was before a
	// command, a probe or a handler can read it (see termquery).
	termquery.Restore()
	ctx, got, stop := notifyContext()
	stopProfile := startProfile()
	ee := execute(func() *cmd.ExitError { return cmd.Execute(ctx) })
	stop()
	stopProfile()
	if ee == nil {
		return
	}
	if sig := got(); sig != nil && ee.Code == cmd.ExitInterrupted {
		// Stopped by a signal: the shell convention, 128 + its number
		// (Ctrl-C 130, SIGTERM 143, SIGHUP 129), so a script or CI runner
		// can tell a closed terminal from a timeout.
		ee.Code = 128 + int(sig.(syscall.Signal))
	}
	if msg := ee.Error(); msg != "" {
		// The one line may hold text from outside (a file name, a
		// handler's output): escaped like everything else shown.
		fmt.Fprintln(os.Stderr, "hookreplay: "+message.PrintableText(msg))
	}
	os.Exit(ee.Code)
}

// execute runs the command. A panic that reaches it (a bug of hookreplay's,
// or of a library called on this goroutine) ends the command as one line and
// exit code 2 rather than a goroutine dump; the engines catch their own
// (internal/panics) so that their reports are still written.
// HOOKREPLAY_TRACEBACK=1 lets the panic through with its stack: the
// end-to-end tests set it, so a bug is never hidden from them.
//
// A command whose engine caught a panic (on its own goroutine, or carried
// from another by a panics.Trap) ends with the same line and exit code.
func execute(run func() *cmd.ExitError) (ee *cmd.ExitError) {
	if panics.Traceback() {
		return internal(run())
	}
	var err error
	defer func() {
		if err != nil {
			ee = &cmd.ExitError{Code: 2, Err: err}
		}
		ee = internal(ee)
	}()
	defer panics.Catch(&err)
	return run()
}

// internal words an error that holds a panic as a bug to report, exit 2,
// whatever exit code the command gave the error it ended as.
func internal(ee *cmd.ExitError) *cmd.ExitError {
	var pe *panics.Error
	if ee == nil || !errors.As(ee, &pe) {
		return ee
	}
	return &cmd.ExitError{Code: 2, Err: fmt.Errorf("internal error, %w: please report it (HOOKREPLAY_TRACEBACK=1 shows the stack)", ee.Err)}
}

// stopSignals are the signals that stop a command the way Ctrl-C does:
// SIGTERM (a CI runner or a service manager) and SIGHUP (a closed terminal,
// a dropped ssh session) too, so that a check stops its --serve handler and
// writes its reports whichever way it is stopped.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// notifyContext returns a context cancelled by the first of stopSignals,
// a function that tells which one came (nil when none did), and the
// function that stops listening. A second signal while the command is
// still stopping ends the process at once.
func notifyContext() (context.Context, func() os.Signal, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, stopSignals...)
	var mu sync.Mutex
	var first os.Signal
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				mu.Lock()
				again := first != nil
				if !again {
					first = sig
				}
				mu.Unlock()
				if again {
					os.Exit(128 + int(sig.(syscall.Signal)))
				}
				cancel(cmd.Interrupt{Signal: sig})
			case <-quit:
				return
			}
		}
	}()
	got := func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	stop := func() {
		signal.Stop(ch)
		close(quit)
		cancel(nil)
	}
	return ctx, got, stop
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
