package main

import (
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/cmd"
)

// A panic reaching main is one line and exit 2, naming where it happened;
// with HOOKREPLAY_TRACEBACK set it goes through with its stack.
func TestExecuteCatchesAPanic(t *testing.T) {
	t.Setenv("HOOKREPLAY_TRACEBACK", "")
	var m map[string]int
	ee := execute(func() *cmd.ExitError { m["x"]++; return nil })
	if ee == nil || ee.Code != 2 || strings.Contains(ee.Error(), "\n") ||
		!strings.Contains(ee.Error(), "internal error, panic: assignment to entry in nil map (in github.com/hookreplay/hookreplay.TestExecuteCatchesAPanic.func1)") {
		t.Fatalf("execute = %v", ee)
	}
	if ee := execute(func() *cmd.ExitError { return &cmd.ExitError{Code: 3} }); ee == nil || ee.Code != 3 {
		t.Fatalf("execute = %v, want the command's own exit", ee)
	}
	t.Setenv("HOOKREPLAY_TRACEBACK", "1")
	defer func() {
		if recover() == nil {
			t.Fatal("with HOOKREPLAY_TRACEBACK=1 the panic must go through")
		}
	}()
	execute(func() *cmd.ExitError { panic("bug") })
}
