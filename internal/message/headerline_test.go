package message

import (
	"strings"
	"testing"
)

// TestParseHeaderLineRejectsLineBreaksInValue: --set-header $'X-A: b\r\nX-Evil: 1'
// (or the same from a script passing untrusted text) injected a second header
// line into every replayed request while the edit was recorded as
// "set-header X-A". Control characters other than tab are refused.
func TestParseHeaderLineRejectsLineBreaksInValue(t *testing.T) {
	for _, s := range []string{"X-A: b\r\nX-Evil: 1", "X-A: b\nX-Evil: 1", "X-A: b\rc", "X-A: a\x00b", "X-A: \x1b[2J"} {
		if h, err := ParseHeaderLine(s); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("ParseHeaderLine(%q) = %+v, %v; want a control character error", s, h, err)
		}
	}
	if h, err := ParseHeaderLine("X-A: tab\tinside  "); err != nil || h.Value != "tab\tinside" {
		t.Errorf("tab in value: %+v %v", h, err)
	}
}
