package probe

// A probe that answers with a JSON object or array (an HTTP endpoint
// returning {"balance":100,"orders":2}, a command printing JSON) is the
// same reading whatever the order of its keys or its whitespace: many
// servers do not keep key order, and a text comparison would call a
// correct handler's unchanged state a change.
//
// Two such readings are compared as JSON values: objects by their keys
// (order ignored; a key given twice counts once, with its last value, as
// encoding/json reads it), arrays element by element in order, strings,
// booleans and null as themselves, and numbers by their exact decimal
// value: 1, 1.0 and 1e0 are the same number, and two large integers
// (12345678901234567890 and 12345678901234567891, which are the same
// float64) are different ones. A number is never the same as a string
// ("1" is not 1). Anything that is not one whole JSON object or array
// is compared as text, as before.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// parseJSON reads s as one JSON object or array, numbers kept as their
// text; ok is false for anything else (a scalar, invalid JSON, trailing
// text).
func parseJSON(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return v, true
}

// JSONDiff compares two readings as JSON: ok is false unless both are a
// JSON object or array; then paths lists where they differ (".balance",
// ".orders[2].id", "." for the whole value when one is an object and the
// other an array), at most max of them (max <= 0: all), and more counts
// the differences left out.
func JSONDiff(a, b Value, max int) (paths []string, more int, ok bool) {
	if a.IsNum || b.IsNum {
		return nil, 0, false
	}
	av, aok := parseJSON(a.Text)
	if !aok {
		return nil, 0, false
	}
	bv, bok := parseJSON(b.Text)
	if !bok {
		return nil, 0, false
	}
	var all []string
	jsonDiff(av, bv, "", &all)
	if max > 0 && len(all) > max {
		return all[:max], len(all) - max, true
	}
	return all, 0, true
}

// sameJSON reports whether two texts are the same JSON object or array.
func sameJSON(a, b string) bool {
	av, aok := parseJSON(a)
	if !aok {
		return false
	}
	bv, bok := parseJSON(b)
	if !bok {
		return false
	}
	var diffs []string
	jsonDiff(av, bv, "", &diffs)
	return len(diffs) == 0
}

// jsonDiff appends to out the paths below path where a and b differ.
func jsonDiff(a, b any, path string, out *[]string) {
	here := path
	if here == "" {
		here = "."
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, here)
			return
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, inX := x[k]; !inX {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			xv, inX := x[k]
			yv, inY := y[k]
			if !inX || !inY {
				*out = append(*out, path+jsonKey(k))
				continue
			}
			jsonDiff(xv, yv, path+jsonKey(k), out)
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			*out = append(*out, here)
			return
		}
		for i := range max(len(x), len(y)) {
			p := path + "[" + strconv.Itoa(i) + "]"
			if i >= len(x) || i >= len(y) {
				*out = append(*out, p)
				continue
			}
			jsonDiff(x[i], y[i], p, out)
		}
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || !sameNumber(string(x), string(y)) {
			*out = append(*out, here)
		}
	default: // string, bool, nil
		if a != b {
			*out = append(*out, here)
		}
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// jsonKey is k as a step of a path: .name, or ["odd key"].
func jsonKey(k string) string {
	if identifier.MatchString(k) {
		return "." + k
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(k) // a string always encodes
	return "[" + strings.TrimSpace(b.String()) + "]"
}

// sameNumber reports whether two decimal numbers (JSON's syntax: sign,
// digits, fraction, exponent) have the same exact value. It works on the
// digits, so neither a large integer nor a large exponent is rounded or
// expanded; a text it cannot read is compared as text.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	na, aok := normalNumber(a)
	nb, bok := normalNumber(b)
	return aok && bok && na == nb
}

// sameDecimal is sameNumber for two readings whose float64 values are
// equal: only two texts that both read as decimals can tell them apart.
func sameDecimal(a, b string) bool {
	if a == b {
		return true
	}
	na, aok := normalNumber(a)
	nb, bok := normalNumber(b)
	return !aok || !bok || na == nb
}

// normalNumber is the exact value of a decimal number in one spelling:
// its significant digits without leading or trailing zeros, and the
// power of ten they are scaled by ("100" and "1.0e2" are both "1e2"; every
// zero is "0").
func normalNumber(s string) (string, bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	mant, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil || e > 1<<40 || e < -(1<<40) {
			return "", false
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	exp -= len(frac)
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", true
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	sign := ""
	if neg {
		sign = "-"
	}
	return fmt.Sprintf("%s%se%d", sign, trimmed, exp), true
}
