package probe

import (
	"reflect"
	"testing"
)

func TestEqualJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`{"balance":100,"orders":2}`, `{"orders":2,"balance":100}`, true},
		{`{"balance":100,"orders":2}`, "{\n  \"balance\": 100,\n  \"orders\": 2\n}\n", true},
		{`[{"id":1,"tags":["a","b"]}]`, `[ { "tags" : ["a","b"], "id" : 1 } ]`, true},
		{`{"a":{"x":1,"y":[1,2]}}`, `{"a":{"y":[1,2],"x":1}}`, true},
		{`{"n":1}`, `{"n":1.0}`, true},
		{`{"n":100}`, `{"n":1e2}`, true},
		{`{"n":0}`, `{"n":-0.0}`, true},
		{`{"n":0.5}`, `{"n":5E-1}`, true},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567891}`, false},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567890.000}`, true},
		{`{"n":1}`, `{"n":"1"}`, false},
		{`{"n":1}`, `{"n":2}`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":true}`, `{"a":false}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`{"a":1}`, `[1]`, false},
		{`{"a":1,"a":2}`, `{"a":2}`, true},
		{`{"n":1e999999999999}`, `{"n":10e999999999998}`, true}, // exact, without expanding the power
		{`{"n":1e9999999999999}`, `{"n":1e9999999999999}`, true},
		{`{"n":1e9999999999999}`, `{"n":10e9999999999998}`, false}, // an exponent past 2^40 is compared as text
		// Not one JSON object or array: text, as before.
		{`{"a":1} trailing`, `{"a":1}  trailing`, false},
		{`{"a":1}{"b":2}`, `{"a":1} {"b":2}`, false},
		{`"x"`, `"x"`, true},
		{`true`, ` true`, true},
		{`{"a":1`, `{"a": 1`, false},
		{"a=1, b=2", "b=2, a=1", false},
	} {
		a, b := TextValue(tc.a), TextValue(tc.b)
		if got := a.Equal(b); got != tc.want {
			t.Errorf("%s Equal %s = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := b.Equal(a); got != tc.want {
			t.Errorf("%s Equal %s = %v, want %v (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// Scalar numbers are exact decimals too: a float64 cannot tell these
// two 64-bit ids apart.
func TestEqualLargeIntegers(t *testing.T) {
	a, b := TextValue("1844674407370955161"), TextValue("1844674407370955162")
	if a.Num != b.Num {
		t.Fatalf("the test needs two numbers float64 rounds alike")
	}
	if a.Equal(b) {
		t.Errorf("%s Equal %s: want different", a, b)
	}
	for _, pair := range [][2]string{{"5000", "5000.0"}, {"5000", "5e3"}, {"0.10", "0.1"}, {"-0", "0"}} {
		if !TextValue(pair[0]).Equal(TextValue(pair[1])) {
			t.Errorf("%s Equal %s: want the same number", pair[0], pair[1])
		}
	}
	if !NumValue(3).Equal(TextValue("3.00")) {
		t.Error("NumValue(3) Equal 3.00: want the same number")
	}
}

func TestJSONDiff(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		max   int
		paths []string
		more  int
		ok    bool
	}{
		{`{"balance":100,"orders":2}`, `{"orders":3,"balance":100}`, 0, []string{".orders"}, 0, true},
		{`{"a":{"b":[1,{"c":2}]}}`, `{"a":{"b":[1,{"c":3}]}}`, 0, []string{".a.b[1].c"}, 0, true},
		{`{"a":1}`, `{"b":1}`, 0, []string{".a", ".b"}, 0, true},
		{`{"odd key":1}`, `{"odd key":2}`, 0, []string{`["odd key"]`}, 0, true},
		{`[1,2]`, `[1,2,3]`, 0, []string{"[2]"}, 0, true},
		{`{"a":1}`, `[1]`, 0, []string{"."}, 0, true},
		{`{"a":1,"b":1,"c":1}`, `{"a":2,"b":2,"c":2}`, 2, []string{".a", ".b"}, 1, true},
		{`{"a":1}`, `{"a":1.0}`, 0, nil, 0, true},
		{`{"a":1}`, `5`, 0, nil, 0, false},
		{`plain`, `text`, 0, nil, 0, false},
	} {
		paths, more, ok := JSONDiff(TextValue(tc.a), TextValue(tc.b), tc.max)
		if !reflect.DeepEqual(paths, tc.paths) || more != tc.more || ok != tc.ok {
			t.Errorf("JSONDiff(%s, %s, %d) = %q, %d, %v; want %q, %d, %v", tc.a, tc.b, tc.max, paths, more, ok, tc.paths, tc.more, tc.ok)
		}
	}
}
