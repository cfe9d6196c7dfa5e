package probe

import "testing"

func TestDeltaIsExactDecimal(t *testing.T) {
	for _, tc := range []struct {
		b, a string
		want float64
	}{
		{"39.98", "59.97", 19.99},
		{"99.98", "149.97", 49.99},
		{"5000", "10000", 5000},
		{NoRows, "19.99", 19.99},
	} {
		d, ok := Delta(TextValue(tc.b), TextValue(tc.a))
		if !ok || d != tc.want {
			t.Errorf("Delta(%s, %s) = %v %v, want %v", tc.b, tc.a, d, ok, tc.want)
		}
	}
	if _, ok := Delta(TextValue("a"), TextValue("1")); ok {
		t.Errorf("a textual reading has no delta")
	}
}

func TestToleranceWholeNumbersAreExact(t *testing.T) {
	if tol := Tolerance(TextValue("5000"), TextValue("10000")); tol != 0 {
		t.Fatalf("whole numbers: tolerance %v, want 0", tol)
	}
	tol := Tolerance(TextValue("79.96"), TextValue("99.95000000000002"))
	if tol == 0 || !SameAmount(20.000000000000014-0.01, 19.99, tol) {
		t.Fatalf("fractions: tolerance %v too small", tol)
	}
	if SameAmount(19.98, 19.99, tol) {
		t.Fatalf("a cent apart is a different amount (tolerance %v)", tol)
	}
}
