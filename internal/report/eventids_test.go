package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A delivery carrying several event ids (a WhatsApp POST batching
// messages) shows every one: the title counts them, the text report lists
// them (the first ten, then how many more), JUnit keeps them all.
func TestReportsShowEveryEventID(t *testing.T) {
	c := loadCheck(t, "pass_all")
	var ids []string
	for i := range 12 {
		ids = append(ids, fmt.Sprintf("wamid.HBgL%02d", i))
	}
	c.Deliveries[0].EventID, c.Deliveries[0].EventIDs = ids[0], ids
	var text bytes.Buffer
	if err := Text(&text, c, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wamid.HBgL00 (+11)", "event ids (12, each fresh in a fresh event): wamid.HBgL00, wamid.HBgL01,", "wamid.HBgL09 and 2 more"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var junit bytes.Buffer
	if err := JUnit(&junit, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), `name="event_ids" value="`+strings.Join(ids, " ")+`"`) {
		t.Errorf("junit lacks the event ids:\n%s", junit.String())
	}
	if got := EventIDLabel(ids[0]+"\x1b[2J", ids[:2], 0); got != `wamid.HBgL00\x1b[2J (+1)` {
		t.Errorf("label %q", got)
	}
	if got := EventIDLabel("wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=", ids[:3], 20); !strings.HasSuffix(got, " (+2)") || len([]rune(got)) > 20 {
		t.Errorf("a cut label keeps its count: %q", got)
	}
}
