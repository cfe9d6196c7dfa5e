package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestRunEditedTwilioJSONCopyVerifies: Twilio covers a JSON body with
// bodySHA256 in the URL. An edited copy re-signed with --secret must carry
// the new body's hash in its URL, or a handler validating the request
// (twilio's libraries) rejects it although hookreplay "re-signed" it.
func TestRunEditedTwilioJSONCopyVerifies(t *testing.T) {
	const token = "twilio-auth-token"
	srv := startRecServer(t, nil)
	d := fixtureDelivery(t, 1, "twilio_json.http")
	if d.Provider != "twilio" {
		t.Fatalf("fixture detected as %q", d.Provider)
	}
	res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second),
		Secret: token, Edits: Edits{JSONSet: []string{"Amount=2"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 1 || res.Attempts[0].Status != 200 {
		t.Fatalf("attempts %+v", res.Attempts)
	}
	hits := srv.arrivals()
	if len(hits) != 1 {
		t.Fatalf("%d arrivals", len(hits))
	}
	h := hits[0]
	if !bytes.Contains(h.Req.Body, []byte(`"Amount":2`)) {
		t.Fatalf("edit not applied: %s", h.Req.Body)
	}
	u := "http://" + srv.URL.Host + h.Req.Target
	r, err := verify.Verify(h.Req, "twilio", token, verify.Options{URL: u})
	if err != nil || !r.Valid {
		t.Fatalf("edited re-signed copy does not verify at %s: %+v %v", u, r, err)
	}
	if !strings.Contains(res.Attempts[0].Edit, "bodySHA256") {
		t.Errorf("the URL change is not recorded with the edit: %q", res.Attempts[0].Edit)
	}
}
