package verify

import (
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// FuzzEveryScheme feeds every built-in scheme what a sender controls: the
// value of each header it reads, the request target (Mercado Pago reads
// data.id and type from it), the content type and the body. None may
// panic; a result is valid or says why, in at most a bounded line; a
// request a scheme signs verifies. Seeds: testdata/fuzz/FuzzEveryScheme.
func FuzzEveryScheme(f *testing.F) {
	f.Add("ts=1726070400,v1=00", "1726070400", "/hook?data.id=123&type=payment", "application/json",
		[]byte(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messages":[{"id":"wamid.1"}]}}]}]}`))
	f.Add("ts=1726070400, v1=abc", "req-1", "/hook?data.id=", "application/json", []byte(`{"data":{"id":"123"},"type":"payment","action":"payment.created"}`))
	f.Add("sha256=00", "", "/", "application/x-www-form-urlencoded", []byte(`payload=%7B%22id%22%3A1%7D`))
	f.Add("v1,AAAA v1,BBBB", "msg_1", "/x?y", "application/json", []byte(`{"id":"evt_1","type":"a","created_at":"2024-09-11T16:00:00Z","data":{}}`))
	f.Add(strings.Repeat("a=b,", 50), "-1", "/%zz", "text/plain", []byte(strings.Repeat("[", 200)))
	f.Fuzz(func(t *testing.T, sig, other, target, ct string, body []byte) {
		for _, s := range Schemes() {
			hs := message.Headers{{Name: "Content-Type", Value: ct}, {Name: "Host", Value: "example.com"}}
			for i, h := range s.SignatureHeaders() {
				v := sig
				if i > 0 {
					v = other
				}
				hs = append(hs, message.Header{Name: h, Value: v})
			}
			req := &message.Request{Method: "POST", Target: target, Proto: "HTTP/1.1", Headers: hs, Body: body}
			s.Identity(req)
			s.SignedAt(req)
			s.BodyEdited(req)
			Handshake(s, req)
			LibraryRefusal(s, req)
			opt := Options{Now: fuzzNow, URL: "https://example.com" + target}
			r, err := VerifyWith(s, req, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", opt)
			if err == nil && (r.Valid && r.Reason != "" || !r.Valid && r.Reason == "") {
				t.Fatalf("%s: inconsistent result %+v", s.Name(), r)
			}
			if len(r.Reason) > 4096 || err != nil && len(err.Error()) > 4096 {
				t.Fatalf("%s: a reason of %d bytes (err %v)", s.Name(), len(r.Reason), err != nil)
			}
			if err == nil && !r.Valid {
				WhyMismatch(s, req, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "--secret", opt)
			}
		}
	})
}

// A reason quotes what the sender wrote: FuzzEveryScheme found Stripe's
// quoting a 3,000-byte malformed header whole, 12 KB stored with the
// delivery and shown on one line. Reasons are clipped to 1 KiB, saying how
// long they were.
func TestReasonsAreClipped(t *testing.T) {
	req := &message.Request{Method: "POST", Headers: message.Headers{{Name: "Stripe-Signature", Value: "\t\t" + strings.Repeat("\xb8", 3000)}}, Body: []byte(`{}`)}
	r, err := Verify(req, "stripe", "whsec_x", Options{Now: fuzzNow})
	if err != nil || r.Valid || len(r.Reason) > maxReason+40 || !strings.HasPrefix(r.Reason, "malformed Stripe-Signature header: ") ||
		!strings.HasSuffix(r.Reason, "… (12058 bytes in all)") {
		t.Fatalf("reason of %d bytes: %.80q…%q (%v)", len(r.Reason), r.Reason, r.Reason[max(0, len(r.Reason)-30):], err)
	}
}
