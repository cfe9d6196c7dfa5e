package capture

import (
	"strings"
	"testing"
	"time"
)

// TestParseAgeTooLong: an age past time.Duration's range wrapped negative
// and was reported as "must be positive"; it now says it is too long, and
// the largest ages still parse.
func TestParseAgeTooLong(t *testing.T) {
	for _, s := range []string{"200000d", "40000w", "106751d24h", "3000000h"} {
		if _, err := ParseAge(s); err == nil || !strings.Contains(err.Error(), "too long") {
			t.Errorf("ParseAge(%q) = %v, want a too long error", s, err)
		}
	}
	if d, err := ParseAge("106751d"); err != nil || d != 106751*24*time.Hour {
		t.Errorf("ParseAge(106751d) = %v %v", d, err)
	}
	if d, err := ParseAge("1d12h"); err != nil || d != 36*time.Hour {
		t.Errorf("ParseAge(1d12h) = %v %v", d, err)
	}
}
