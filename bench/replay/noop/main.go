// Command noop is the no-op webhook handler bench/replay.sh measures replay
// throughput against: it reads the body and answers 200 {"ok":true}.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: noop ADDR")
		os.Exit(2)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})
	if err := http.ListenAndServe(os.Args[1], h); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
