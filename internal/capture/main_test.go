package capture

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when any goroutine outlives them: every
// goroutine the capture engine starts has an owner that stops it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
