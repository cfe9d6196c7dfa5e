package verify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// TestTwilioJSONBodyMustBeCoveredByBodySHA256: Twilio's signature covers the
// URL (and form parameters); a JSON body is covered only through the
// bodySHA256 query parameter. A signature over a URL without it says nothing
// about the body, so such a delivery must not be reported valid: any body
// would pass. (twilio-node's validateRequestWithBody fails it the same way.)
func TestTwilioJSONBodyMustBeCoveredByBodySHA256(t *testing.T) {
	body, err := os.ReadFile("testdata/twilio_json_body.json")
	if err != nil {
		t.Fatal(err)
	}
	const token = "12345"
	bare := "https://example.com/myapp"
	sum := sha256.Sum256(body)
	withHash := bare + "?bodySHA256=" + hex.EncodeToString(sum[:])
	req := func(url string) *message.Request {
		sig := base64.StdEncoding.EncodeToString(macSHA1([]byte(token), []byte(url)))
		return &message.Request{Method: "POST", Target: "/myapp", Proto: "HTTP/1.1", Body: body,
			Headers: message.Headers{{Name: "Content-Type", Value: "application/json"}, {Name: "X-Twilio-Signature", Value: sig}}}
	}
	if r, err := Verify(req(withHash), "twilio", token, Options{URL: withHash}); err != nil || !r.Valid {
		t.Fatalf("URL with bodySHA256: %+v %v", r, err)
	}
	r, err := Verify(req(bare), "twilio", token, Options{URL: bare})
	if err != nil {
		t.Fatal(err)
	}
	if r.Valid || !strings.Contains(r.Reason, "bodySHA256") {
		t.Fatalf("JSON body not covered by the signature was judged %+v", r)
	}
	// Signing such a body without bodySHA256 in the URL would make the same
	// uncovered signature: refused, naming the parameter to add.
	if _, err := Sign(req(bare), "twilio", token, Options{URL: bare}); err == nil || !strings.Contains(err.Error(), "bodySHA256="+hex.EncodeToString(sum[:])) {
		t.Fatalf("sign without bodySHA256: %v", err)
	}
	// A form post and a bodiless request need no bodySHA256.
	get := &message.Request{Method: "GET", Target: "/myapp?CallSid=CA1", Proto: "HTTP/1.1"}
	signed, err := Sign(get, "twilio", token, Options{URL: "https://example.com/myapp?CallSid=CA1"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Verify(signed, "twilio", token, Options{URL: "https://example.com/myapp?CallSid=CA1"}); err != nil || !r.Valid {
		t.Fatalf("GET: %+v %v", r, err)
	}
}
