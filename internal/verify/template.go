package verify

// The small languages of a declared scheme: the template of what is signed
// ("{timestamp}.{body}"), the format of the signature header
// ("t={timestamp},v1={signature}"), a place in the request ("header:NAME"
// or a JSON path such as $.data.id) and the shape of a fresh event id
// ("evt_{random:24}"). Each is parsed once, when the declaration is made,
// so a mistake is refused when the file loads and never met mid-check.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
)

// piece is a literal (ph "") or a placeholder of a template.
type piece struct {
	lit string
	ph  string // "timestamp", "body", "url", "method", "header", "sha256", "signature", ...
	arg string // the header name of {header:NAME}; the count of {random:N}
}

// Placeholders of the signed template, as the docs list them.
var signedPlaceholders = []string{"{timestamp}", "{body}", "{url}", "{method}", "{header:NAME}", "{query:NAME}", "{sha256:body}", "{sha256hex:body}"}

// maxTemplate bounds a template's length: a declaration is a line or two.
const maxTemplate = 1024

// parseTemplate splits s into literals and placeholders; "{{" and "}}"
// are literal braces. allowed says which placeholders may appear and
// checks their argument.
func parseTemplate(s string, known []string, allowed func(ph, arg string) error) ([]piece, error) {
	if len(s) > maxTemplate {
		return nil, fmt.Errorf("longer than %d characters", maxTemplate)
	}
	var out []piece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, piece{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '}':
			return nil, fmt.Errorf("a lone } at character %d (write }} for a literal brace)", i+1)
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("{ at character %d is never closed (write {{ for a literal brace)", i+1)
			}
			body := s[i+1 : i+end]
			ph, arg, _ := strings.Cut(body, ":")
			if err := allowed(ph, arg); err != nil {
				return nil, fmt.Errorf("placeholder {%s}: %v (known: %s)", message.Printable(body), err, strings.Join(known, ", "))
			}
			flush()
			out = append(out, piece{ph: ph, arg: arg})
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out, nil
}

var errUnknownPlaceholder = errors.New("unknown placeholder")

// parseSigned parses the template of the bytes a declared scheme signs.
func parseSigned(s string) ([]piece, error) {
	if s == "" {
		return nil, errors.New("empty: give what is signed, e.g. {body} or {timestamp}.{body}")
	}
	return parseTemplate(s, signedPlaceholders, func(ph, arg string) error {
		switch ph {
		case "timestamp", "body", "url", "method":
			if arg != "" {
				return fmt.Errorf("{%s} takes no argument", ph)
			}
		case "header":
			if !validHeaderName(arg) {
				return errors.New("give the header's name, e.g. {header:X-Request-Id}")
			}
		case "query":
			if arg == "" {
				return errors.New("give the query parameter's name, e.g. {query:data.id}")
			}
		case "sha256", "sha256hex":
			if arg != "body" {
				return fmt.Errorf("only {%s:body} is known", ph)
			}
		default:
			return errUnknownPlaceholder
		}
		return nil
	})
}

// parseFormat parses the format of the signature header: exactly one
// {signature}, at most one {timestamp}, and literal text between them so
// that a header value can be split back into the two.
func parseFormat(s string) ([]piece, error) {
	ps, err := parseTemplate(s, []string{"{signature}", "{timestamp}"}, func(ph, arg string) error {
		if (ph == "signature" || ph == "timestamp") && arg == "" {
			return nil
		}
		return errUnknownPlaceholder
	})
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for i, p := range ps {
		if p.ph == "" {
			continue
		}
		count[p.ph]++
		if i > 0 && ps[i-1].ph != "" {
			return nil, fmt.Errorf("{%s} follows {%s} with nothing between them, so a header value cannot be split back into the two: put the text the provider writes between them", p.ph, ps[i-1].ph)
		}
	}
	switch {
	case count["signature"] != 1:
		return nil, errors.New("give {signature} exactly once, e.g. sha256={signature} or t={timestamp},v1={signature}")
	case count["timestamp"] > 1:
		return nil, errors.New("give {timestamp} at most once")
	}
	return ps, nil
}

// hasPlaceholder reports whether ps has placeholder ph.
func hasPlaceholder(ps []piece, ph string) bool {
	for _, p := range ps {
		if p.ph == ph {
			return true
		}
	}
	return false
}

// splitFormat takes a header value apart by its format: each placeholder's
// value is the text up to the next literal (the first occurrence of it),
// the last one the rest. ok is false when v is not in the format.
func splitFormat(ps []piece, v string) (map[string]string, bool) {
	out := map[string]string{}
	for i, p := range ps {
		if p.ph == "" {
			if !strings.HasPrefix(v, p.lit) {
				return nil, false
			}
			v = v[len(p.lit):]
			continue
		}
		if i+1 == len(ps) {
			out[p.ph], v = v, ""
			continue
		}
		j := strings.Index(v, ps[i+1].lit)
		if j < 0 {
			return nil, false
		}
		out[p.ph], v = v[:j], v[j:]
	}
	return out, v == ""
}

