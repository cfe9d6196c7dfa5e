package capture

import (
	"encoding/json"
	"testing"
)

// TestSlackURLVerificationAnswered: Slack will not enable an Events API
// request URL until it echoes the url_verification challenge. Capture
// pointed at directly (no --forward) answered {"id":N}, so a Slack app could
// never be set up against it; the answer now carries the challenge (and the
// id), and the delivery is stored as usual.
func TestSlackURLVerificationAnswered(t *testing.T) {
	ts := startServer(t, Options{})
	ans, _, _ := exchange(t, ts.addr, fixture(t, "slack_url_verification.http"), 1)
	var v struct {
		Challenge string `json:"challenge"`
		ID        int64  `json:"id"`
	}
	if err := json.Unmarshal(ans[0].body, &v); err != nil || ans[0].status != 200 ||
		v.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" || v.ID == 0 {
		t.Fatalf("answer %d %s, want 200 with the challenge", ans[0].status, ans[0].body)
	}
	ds := allDeliveries(t, ts.st)
	if len(ds) != 1 || ds[0].ID != v.ID || ds[0].Provider != "slack" || ds[0].EventType != "url_verification" {
		t.Fatalf("stored %+v", ds)
	}
	// show says what capture answered: report.TestShowSaysWhatCaptureAnswered.
	// Any other delivery still gets {"id":N}.
	ans, _, _ = exchange(t, ts.addr, fixture(t, "odd_case_order.http"), 1)
	ackID(t, ans[0])
	if string(ans[0].body) != `{"id":2}` {
		t.Fatalf("plain answer %s", ans[0].body)
	}
}
