package capture

import (
	"strings"
	"testing"
)

// TestSenderTextStoredAsSent: event ids and types come from the body and
// header values from the sender, control characters included. Capture stores
// them unchanged; the views escape them when printing
// (report.TestSenderTextCannotDriveTheTerminal).
func TestSenderTextStoredAsSent(t *testing.T) {
	ts := startServer(t, Options{})
	raw := fixture(t, "terminal_escapes.http")
	exchange(t, ts.addr, raw, 1)
	ts.stop(t)
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries stored: %s", len(ds), ts.errOut)
	}
	if len(ds) != 1 || string(ds[0].Raw) != string(raw) || !strings.Contains(ds[0].EventType, "\x1b[2J") {
		t.Fatalf("stored %d deliveries, event type %q", len(ds), ds[0].EventType)
	}
}
