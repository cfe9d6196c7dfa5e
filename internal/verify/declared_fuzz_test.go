package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// A declaration is text a user types: no template, format or path may
// panic the parser, and whatever format parses can take back the header
// value it writes, so a declared scheme verifies what it signs. Seeds live
// in testdata/fuzz/FuzzDeclaredFormat/ and run in every plain `go test`.
func FuzzDeclaredFormat(f *testing.F) {
	for _, seed := range [][3]string{
		{"t={timestamp},v1={signature}", "{timestamp}.{body}", "$.id"},
		{"sha256={signature}", "{body}", "header:X-Event-Id"},
		{"ts={timestamp};h1={signature}", "{timestamp}:{body}", "$.data[0].id"},
		{"{signature}", "{timestamp}\n{url}\n{sha256:body}", `$["odd key"]`},
		{"{{v1}}={signature}", "{method} {url} {header:X-A} {query:q} {sha256hex:body}", "data.object.id"},
		{"{timestamp}{signature}", "{bdy}", "$..x"},
		{"{signature", "}{", "[9"},
	} {
		f.Add(seed[0], seed[1], seed[2], []byte(`{"id":"evt_1","data":[{"id":"a"}]}`))
	}
	now := time.Unix(1726070400, 0)
	f.Fuzz(func(t *testing.T, format, signed, path string, body []byte) {
		parseSigned(signed)
		parsePlace(path)
		if p, err := parsePath(path); err == nil {
			jsonAt(body, p)
		}
		d := Declaration{Name: "fuzz", SignatureHeader: "X-Sig", Format: format, Signed: signed, EventID: path}
		if strings.Contains(format, "{timestamp}") {
			d.Tolerance = time.Minute
		}
		s, err := Declare(d)
		if err != nil {
			return
		}
		req := &message.Request{Method: "POST", Target: "/h?q=1", Headers: message.Headers{{Name: "Host", Value: "example.com"}}, Body: body}
		opt := Options{Now: now, URL: "https://example.com/h?q=1"}
		signed2, err := SignWith(s, req, "secret", opt)
		if err != nil {
			t.Fatalf("sign: %v", err)
		}
		v := signed2.Headers.Get("X-Sig")
		if !strings.ContainsAny(v, "\r\n") { // a header value the wire could carry
			if r, err := VerifyWith(s, signed2, "secret", opt); err != nil || !r.Valid {
				t.Fatalf("format %q: own signature %q does not verify: %+v %v", format, v, r, err)
			}
		}
		s.Identity(signed2)
		c := signed2.Clone()
		_ = s.Reidentify(c, "77")
	})
}

// A declared scheme's Verify, Identity and SignedAt see what a sender
// sends: no header value, timestamp or body may panic them, and a result is
// either valid or says why not.
func FuzzDeclaredVerify(f *testing.F) {
	f.Add("t=1726070400,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd", "1726070400", "/h?data.id=1", []byte(`{"id":"evt_1","data":{"items":[{"id":2}]}}`))
	f.Add("t=,v1=", "-1", "/?data.id=%zz", []byte(`[`))
	schemes := []Declaration{
		{Name: "a", SignatureHeader: "X-Sig", Format: "t={timestamp},v1={signature}", Signed: "{timestamp}.{body}", Tolerance: time.Minute, EventID: "$.id", EventType: "$.data.items[0].id"},
		{Name: "b", SignatureHeader: "X-Sig", TimestampHeader: "X-Ts", TimestampUnit: "ms", Signed: "{timestamp}\n{url}\n{sha256:body}{query:data.id}{header:X-Ts}", Encoding: "base64", EventID: "header:X-Id"},
		{Name: "c", SignatureHeader: "X-Sig", Signed: "{method}{body}", Encoding: "base64url", SecretEncoding: "hex", Compare: "exact", EventID: "$[0]"},
	}
	f.Fuzz(func(t *testing.T, sig, ts, target string, body []byte) {
		req := &message.Request{Method: "POST", Target: target, Body: body,
			Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "X-Sig", Value: sig}, {Name: "X-Ts", Value: ts}}}
		for _, d := range schemes {
			s, err := Declare(d)
			if err != nil {
				t.Fatal(err)
			}
			r, err := VerifyWith(s, req, "00ff", Options{Now: time.Unix(1726070400, 0)})
			if err == nil && (r.Valid && r.Reason != "" || !r.Valid && r.Reason == "") {
				t.Fatalf("%s: inconsistent result %+v", d.Name, r)
			}
			s.Identity(req)
			s.SignedAt(req)
			if fg, ok := s.(Forger); ok {
				fg.Forge(req.Clone())
			}
		}
	})
}
