package panics

import (
	"strings"
	"testing"
)

//go:noinline
func index(s []int, i int) int { return s[i] }

func run(f func()) (err error) {
	defer Catch(&err)
	f()
	return nil
}

// A recovered panic is one line naming its value and the function that
// raised it; a call that does not panic keeps its nil error.
func TestCatch(t *testing.T) {
	err := run(func() { index([]int{1}, 5) })
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "index out of range [5] with length 1") ||
		!strings.Contains(err.Error(), "panics.index") {
		t.Fatalf("err = %v", err)
	}
	err = run(func() { panic("two\nlines") })
	if err == nil || err.Error() != "panic: two lines (in github.com/hookreplay/hookreplay/internal/panics.TestCatch.func2)" {
		t.Fatalf("err = %v", err)
	}
	if err := run(func() {}); err != nil {
		t.Fatalf("err = %v", err)
	}
}

// A Trap keeps the first panic of its goroutines, with where it happened,
// calls OnPanic once, and Rethrow raises it on the owner's goroutine, where
// Catch keeps it as it was.
func TestTrap(t *testing.T) {
	t.Setenv("HOOKREPLAY_TRACEBACK", "")
	stopped := 0
	tr := Trap{OnPanic: func() { stopped++ }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer tr.Guard()
		index([]int{1}, 7)
	}()
	<-done
	done = make(chan struct{})
	go func() {
		defer close(done)
		defer tr.Guard()
		panic("second")
	}()
	<-done
	if stopped != 1 || tr.Err() == nil || !strings.Contains(tr.Err().Error(), "index out of range [7]") {
		t.Fatalf("stopped %d, err %v", stopped, tr.Err())
	}
	err := run(tr.Rethrow)
	if e, ok := err.(*Error); !ok || !strings.HasSuffix(e.Where, "panics.index") {
		t.Fatalf("rethrown: %#v, want the first panic where it happened", err)
	}
	var none Trap
	if err := run(none.Rethrow); err != nil || none.Err() != nil {
		t.Fatalf("a trap without a panic: %v", err)
	}
}
