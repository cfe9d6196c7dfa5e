package capture

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestListShowsVerification: with capture --secret each delivery's signature
// check is stored and, as the signatures issue asks, shown by list (not only
// by list --json and show).
func TestListShowsVerification(t *testing.T) {
	const secret = "whsec_listtest"
	ts := startServer(t, Options{Secret: secret})
	for _, s := range []string{secret, "whsec_wrong"} {
		d, err := verify.BuildDelivery("stripe", "invoice.paid", s, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		exchange(t, ts.addr, d.Encode(ts.addr, "/hooks"), 1)
	}
	ts.stop(t)
	ios, _, out, _ := iostreams.Test()
	if err := WriteList(ios, allDeliveries(t, ts.st)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "SIGNATURE") ||
		!strings.Contains(lines[1], " valid ") || !strings.Contains(lines[2], " invalid ") {
		t.Fatalf("list does not show the signature results:\n%s", out)
	}
	if !strings.HasSuffix(lines[1], "200") {
		t.Fatalf("STATUS is no longer the last column:\n%s", out)
	}
}
