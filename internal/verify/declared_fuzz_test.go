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
