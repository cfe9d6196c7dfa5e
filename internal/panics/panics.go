// Package panics turns a panic at one of hookreplay's boundaries (a probe's
// client library, a check engine's run) into an error of one line: a user
// sees what failed and where, never a goroutine dump, and the caller still
// writes the report of what ran.
package panics

import (
	"fmt"
	"runtime"
	"strings"
)

// Error is a recovered panic: its value and the function it was raised in.
type Error struct {
	Value any
	Where string // the innermost function outside the runtime, e.g. github.com/redis/go-redis/v9/internal/proto.(*Reader).readStringReply
}

func (e *Error) Error() string {
	v := strings.Join(strings.Fields(fmt.Sprint(e.Value)), " ")
	if e.Where == "" {
		return "panic: " + v
	}
	return "panic: " + v + " (in " + e.Where + ")"
}

// Catch, deferred, turns a panic of the function that defers it into *err.
// It does not hide a bug: the error names the panic and where it happened,
// and a test sees the call fail.
func Catch(err *error) {
	if v := recover(); v != nil {
		if e, ok := v.(*Error); ok { // rethrown by a Trap: where it happened
			*err = e
			return
		}
		*err = &Error{Value: v, Where: where(0)}
	}
}

// where finds the function that panicked: the first frame below the
// deferred Catch that is not the runtime's; skip counts the functions
// between where and the deferred one.
func where(skip int) string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3+skip, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") {
			return f.Function
		}
		if !more {
			return ""
		}
	}
}
