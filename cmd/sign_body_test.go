package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestSignPrintsABodyItChanged: Linear signs the body's webhookTimestamp,
// so sign prints the stamped body after the header and a blank line, and
// header and body verify together; Stripe's body is left alone and not
// printed.
func TestSignPrintsABodyItChanged(t *testing.T) {
	at := time.Unix(1717425312, 0)
	io, in, out, _ := iostreams.Test()
	in.WriteString(`{"action":"create","type":"Issue","data":{"id":"x"},"webhookTimestamp":1}`)
	if err := signRun(&signOptions{IO: io, Provider: "linear", Secret: "lin_wh_s", Timestamp: at}); err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(out.String(), "\n\n")
	if !ok || !strings.HasPrefix(head, "Linear-Signature: ") || !strings.Contains(body, `"webhookTimestamp":1717425312000`) {
		t.Fatalf("output:\n%s", out)
	}
	req := &message.Request{Method: "POST", Target: "/", Body: []byte(strings.TrimSuffix(body, "\n")),
		Headers: message.Headers{{Name: "Linear-Signature", Value: strings.TrimPrefix(head, "Linear-Signature: ")}}}
	if r, err := verify.Verify(req, "linear", "lin_wh_s", verify.Options{Now: at}); err != nil || !r.Valid {
		t.Fatalf("the printed header and body do not verify: %+v %v", r, err)
	}
	io, in, out, _ = iostreams.Test()
	in.WriteString(`{"id":"evt_1","type":"invoice.paid"}`)
	if err := signRun(&signOptions{IO: io, Provider: "stripe", Secret: "whsec_s", Timestamp: at}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("stripe: want one header line, got:\n%s", out)
	}
}
