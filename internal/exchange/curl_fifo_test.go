//go:build unix

package exchange

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO named with @ is refused without opening it: opening one waits
// for a writer, which would hang the import (and ignore Ctrl-C).
func TestCurlDataFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Read([]byte("curl --data-binary @"+fifo+" http://h/\n"), Curl, ReadOptions{Name: "c.sh", ReadFile: LimitedReadFile("", DefaultMaxBody)})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("err = %v, want 'is not a regular file'", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("import waited on the FIFO") // the goroutine stays blocked in open; the test binary exits
	}
}
