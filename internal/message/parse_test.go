package message

import (
	"errors"
	"testing"
)

// TestStricterThanNetHTTP lists, as requests, every place Parse rejects
// what net/http accepts: each is allowed or required by RFC 9112 and marked
// Stricter, which is what lets FuzzParseAgainstNetHTTP tell it from a bug.
func TestStricterThanNetHTTP(t *testing.T) {
	for name, raw := range map[string]string{
		"obs-fold (§5.2)":                 "POST /h HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n",
		"space before colon (§5.1)":       "POST /h HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello",
		"space inside a name":             "POST /h HTTP/1.1\r\nHost: x\r\nX A: 1\r\n\r\n",
		"TE with CL (§6.1)":               "POST /h HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
		"TE in HTTP/1.0 (§6.1)":           "POST /h HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"bare LF in the trailer section":  "POST /h HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\n\r\n\r\n",
		"obs-fold in the trailer section": "POST /h HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n 2\r\n\r\n",
	} {
		if _, _, err := netHTTPRead([]byte(raw)); err != nil {
			t.Errorf("%s: net/http rejects it too (%v): not a difference", name, err)
		}
		var pe *ParseError
		if _, err := Parse([]byte(raw)); !errors.As(err, &pe) || !pe.Stricter {
			t.Errorf("%s: Parse = %v, want a Stricter ParseError", name, err)
		}
	}
}

// TestParseHeaderBlockEndsAtTheFirstEmptyLine: "\n\r\n" ends the header
// section (the store reads stored requests' headers back with this).
func TestParseHeaderBlockEndsAtTheFirstEmptyLine(t *testing.T) {
	raw := "POST /h HTTP/1.1\r\nHost: x\r\nContent-Length: 20\n\r\nStripe-Signature: t=1"
	hs := ParseHeaderBlock([]byte(raw))
	if len(hs) != 2 || hs[1].Name != "Content-Length" {
		t.Fatalf("headers %q", hs)
	}
}
