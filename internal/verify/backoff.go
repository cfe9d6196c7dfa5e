package verify

import (
	"math"
	"time"
)

// fittedBackoff is the timetable of a provider that publishes how many
// times it retries and over how long, not the intervals: n retries on a
// geometric backoff, the first after first, the last at horizon, each
// rounded to the second.
func fittedBackoff(n int, first, horizon time.Duration) []time.Duration {
	if n <= 0 {
		return nil
	}
	if n == 1 {
		return []time.Duration{horizon}
	}
	factor := math.Pow(float64(horizon)/float64(first), 1/float64(n-1))
	out := make([]time.Duration, n)
	for k := range out {
		out[k] = time.Duration(float64(first) * math.Pow(factor, float64(k))).Round(time.Second)
	}
	out[n-1] = horizon
	return out
}

// cumulative turns intervals, each counted from the attempt before, into
// offsets from the first attempt.
func cumulative(intervals ...time.Duration) []time.Duration {
	out := make([]time.Duration, len(intervals))
	var at time.Duration
	for i, d := range intervals {
		at += d
		out[i] = at
	}
	return out
}
