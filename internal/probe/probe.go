// Package probe reads a handler's side effects: a SQL query, a shell command,
// an HTTP GET, a Redis read, the number of calls made to a stand-in
// downstream API (the sink) or of emails sent to a stand-in mail server (the
// SMTP sink). The check command reads every probe before and after each phase and
// compares the values; Settle waits for asynchronous handlers to finish.
package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Probe is one observable side effect of a handler.
type Probe interface {
	// Name identifies the probe in reports and errors, e.g. `sql: SELECT balance FROM wallets`.
	Name() string
	// Read returns the probe's current value. An error is a setup problem
	// (bad query, command failed, connection refused), never a judgement.
	Read(ctx context.Context) (Value, error)
}

// NoRows is the text of a SQL probe whose query returned no rows.
const NoRows = "(no rows)"

// Value is one reading of a probe: its text and, when the text is a number,
// the number. Values are compared with Equal and subtracted with Delta.
type Value struct {
	Text  string
	Num   float64
	IsNum bool
}

// TextValue builds a Value from a probe's textual output: trimmed, and numeric
// when the whole text parses as a finite number.
func TextValue(s string) Value {
	s = strings.TrimSpace(s)
	if f, ok := parseNum(s); ok {
		return Value{Text: s, Num: f, IsNum: true}
	}
	return Value{Text: s}
}

// NumValue builds a numeric Value.
func NumValue(f float64) Value {
	return Value{Text: strconv.FormatFloat(f, 'f', -1, 64), Num: f, IsNum: true}
}

func parseNum(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	// ParseFloat also accepts "inf", "nan" and hex floats; a probe's number is
	// a plain decimal.
	if strings.ContainsAny(s, "xXpP_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// String is the value as shown in reports.
func (v Value) String() string {
	if v.Text == "" && !v.IsNum {
		return `""`
	}
	return v.Text
}

// Equal reports whether v and o are the same reading: the same number when
// both are numeric (so "5000" equals "5000.0"; compared as exact decimals,
// so two large integers a float64 cannot tell apart differ), the same JSON
// value when both are a JSON object or array (key order and whitespace
// aside; see json.go), else the same text.
func (v Value) Equal(o Value) bool {
	if v.IsNum && o.IsNum {
		return v.Num == o.Num && sameDecimal(v.Text, o.Text)
	}
	if v.IsNum != o.IsNum {
		return false
	}
	return v.Text == o.Text || sameJSON(v.Text, o.Text)
}

// SameValues reports whether two readings of the same probes are equal,
// probe by probe (Equal).
func SameValues(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// Empty reports whether v is a SQL probe's empty result or a Redis GET of
// a missing key.
func (v Value) Empty() bool { return !v.IsNum && (v.Text == NoRows || v.Text == NoKey) }

// Delta returns after − before when both readings are numbers. A query that
// returned no rows counts as 0 against a number (the row a handler creates on
// its first credit does not exist before it). ok is false otherwise: the
// change of a textual probe can only be judged as changed or unchanged.
//
// The difference is computed exactly on the readings' decimal text and then
// rounded once, so 59.97 − 39.98 is 19.99 (float64 subtraction gives
// 19.989999999999995).
func Delta(before, after Value) (d float64, ok bool) {
	b, bok := asNum(before, after)
	a, aok := asNum(after, before)
	if !bok || !aok {
		return 0, false
	}
	if r, ok := ExactDelta(before, after); ok {
		f, _ := r.Float64()
		return f, true
	}
	return a - b, true
}

// Delta is after − v; see the package function Delta.
func (v Value) Delta(after Value) (float64, bool) { return Delta(v, after) }

func asNum(v, other Value) (float64, bool) {
	switch {
	case v.IsNum:
		return v.Num, true
	case v.Empty() && other.IsNum:
		return 0, true
	}
	return 0, false
}

// Error is a probe that could not be read. It names the probe.
type Error struct {
	Probe string
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("probe %s: %v", e.Probe, e.Err) }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func probeErr(name string, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return &Error{Probe: name, Err: err}
}

// firstLine is the first non-empty line of s, shortened for one-line errors.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return ""
}

// Close releases what the probes hold open (database pools, sinks are closed
// by their owner). Probes without resources are skipped.
func Close(probes []Probe) error {
	var errs []error
	for _, p := range probes {
		if c, ok := p.(interface{ Close() error }); ok {
			if isSetOwned(p) {
				continue
			}
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
