package verify

import (
	"bytes"
	"encoding/json"
	"errors"
)

// replaceStrings rewrites every JSON string value of body whose decoded
// text is a key of repl to repl's value, keeping every other byte (spacing,
// key order, escapes elsewhere): a provider that escapes "/" as "\/" (Meta)
// keeps its bytes everywhere but in the ids. Object keys are left alone. It
// reports how many strings it replaced.
func replaceStrings(body []byte, repl map[string]string) ([]byte, int, error) {
	if !json.Valid(body) {
		return nil, 0, errors.New("body is not JSON")
	}
	var out bytes.Buffer
	n, last := 0, 0
	for i := 0; i < len(body); {
		if body[i] != '"' {
			i++
			continue
		}
		end := skipString(body, i)
		// A string followed by ':' is an object key.
		if j := skipWS(body, end); j < len(body) && body[j] == ':' {
			i = end
			continue
		}
		var s string
		if json.Unmarshal(body[i:end], &s) == nil {
			if v, ok := repl[s]; ok {
				out.Write(body[last:i])
				out.Write(jsonString(v))
				last, n = end, n+1
			}
		}
		i = end
	}
	out.Write(body[last:])
	return out.Bytes(), n, nil
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) []byte {
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false)
	je.Encode(s)
	return bytes.TrimRight(enc.Bytes(), "\n")
}
