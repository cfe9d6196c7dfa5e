package capture

import (
	"context"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// TestSenderTextCannotDriveTheTerminal: event ids and types come from the
// body and header values from the sender — anyone who can reach the capture
// URL. Printed raw, ESC/BEL/CR/LF in them clear the screen, fake lines, set
// the title or write the clipboard (OSC 52) on the developer's terminal. The
// capture line, list and show print them escaped (\x1b, \r, ...); the
// stored bytes are unchanged.
func TestSenderTextCannotDriveTheTerminal(t *testing.T) {
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
	check := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\x07\r\u009b") || strings.Contains(out, "\x9b") || strings.Contains(out, "\nFAKE") {
			t.Errorf("%s passes control characters to the terminal:\n%q", what, out)
		}
		if !strings.Contains(out, `\x1b`) {
			t.Errorf("%s does not show the escape as text:\n%q", what, out)
		}
	}
	check("capture line", ts.out.String())

	ios, _, out, _ := iostreams.Test()
	if err := WriteList(ios, ds); err != nil {
		t.Fatal(err)
	}
	check("list", out.String())
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 1 {
		t.Errorf("list has %d lines for one delivery:\n%s", n+1, out)
	}

	ios, _, out, _ = iostreams.Test()
	d, err := ts.st.GetDelivery(context.Background(), ds[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteDetail(ios, d); err != nil {
		t.Fatal(err)
	}
	check("show", out.String())
}
