//go:build race

package testkit

// RaceEnabled reports whether this binary was built with -race.
const RaceEnabled = true
