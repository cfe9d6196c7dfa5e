package redact

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// CredentialHeaders are the headers whose values are credentials in any
// HTTP exchange: export warns when they are present and --redact replaces
// them.
var CredentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// Rules says what to redact in a delivery besides CredentialHeaders: more
// header names (any case) and dotted JSON paths in the body
// ("card.number", "items.0.token"; see message.JSONReplace).
type Rules struct {
	Headers   []string
	JSONPaths []string
}

func (r Rules) header(name string) bool {
	name = strings.TrimSpace(name)
	return slices.ContainsFunc(CredentialHeaders, func(h string) bool { return strings.EqualFold(h, name) }) ||
		slices.ContainsFunc(r.Headers, func(h string) bool { return strings.EqualFold(strings.TrimSpace(h), name) })
}

// Credentials lists the CredentialHeaders present in d's request or recorded
// response, in CredentialHeaders order.
func Credentials(d *store.Delivery) []string {
	var out []string
	for _, h := range CredentialHeaders {
		if d.Headers.Has(h) || d.ResponseHeaders.Has(h) {
			out = append(out, h)
		}
	}
	return out
}

// Delivery replaces, in place, the values of the credential headers and of
// r's headers (in the request and the recorded response) and the JSON values
// at r's paths with Marker. The exact wire bytes are rewritten to say the
// same: each redacted header line keeps its name and line ending with the
// marker as its value; when the body changed, the raw body is the new body
// with a Content-Length that matches it (a chunked body is sent unchunked).
// Everything else keeps its bytes. A body that is not JSON is left as is.
func Delivery(d *store.Delivery, r Rules) {
	body, changed := d.Body, false
	if len(r.JSONPaths) > 0 && json.Valid(body) {
		marker, _ := json.Marshal(Marker)
		for _, p := range r.JSONPaths {
			if out, found, err := message.JSONReplace(body, p, string(marker)); err == nil && found {
				body, changed = out, true
			}
		}
	}
	d.Headers = redactHeaders(d.Headers, r)
	d.ResponseHeaders = redactHeaders(d.ResponseHeaders, r)
	if changed {
		d.Body = body
		d.Headers = d.Headers.Del("Transfer-Encoding").Set("Content-Length", strconv.Itoa(len(body)))
	}
	if len(d.Raw) > 0 {
		var nb []byte
		if changed {
			nb = body
		}
		d.Raw = rewriteRaw(d.Raw, r, nb)
	}
}

func redactHeaders(h message.Headers, r Rules) message.Headers {
	if len(h) == 0 {
		return h
	}
	out := h.Clone()
	for i := range out {
		if r.header(out[i].Name) {
			out[i].Value = Marker
		}
	}
	return out
}

// rewriteRaw redacts the header lines of raw's head (RFC 9112: lines end in
// LF, optionally preceded by CR; the head ends at the first empty line) and,
// when body is not nil, replaces the body: Transfer-Encoding lines go, the
// first Content-Length line gets len(body) and later ones go (one is added
// when there was none), as message.Headers.Set and Del do to the headers.
func rewriteRaw(raw []byte, r Rules, body []byte) []byte {
	first := bytes.IndexByte(raw, '\n')
	if first < 0 {
		return raw
	}
	out := append([]byte(nil), raw[:first+1]...)
	pos := first + 1
	dropping, sawCL := false, false
	for pos < len(raw) {
		nl := bytes.IndexByte(raw[pos:], '\n')
		if nl < 0 { // no end of head: keep what is there
			out = append(out, raw[pos:]...)
			return out
		}
		line := raw[pos : pos+nl+1]
		pos += nl + 1
		content := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		eol := line[len(content):]
		if len(content) == 0 { // end of the head
			if body == nil {
				return append(append(out, line...), raw[pos:]...)
			}
			if !sawCL {
				out = append(out, "Content-Length: "+strconv.Itoa(len(body))...)
				out = append(out, eol...)
			}
			return append(append(out, line...), body...)
		}
		if content[0] == ' ' || content[0] == '\t' { // obs-fold: part of the previous line
			if !dropping {
				out = append(out, line...)
			}
			continue
		}
		dropping = false
		name, _, _ := bytes.Cut(content, []byte(":"))
		n := strings.TrimSpace(string(name))
		switch {
		case r.header(n):
			out = append(out, name...)
			out = append(out, ": "+Marker...)
			out = append(out, eol...)
			dropping = true // a folded continuation is part of the secret
		case body != nil && strings.EqualFold(n, "Transfer-Encoding"):
			dropping = true
		case body != nil && strings.EqualFold(n, "Content-Length"):
			if sawCL {
				dropping = true
				continue
			}
			sawCL = true
			out = append(out, name...)
			out = append(out, ": "+strconv.Itoa(len(body))...)
			out = append(out, eol...)
			dropping = true
		default:
			out = append(out, line...)
		}
	}
	return out
}
