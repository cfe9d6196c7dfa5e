package capture

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// ParseSize reads a byte size: "10MiB", "512KB", "1.5MiB", "4096" (bytes).
// KiB/MiB/GiB (and bare K/M/G) are powers of 1024, KB/MB/GB powers of 1000.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	if t == "" {
		return 0, fmt.Errorf("invalid size %q (want e.g. 10MiB, 512KB or a number of bytes)", s)
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n <= 0 || n > (1<<62)/mult {
			return 0, fmt.Errorf("invalid size %q: must be positive", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("invalid size %q (want e.g. 10MiB, 512KB or a number of bytes)", s)
	}
	return int64(f * float64(mult)), nil
}

// FormatSize renders n bytes the way ParseSize reads them back: "10MiB",
// "512KiB", "1500 bytes".
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseAge reads a positive age: Go durations ("90m", "2h30m") plus days and
// weeks ("7d", "1d12h", "2w").
func ParseAge(s string) (time.Duration, error) {
	bad := fmt.Errorf("invalid duration %q (want e.g. 7d, 2h, 30m or 1d12h)", s)
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, bad
	}
	var total time.Duration
	for t != "" {
		i := 0
		for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
			i++
		}
		j := i
		for j < len(t) && (t[j] < '0' || t[j] > '9') && t[j] != '.' {
			j++
		}
		num, unit := t[:i], t[i:j]
		t = t[j:]
		if num == "" || unit == "" {
			return 0, bad
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, bad
		}
		tooLong := fmt.Errorf("invalid duration %q: too long (at most about 290 years)", s)
		var d time.Duration
		switch unit {
		case "d", "w":
			per := 24 * time.Hour
			if unit == "w" {
				per *= 7
			}
			if f*float64(per) >= math.MaxInt64 {
				return 0, tooLong
			}
			d = time.Duration(f * float64(per))
		default:
			var err error
			if d, err = time.ParseDuration(num + unit); err != nil {
				if strings.HasPrefix(err.Error(), "time: invalid duration") && f*float64(unitOf(unit)) >= math.MaxInt64 {
					return 0, tooLong
				}
				return 0, bad
			}
		}
		if total > math.MaxInt64-d {
			return 0, tooLong
		}
		total += d
	}
	if total <= 0 {
		return 0, fmt.Errorf("invalid duration %q: must be positive", s)
	}
	return total, nil
}

// unitOf is the length of one time.ParseDuration unit (0 when unknown).
func unitOf(u string) time.Duration {
	switch u {
	case "ns":
		return time.Nanosecond
	case "us", "µs", "μs":
		return time.Microsecond
	case "ms":
		return time.Millisecond
	case "s":
		return time.Second
	case "m":
		return time.Minute
	case "h":
		return time.Hour
	}
	return 0
}
