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
