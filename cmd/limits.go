package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/message"
)

// The largest values a user may type. Every number on the command line is
// checked against these before anything is sized from it: a copy count or a
// concurrency becomes slices, goroutines and connections, so a typo such as
// --concurrency 100000000 must be one line and exit 2, not tens of gigabytes.
// docs/reliability.md lists them; keep the two in step.
const (
	// maxCopies bounds -n (replay, check) and --lose-response.
	maxCopies = 100_000
	// maxConcurrency bounds replay --concurrency and check --burst: each is
	// an open connection to the handler.
	maxConcurrency = 1024
	// maxDuration bounds every duration flag but --tolerance (timeouts, settling, delays).
	maxDuration = 24 * time.Hour
	// maxTolerance bounds verify --tolerance: a year, for old captures.
	maxTolerance = 366 * 24 * time.Hour
	// maxSpeedup bounds replay --speedup.
	maxSpeedup = 1e9
	// maxListLimit bounds list/runs --limit (0 means all).
	maxListLimit = 1_000_000
	// maxMaxConns bounds capture --max-conns (each is a file descriptor).
	maxMaxConns = 65536
	// maxMaxBody bounds capture --max-body: a body is held in memory whole.
	maxMaxBody = 1 << 30
	// maxInputBody bounds a body read from --body-file or stdin, like a
	// captured body under the default --max-body.
	maxInputBody = capture.DefaultMaxBody
)

// intFlagIn refuses v outside [lo, hi] for the flag named flag.
func intFlagIn(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return usageErr("%s %d is out of range (%d to %d)", flag, v, lo, hi)
	}
	return nil
}

// durationFlagIn refuses d outside [lo, hi] for the flag named flag.
func durationFlagIn(flag string, d, lo, hi time.Duration) error {
	if d < lo || d > hi {
		return usageErr("%s %v is out of range (%v to %v)", flag, d, lo, hi)
	}
	return nil
}

// readBodyFile reads a body from path, refusing more than maxInputBody
// bytes without reading them (a device such as /dev/zero has no size, so
// the read itself is bounded too).
func readBodyFile(flag, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openErr(flag, path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, usageErr("%s %s: is a directory", flag, path)
	}
	b, err := readCapped(f, fmt.Sprintf("%s %s", flag, path))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// openErr words a file a flag names that could not be opened: "--from
// x.jsonl: no such file", not Go's "open x.jsonl: no such file or
// directory".
func openErr(flag, path string, err error) error {
	why := err.Error()
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file"
		if abs, aerr := filepath.Abs(path); aerr == nil && abs != path {
			why += " (" + abs + ")"
		}
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	case errors.As(err, &pe):
		why = pe.Err.Error()
	}
	return usageErr("%s %s: %s", flag, message.Printable(path), message.Printable(why))
}

// readCapped reads r whole, refusing more than maxInputBody bytes; what names
// the input in the error.
func readCapped(r io.Reader, what string) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > maxInputBody {
			return nil, tooLargeErr(what)
		}
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInputBody+1))
	if err != nil {
		return nil, setupErr("read %s: %v", what, err)
	}
	if len(b) > maxInputBody {
		return nil, tooLargeErr(what)
	}
	return b, nil
}

func tooLargeErr(what string) error {
	return usageErr("%s: larger than %s, the largest body hookreplay sends (capture's default --max-body)", what, capture.FormatSize(maxInputBody))
}

// speedupIn refuses a --speedup that is not a finite number in (0, maxSpeedup].
func speedupIn(v float64) error {
	if math.IsNaN(v) || v <= 0 || v > maxSpeedup {
		return usageErr("--speedup %v is out of range (above 0, at most %g)", v, float64(maxSpeedup))
	}
	return nil
}
