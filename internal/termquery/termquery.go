// Package termquery keeps hookreplay from asking the terminal anything while
// it starts. Bubble Tea's init (v1, tea_init.go) asks Lip Gloss whether the
// background is dark; termenv answers by writing an OSC 11 query and a cursor
// position request (CSI 6n) to stdout and waiting up to 5 s (termenv's
// OSCTimeout) for the reply. It did so in every command — list, show,
// --help, capture, not only the TUI — whenever stdout was the controlling
// terminal and the process in its foreground, and a terminal that answers
// neither (a bare pty: script, an editor's shell, a CI runner's pty, a serial
// console) made each command wait 5 s before doing anything. hookreplay never
// needs the answer: its colours are the palette's ANSI numbers, which the
// terminal maps to its own theme, and the TUI sets every style itself
// (internal/tui: styles.go, and help's styles in app.go).
//
// termenv skips the query when CI is set (it then takes stdout for "not a
// terminal"). This package's init sets CI for the libraries' inits and
// Restore, called first thing in main, puts the environment back, so that
// nothing else (a command probe, the --serve handler, the editor) ever sees
// it. That init runs before termenv's and Bubble Tea's because Go (1.21 and
// later) initialises packages in import-path order among those whose
// imports are ready: this package imports only os, which termenv imports
// too, and "github.com/hookreplay/…" sorts before "github.com/muesli/termenv"
// (and Bubble Tea waits on termenv through Lip Gloss). e2e's
// TestNoTerminalQueryE2E holds it: no query reaches a pty that never
// answers, for a plain command and for the TUI.
package termquery

import "os"

// quiet is the variable termenv reads; restore undoes what init did to it.
const quiet = "CI"

var restore func()

func init() {
	if os.Getenv(quiet) != "" {
		return // termenv asks nothing already
	}
	old, had := os.LookupEnv(quiet)
	if os.Setenv(quiet, "1") != nil {
		return
	}
	restore = func() {
		if had {
			os.Setenv(quiet, old)
		} else {
			os.Unsetenv(quiet)
		}
	}
}

// Restore gives the environment back as hookreplay found it. main calls it
// before anything else; later calls do nothing.
func Restore() {
	if restore != nil {
		restore()
		restore = nil
	}
}
