package verify

import (
	"encoding/json"
)

// What a scheme decodes of a JSON body to find its identity
// (docs/reliability.md). json.Unmarshal into map[string]any holds a body's
// whole tree at once, about 14 times the body: a 7.6 MiB WhatsApp envelope
// of 60,000 small entries held 106 MiB while its identity was read, and
// capture reads one for each delivery while up to its body budget of them
// arrive at once. A body over jsonWhole is decoded by parts: a value of at
// most jsonWhole whole, a larger object member by member, of a larger
// array its first jsonItems items, at most jsonDepth such levels deep.
// What a scheme reads of a real delivery (its top-level fields, its
// first items) is there; the tail of a giant batch is not.
const (
	jsonWhole = 1 << 20
	jsonItems = 1000
	jsonDepth = 8
)

// jsonObject decodes body as a JSON object, or returns nil.
func jsonObject(body []byte) map[string]any {
	if len(body) <= jsonWhole {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil
		}
		return m
	}
	var m map[string]json.RawMessage // validates the whole body, as Unmarshal does
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil
	}
	return jsonMembers(m, 1)
}

func jsonMembers(m map[string]json.RawMessage, depth int) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonPart(v, depth)
	}
	return out
}

// jsonPart decodes a value of a large body (already validated).
func jsonPart(raw json.RawMessage, depth int) any {
	if len(raw) <= jsonWhole || raw[0] != '{' && raw[0] != '[' {
		var v any
		json.Unmarshal(raw, &v)
		return v
	}
	if depth >= jsonDepth {
		return nil
	}
	if raw[0] == '{' {
		var m map[string]json.RawMessage
		json.Unmarshal(raw, &m)
		return jsonMembers(m, depth+1)
	}
	var items []json.RawMessage
	json.Unmarshal(raw, &items)
	out := make([]any, 0, min(len(items), jsonItems))
	for _, it := range items[:min(len(items), jsonItems)] {
		out = append(out, jsonPart(it, depth+1))
	}
	return out
}
