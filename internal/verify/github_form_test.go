package verify

import (
	"os"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// TestGitHubFormEncodedIdentity: a GitHub webhook configured with content
// type application/x-www-form-urlencoded carries its JSON in the payload
// parameter; the event type still includes the action (issues.opened).
func TestGitHubFormEncodedIdentity(t *testing.T) {
	raw, err := os.ReadFile("testdata/github_form_issues.http")
	if err != nil {
		t.Fatal(err)
	}
	req, err := message.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	id := Detect(req)
	if id.Provider != "github" || id.EventID != "72d3162e-cc78-11e3-81ab-4c9367dc0958" || id.EventType != "issues.opened" {
		t.Fatalf("identity %+v, want github issues.opened 72d3162e-…", id)
	}
	// Signing and verifying covers the form body as sent.
	signed, err := Sign(req, "github", "s3cr3t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Verify(signed, "github", "s3cr3t", Options{}); err != nil || !r.Valid {
		t.Fatalf("verify: %+v %v", r, err)
	}
}
