// Command hookreplay proves that a webhook handler is idempotent.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookreplay/hookreplay/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.Execute(ctx)
	stop()
	code, msg := cmd.ExitCode(err)
	if msg != "" {
		fmt.Fprintln(os.Stderr, "hookreplay: "+msg)
	}
	os.Exit(code)
}