// fillFormat writes a header value in its format.
func fillFormat(ps []piece, values map[string]string) string {
	var b strings.Builder
	for _, p := range ps {
		if p.ph == "" {
			b.WriteString(p.lit)
		} else {
			b.WriteString(values[p.ph])
		}
	}
	return b.String()
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// place is where a value lives in a request: a header, or a JSON path in
// the body (keys and array indexes from the top).
type place struct {
	header string
	path   []pathStep
	text   string // as declared, for messages
}

type pathStep struct {
	key   string
	index int // -1: a key
}

// parsePlace reads "header:NAME" or a JSON path: $.data.id, data.id,
// entry[0].id, $["odd key"].
func parsePlace(s string) (place, error) {
	if name, ok := strings.CutPrefix(s, "header:"); ok {
		if !validHeaderName(name) {
			return place{}, fmt.Errorf("%q is not a header name", name)
		}
		return place{header: name, text: s}, nil
	}
	steps, err := parsePath(s)
	if err != nil {
		return place{}, err
	}
	return place{path: steps, text: s}, nil
}

func parsePath(s string) ([]pathStep, error) {
	const want = "want header:NAME or a JSON path such as $.id or $.data.object.id"
	p := strings.TrimPrefix(s, "$")
	if p == "" {
		return nil, errors.New("empty: " + want)
	}
	if p == s && !strings.HasPrefix(p, "[") {
		p = "." + p // data.id is $.data.id
	}
	var steps []pathStep
	for p != "" {
		switch {
		case p[0] == '.':
			p = p[1:]
			n := strings.IndexAny(p, ".[")
			if n < 0 {
				n = len(p)
			}
			if n == 0 {
				return nil, fmt.Errorf("%q has an empty key: %s", s, want)
			}
			steps = append(steps, pathStep{key: p[:n], index: -1})
			p = p[n:]
		case p[0] == '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, fmt.Errorf("%q has a [ that is never closed", s)
			}
			in := p[1:end]
			if k, err := strconv.Unquote(in); err == nil && strings.HasPrefix(in, `"`) {
				steps = append(steps, pathStep{key: k, index: -1})
			} else if n, err := strconv.Atoi(in); err == nil && n >= 0 && n < 1<<20 {
				steps = append(steps, pathStep{index: n})
			} else {
				return nil, fmt.Errorf("%q: [%s] is neither an array index nor a quoted key", s, in)
			}
			p = p[end+1:]
		default:
			return nil, fmt.Errorf("%q: %s", s, want)
		}
		if len(steps) > 32 {
			return nil, fmt.Errorf("%q is deeper than 32 steps", s)
		}
	}
	return steps, nil
}

// jsonAt is the value at path in body as text (a string's contents, a
// number's digits), "" when there is none.
func jsonAt(body []byte, path []pathStep) string {
	s, e, err := spanAt(body, path)
	if err != nil {
		return ""
	}
	raw := body[s:e]
	if raw[0] == '"' {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return ""
		}
		return v
	}
	if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		return string(raw)
	}
	return ""
}

// spanAt returns the byte span [start, end) of the value at path in the
// JSON document body (for a repeated key, the last, as decoders keep).
func spanAt(body []byte, path []pathStep) (int, int, error) {
	if !json.Valid(body) {
		return 0, 0, errors.New("body is not JSON")
	}
	s := skipWS(body, 0)
	e := skipValue(body, s)
	for _, st := range path {
		var err error
		if st.index < 0 {
			s, e, err = memberSpan(body, s, st.key)
		} else {
			s, e, err = elementSpan(body, s, st.index)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return s, e, nil
}

// memberSpan is the span of key's value in the object starting at body[i].
func memberSpan(body []byte, i int, key string) (int, int, error) {
	if body[i] != '{' {
		return 0, 0, fmt.Errorf("no object holding %q", key)
	}
	start, end, err := memberValue(body, i, key)
	if err == nil && start < 0 {
		return 0, 0, fmt.Errorf("no %q", key)
	}
	return start, end, err
}

// elementSpan is the span of element n of the array starting at body[i].
func elementSpan(body []byte, i, n int) (int, int, error) {
	if body[i] != '[' {
		return 0, 0, fmt.Errorf("no array holding [%d]", n)
	}
	i++
	for k := 0; ; k++ {
		i = skipWS(body, i)
		if body[i] == ']' {
			return 0, 0, fmt.Errorf("no element [%d]", n)
		}
		if body[i] == ',' {
			i = skipWS(body, i+1)
		}
		vs := i
		i = skipValue(body, i)
		if k == n {
			return vs, i, nil
		}
	}
}
