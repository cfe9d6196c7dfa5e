package report

import (
	"fmt"
	"strings"
	"time"
)

// Duration is the one way hookreplay prints a duration, rounded to what a
// person reads: 806µs, 3.2ms, 11ms, 1.14s, 2m5s; "0s" for zero or less.
// Every view (check reports and messages, capture lines, show, send, replay,
// runs) uses it.
func Duration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return Round(d).String()
}

// Round rounds d as Duration prints it (3 significant digits, at least
// whole microseconds), for text built with %s from a time.Duration.
func Round(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// StandsFor renders the real-time offset a scheduled retry stands for:
// "+0s", "+1m", "+42h9m", "+2d2h30m".
func StandsFor(d time.Duration) string {
	short := func(d time.Duration) string {
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
	if d >= 48*time.Hour {
		days := d / (24 * time.Hour)
		rest := (d - days*24*time.Hour).Round(time.Minute)
		if rest == 0 {
			return fmt.Sprintf("+%dd", days)
		}
		return fmt.Sprintf("+%dd%s", days, short(rest))
	}
	return "+" + short(d.Round(time.Second))
}

// Size renders n bytes compactly for tables: "312 B", "4.1 KiB", "5.0 MiB".
func Size(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// plural is "1 copy", "3 copies".
func plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, pluralWord(n, one, many))
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
