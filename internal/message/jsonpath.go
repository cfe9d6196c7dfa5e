package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// JSONSet sets the value at a dotted path ("data.object.amount_paid",
// numeric segments index arrays) in the JSON document body and returns the
// new body. Only the bytes of that value change: key order, spacing and
// every other byte are kept. A missing last key is appended to its object.
// value is used as JSON when it is valid JSON ("9900", "true", "{...}"),
// otherwise as a string.
func JSONSet(body []byte, path, value string) ([]byte, error) {
	out, _, err := jsonSet(body, path, value, true)
	return out, err
}

// JSONReplace replaces the value at a dotted path as JSONSet does, but only
// when the path exists: found is false (and body returned unchanged) when it
// does not.
func JSONReplace(body []byte, path, value string) (out []byte, found bool, err error) {
	return jsonSet(body, path, value, false)
}

func jsonSet(body []byte, path, value string, add bool) ([]byte, bool, error) {
	if !json.Valid(body) {
		return nil, false, fmt.Errorf("the body is not valid JSON")
	}
	enc := []byte(value)
	if !json.Valid(enc) {
		enc, _ = json.Marshal(value)
	} else {
		enc = bytes.TrimSpace(enc)
	}
	segs := strings.Split(path, ".")
	start := skipWS(body, 0)
	vs, ve, ins, err := locate(body, start, segs)
	if !add && (err != nil || ins >= 0) {
		// In a valid document every failure to locate is a missing path.
		return body, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var out []byte
	if ins >= 0 { // append "key":value before the closing brace at ins
		key, _ := json.Marshal(segs[len(segs)-1])
		member := append(append(key, ':'), enc...)
		prev := bytes.TrimRight(body[:ins], " \t\r\n")
		if prev[len(prev)-1] != '{' {
			member = append([]byte(","), member...)
		}
		out = append(out, body[:ins]...)
		out = append(out, member...)
		out = append(out, body[ins:]...)
		return out, true, nil
	}
	out = append(out, body[:vs]...)
	out = append(out, enc...)
	out = append(out, body[ve:]...)
	return out, true, nil
}

// locate finds the value at segs starting with the value at i. It returns the
// value's span, or (when only the last key is missing from an object) ins,
// the offset of that object's closing brace.
func locate(b []byte, i int, segs []string) (vs, ve, ins int, err error) {
	if len(segs) == 0 {
		end, err := skipValue(b, i)
		return i, end, -1, err
	}
	seg := segs[0]
	switch {
	case i < len(b) && b[i] == '{':
		j := skipWS(b, i+1)
		for j < len(b) && b[j] != '}' {
			ks := j
			ke, err := skipValue(b, ks)
			if err != nil {
				return 0, 0, -1, err
			}
			var key string
			if err := json.Unmarshal(b[ks:ke], &key); err != nil {
				return 0, 0, -1, fmt.Errorf("bad object key at byte %d", ks)
			}
			j = skipWS(b, ke)
			if j >= len(b) || b[j] != ':' {
				return 0, 0, -1, fmt.Errorf("bad JSON at byte %d", j)
			}
			j = skipWS(b, j+1)
			if key == seg {
				return locate(b, j, segs[1:])
			}
			if j, err = skipValue(b, j); err != nil {
				return 0, 0, -1, err
			}
			j = skipWS(b, j)
			if j < len(b) && b[j] == ',' {
				j = skipWS(b, j+1)
			}
		}
		if len(segs) == 1 && j < len(b) {
			return 0, 0, j, nil
		}
		return 0, 0, -1, fmt.Errorf("no key %q", seg)
	case i < len(b) && b[i] == '[':
		idx, err := strconv.Atoi(seg)
		if err != nil || idx < 0 {
			return 0, 0, -1, fmt.Errorf("%q indexes an array; want a number", seg)
		}
		j := skipWS(b, i+1)
		for k := 0; j < len(b) && b[j] != ']'; k++ {
			if k == idx {
				return locate(b, j, segs[1:])
			}
			if j, err = skipValue(b, j); err != nil {
				return 0, 0, -1, err
			}
			j = skipWS(b, j)
			if j < len(b) && b[j] == ',' {
				j = skipWS(b, j+1)
			}
		}
		return 0, 0, -1, fmt.Errorf("index %d out of range", idx)
	}
	return 0, 0, -1, fmt.Errorf("cannot descend into a scalar at %q", seg)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset just past the JSON value starting at i
// (the document is known to be valid).
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("unexpected end of JSON")
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, fmt.Errorf("unterminated string")
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unterminated JSON value")
	default:
		j := i
		for j < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[j])) {
			j++
		}
		return j, nil
	}
}
