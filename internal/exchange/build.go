package exchange

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// build rebuilds the wire bytes of a request known only by its parts (a
// HAR entry, a curl command) and returns it as a delivery: the request
// line, every header in the given order and case as "Name: value", a blank
// line and the body. Framing follows the headers: a Transfer-Encoding of
// chunked sends the body as one chunk, a Content-Length that disagrees
// with the body is corrected, and a body without either gets a
// Content-Length appended after the other headers.
func build(method, target, proto string, hs message.Headers, body []byte, maxBody int64) (*store.Delivery, error) {
	if int64(len(body)) > maxBody {
		return nil, fmt.Errorf("%s", bodyTooLarge(len(body), maxBody))
	}
	if err := checkRequest(method, target, hs); err != nil {
		return nil, err
	}
	if proto != "HTTP/1.0" {
		proto = "HTTP/1.1" // HTTP/2 and /3 entries are rebuilt as HTTP/1.1
	}
	chunked := false
	for _, te := range hs.Values("Transfer-Encoding") {
		if strings.Contains(strings.ToLower(te), "chunked") {
			chunked = true
		}
	}
	var b bytes.Buffer
	b.Grow(len(body) + 512)
	fmt.Fprintf(&b, "%s %s %s\r\n", method, target, proto)
	hasLength := false
	for _, h := range hs {
		v := h.Value
		if strings.EqualFold(h.Name, "Content-Length") && !chunked {
			if hasLength {
				continue // one Content-Length; duplicates would be refused by every server
			}
			hasLength = true
			v = strconv.Itoa(len(body))
		}
		if v == "" {
			fmt.Fprintf(&b, "%s:\r\n", h.Name)
			continue
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, v)
	}
	if !chunked && !hasLength && len(body) > 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	if chunked {
		if len(body) > 0 {
			fmt.Fprintf(&b, "%x\r\n", len(body))
			b.Write(body)
			b.WriteString("\r\n")
		}
		b.WriteString("0\r\n\r\n")
	} else {
		b.Write(body)
	}
	return fromRaw(b.Bytes(), maxBody)
}

// targetOf splits an absolute URL into its authority and its request target
// (path and query as written, without the fragment). A URL that is already
// a target ("/hooks") has no authority.
func targetOf(rawURL string) (authority, target string, err error) {
	u := rawURL
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	if strings.HasPrefix(u, "/") {
		return "", u, nil
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
		return "", "", fmt.Errorf("URL %q is not http or https", message.Printable(rawURL))
	}
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		authority, target = rest, "/"
	} else {
		authority, target = rest[:i], rest[i:]
		if target[0] == '?' {
			target = "/" + target
		}
	}
	if j := strings.LastIndexByte(authority, '@'); j >= 0 {
		authority = authority[j+1:] // userinfo never goes into Host
	}
	if authority == "" {
		return "", "", fmt.Errorf("URL %q has no host", message.Printable(rawURL))
	}
	return authority, target, nil
}

// topKeys returns the keys of the JSON object that b starts with (empty
// when it is not one), without decoding the values into Go values.
func topKeys(b []byte) map[string]bool {
	keys := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return keys
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, ok := t.(string)
		if !ok {
			return keys
		}
		keys[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}
