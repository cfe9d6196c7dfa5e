package replay

import (
	"testing"
	"time"
)

func TestFormatStandsFor(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                              "+0s",
		time.Second:                    "+1s",
		time.Minute:                    "+1m",
		2*time.Minute + 42*time.Second: "+2m42s",
		time.Hour:                      "+1h",
		42*time.Hour + 9*time.Minute:   "+42h9m",
		72 * time.Hour:                 "+3d",
		50*time.Hour + 30*time.Minute:  "+2d2h30m",
	} {
		if got := FormatStandsFor(d); got != want {
			t.Errorf("FormatStandsFor(%v) = %s, want %s", d, got, want)
		}
	}
	if got := copyList([]int{5, 2, 3, 4, 8}); got != "copies 2-5, 8" {
		t.Errorf("copyList: %s", got)
	}
}
