package testkit

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// LoadAverage is the one-minute load average, 0 where /proc has none.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}

// Overloaded reports whether the machine runs more than twice as many
// runnable tasks as it has CPUs (one-minute load average): a test that
// measures how fast something answers, against itself side by side, is
// then measuring the machine. It returns the load average too.
func Overloaded() (float64, bool) {
	l := LoadAverage()
	return l, l > 2*float64(runtime.NumCPU())
}
