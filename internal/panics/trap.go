package panics

import (
	"os"
	"sync"
)

// A panic on a goroutine of its own cannot be recovered by the goroutine
// that started it: unrecovered, it ends the process with a goroutine dump,
// before any report is written. A Trap carries it to the goroutine that owns
// the work instead: each guarded goroutine defers Guard, and the owner,
// once it has waited for them, calls Rethrow, so the panic reaches the
// owner's boundary (Catch, main's execute) and ends the run as one line
// naming where it happened, with the report of what ran still written.
//
// With HOOKREPLAY_TRACEBACK set, Guard lets the panic through: the process
// ends with the stack of the goroutine that panicked, the one worth reading.
//
// The zero Trap is ready to use; it is safe for concurrent use.
type Trap struct {
	// OnPanic, when set, is called once, at the first panic, on the
	// goroutine that panicked: it stops the rest of the work (cancels its
	// context) so that the owner's wait ends.
	OnPanic func()

	mu  sync.Mutex
	err *Error
}

// Guard, deferred by a goroutine, recovers that goroutine's panic into t;
// the first one is kept. A guarded goroutine must defer the releases its
// owner waits on (WaitGroup.Done, closing a channel) so that a panic
// does not leave the owner waiting forever.
func (t *Trap) Guard() {
	if Traceback() {
		return
	}
	if v := recover(); v != nil {
		t.Hold(recovered(v, 0))
	}
}

// Catch is Guard for a function that returns an error, called on a
// goroutine another package owns (a server's connection): the panic is
// held in t and is *err too, so the call fails where it is made (the
// client is answered an error) while the owner learns of it from t.
func (t *Trap) Catch(err *error) {
	if Traceback() {
		return
	}
	if v := recover(); v != nil {
		e := recovered(v, 0)
		t.Hold(e)
		*err = e
	}
}

// Hold keeps e in t unless a panic is held already: for a panic that a
// library recovered itself and reported (a server's error log).
func (t *Trap) Hold(e *Error) {
	t.mu.Lock()
	first := t.err == nil
	if first {
		t.err = e
	}
	t.mu.Unlock()
	if first && t.OnPanic != nil {
		t.OnPanic()
	}
}

// Recovered is the Error for a value a deferred function recovered (a
// server's connection, which logs its panic and goes on): called by that
// function, it names the function that panicked.
func Recovered(v any) *Error { return recovered(v, 1) }

// recovered is the Error for a recovered value: a rethrown one as it was,
// else the value and the function that panicked; it is called by the
// deferred function, or by Recovered called by it.
func recovered(v any, skip int) *Error {
	if e, ok := v.(*Error); ok {
		return e
	}
	return &Error{Value: v, Where: where(1 + skip)}
}

// Err is the first panic t recovered, or nil.
func (t *Trap) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		return nil
	}
	return t.err
}

// Rethrow raises the first panic t recovered, if any, on the calling
// goroutine, keeping the function it was raised in.
func (t *Trap) Rethrow() {
	t.mu.Lock()
	e := t.err
	t.mu.Unlock()
	if e != nil {
		panic(e)
	}
}

// Traceback reports whether HOOKREPLAY_TRACEBACK asks for panics to keep
// their stacks (docs/reliability.md).
func Traceback() bool { return os.Getenv("HOOKREPLAY_TRACEBACK") != "" }

// TestHook panics at name when the environment variable
// HOOKREPLAY_TEST_PANIC names it: the end-to-end tests provoke a panic on a
// goroutine of the real binary with it (CONTRIBUTING.md lists the names).
// Nothing else sets it.
func TestHook(name string) {
	if v := testPanic(); v != "" && v == name {
		panic("test panic at " + name + " (HOOKREPLAY_TEST_PANIC)")
	}
}

var testPanic = sync.OnceValue(func() string { return os.Getenv("HOOKREPLAY_TEST_PANIC") })
