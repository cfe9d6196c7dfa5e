package probe

import (
	"math"
	"math/big"
	"strconv"
)

// RelTolerance is the relative difference under which two amounts measured on
// readings with fractions are the same amount: a REAL or float column that
// accumulates 19.99 per event drifts by a few ulps (59.97 − 39.98 is
// 19.989999999999995 in float64), which is not a different effect.
const RelTolerance = 1e-9

// Rat returns the reading's exact decimal value, parsed from its text (so
// "19.99" is exactly 1999/100, not the nearest float64). A SQL probe's empty
// result is 0. ok is false for a textual reading.
func (v Value) Rat() (*big.Rat, bool) {
	switch {
	case v.IsNum:
		if r, ok := new(big.Rat).SetString(v.Text); ok {
			return r, true
		}
		r := new(big.Rat)
		if r.SetFloat64(v.Num) == nil {
			return nil, false
		}
		return r, true
	case v.Empty():
		return new(big.Rat), true
	}
	return nil, false
}

// ExactDelta returns after − before exactly, as decimals, under the same
// rules as Delta.
func ExactDelta(before, after Value) (*big.Rat, bool) {
	if !(before.IsNum || after.IsNum) {
		return nil, false
	}
	b, bok := before.Rat()
	a, aok := after.Rat()
	if !bok || !aok {
		return nil, false
	}
	return new(big.Rat).Sub(a, b), true
}

// Tolerance is how far apart two deltas measured on these readings may be
// and still be the same amount: 0 when every reading is a whole number
// (counts, cents: compared exactly), else RelTolerance of the largest
// magnitude (at least 1).
func Tolerance(readings ...Value) float64 {
	whole := true
	m := 1.0
	for _, v := range readings {
		r, ok := v.Rat()
		if !ok {
			continue
		}
		if !r.IsInt() {
			whole = false
		}
		if f := math.Abs(v.Num); v.IsNum && f > m {
			m = f
		}
	}
	if whole {
		return 0
	}
	return RelTolerance * m
}

// SameAmount reports whether x and y differ by at most tol.
func SameAmount(x, y, tol float64) bool { return x == y || math.Abs(x-y) <= tol }

// FormatRat renders r as a short decimal: an integer as is, else the
// shortest float64 text that reads back as r's nearest float.
func FormatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}
