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
	ee := cmd.Execute(ctx)
	stop()
	if ee == nil {
		return
	}
	if msg := ee.Error(); msg != "" {
		fmt.Fprintln(os.Stderr, "hookreplay: "+msg)
	}
	os.Exit(ee.Code)
}
