package probe

// Scoped probes. A probe may name the event a delivery is about in its
// spec — `SELECT balance FROM wallets WHERE customer = {{json:data.object.customer}}`
// — so that its reading is that one delivery's: check then reads it with
// the delivery's values filled in, and checks deliveries whose scoped
// probes read different things side by side, each reading only its own
// event's effects.
//
// Values are never pasted into a query: SQL gets them as bind parameters,
// a command as single-quoted shell words, a URL query-escaped.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// placeholder matches the placeholders a probe's spec may use; any other
// {{…}} is left as it is (a command's own template, docker's --format
// '{{.State.Status}}').
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*(json:[^{}\s]+|event\.type|event\.id|provider)\s*\}\}`)
})

// quotedPlaceholder matches a placeholder written inside quotes of its
// own, '{{json:…}}' (SQL's string literal, a shell word) or "{{json:…}}"
// (a shell word): the value is quoted (bound) anyway, so the quotes go.
var quotedPlaceholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`'(\{\{\s*(?:json:[^{}\s]+|event\.type|event\.id|provider)\s*\}\})'|"(\{\{\s*(?:json:[^{}\s]+|event\.type|event\.id|provider)\s*\}\})"`)
})

// unquoted drops the quotes around placeholders in spec; double quotes only
// when dq (in SQL they name a column).
func unquoted(spec string, dq bool) string {
	return quotedPlaceholder().ReplaceAllStringFunc(spec, func(m string) string {
		if m[0] == '"' && !dq {
			return m
		}
		return m[1 : len(m)-1]
	})
}

// Vars gives a placeholder's value for one delivery: ok is false when the
// delivery has none (a JSON path its body lacks); value then is empty, or
// says what the body has there instead ("an object"), for the error.
type Vars func(name string) (value string, ok bool)

// ScopeError is a scoped probe that cannot be read for one delivery: a
// placeholder naming a value the delivery does not have.
type ScopeError struct {
	Probe, Placeholder string
	// Found is what the body has at the placeholder's path instead of a
	// value ("an object", "an array", "null"); empty when nothing.
	Found string
}

func (e *ScopeError) Error() string {
	if e.Found != "" {
		return fmt.Sprintf("probe %s names {{%s}}, which is %s in the delivery's body, not a string, number or boolean: name a field inside it (e.g. {{%s.id}})", e.Probe, e.Placeholder, e.Found, e.Placeholder)
	}
	return fmt.Sprintf("probe %s names {{%s}}, which the delivery does not have", e.Probe, e.Placeholder)
}

// Scoper is a probe whose spec names values of the event it reads
// ({{json:PATH}}, {{event.type}}, {{provider}}). Scope returns the probe
// that reads one delivery's values, and its key: two scoped probes with
// the same key read the same thing. A Scoper that is read unscoped fails
// with a setup error.
type Scoper interface {
	Scope(v Vars) (p Probe, key string, err error)
}

// Placeholders lists the placeholder names in spec, in order.
func Placeholders(spec string) []string {
	var out []string
	for _, m := range placeholder().FindAllStringSubmatch(spec, -1) {
		out = append(out, m[1])
	}
	return out
}

// nearPlaceholder matches what was meant as a placeholder: a word followed
// at once by ':' or '.' ({{jsn:data.id}}, {{json.data.id}}, {{event.kind}},
// {{json: data.id}}). Another tool's template starts otherwise (docker's
// {{.State.Status}}, {{json .Config}}), and is left as it is.
var nearPlaceholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*[A-Za-z_][A-Za-z0-9_]*[:.][^{}]*\}\}`) })

// checkPlaceholders refuses a placeholder no delivery can fill, and one
// mistyped: left as it is, it would make the probe read nothing that
// changes, and the check end "inconclusive" with no word of the typo.
func checkPlaceholders(spec string) error {
	for _, name := range Placeholders(spec) {
		if name == "event.id" {
			return errors.New("{{event.id}} cannot scope a probe: check sends every event with a fresh id, so the captured id is never the one the handler stores; " +
				"name what the event is about instead, e.g. {{json:data.object.customer}}")
		}
	}
	for _, m := range nearPlaceholder().FindAllString(spec, -1) {
		if !placeholder().MatchString(m) {
			return fmt.Errorf("%s is not a placeholder: write {{json:PATH}} (no space, e.g. {{json:data.object.customer}}), {{event.type}} or {{provider}}", m)
		}
	}
	return nil
}

// EventVars are the placeholder values of one delivery: its JSON body's
// fields ({{json:data.object.customer}}, array elements by index:
// {{json:data.items.0.id}}), its event type and its provider. A JSON
// field that is an object or array has no value; a number is its text as
// sent, a string its contents.
func EventVars(body []byte, eventType, provider string) Vars {
	var doc any
	parsed := false
	return func(name string) (string, bool) {
		switch name {
		case "event.type":
			return eventType, eventType != ""
		case "provider":
			return provider, provider != ""
		}
		path, ok := strings.CutPrefix(name, "json:")
		if !ok {
			return "", false
		}
		if !parsed {
			parsed = true
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			if dec.Decode(&doc) != nil {
				doc = nil
			}
		}
		return jsonField(doc, path)
	}
}

// jsonField is the scalar at a dotted path of doc.
func jsonField(doc any, path string) (string, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[part]
			if !ok {
				return "", false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return "", false
			}
			cur = v[i]
		default:
			return "", false
		}
	}
	switch v := cur.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	}
	// null, an object or an array names nothing to scope by: say which.
	switch cur.(type) {
	case map[string]any:
		return "an object", false
	case []any:
		return "an array", false
	}
	return "null", false
}

// render replaces every placeholder of spec by quote(value), collecting
// the values in order; name is the probe's, for the error.
func render(spec, name string, v Vars, quote func(i int, val string) string) (string, []string, error) {
	var vals []string
	var err error
	out := placeholder().ReplaceAllStringFunc(spec, func(m string) string {
		ph := placeholder().FindStringSubmatch(m)[1]
		val, ok := v(ph)
		if !ok {
			if err == nil {
				err = &ScopeError{Probe: name, Placeholder: ph, Found: val}
			}
			return m
		}
		vals = append(vals, val)
		return quote(len(vals)-1, val)
	})
	return out, vals, err
}

// errUnscoped is what a scoped probe read without a delivery fails with.
var errUnscoped = errors.New("it names values of an event ({{…}}), so it can only be read per delivery, by check")

// shellQuote quotes s as one word for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Scope of a command: the values as single-quoted words.
func (p *CmdProbe) Scope(v Vars) (Probe, string, error) {
	cmd, _, err := render(unquoted(p.cmd, true), p.Name(), v, func(_ int, val string) string { return shellQuote(val) })
	if err != nil {
		return nil, "", err
	}
	return &CmdProbe{cmd: cmd, Timeout: p.Timeout, scoped: true}, "cmd: " + cmd, nil
}

// Scope of a URL: the values query-escaped (a space as %20, valid in a
// path and a query alike).
func (p *HTTPProbe) Scope(v Vars) (Probe, string, error) {
	u, _, err := render(p.url, p.Name(), v, func(_ int, val string) string {
		return strings.ReplaceAll(url.QueryEscape(val), "+", "%20")
	})
	if err != nil {
		return nil, "", err
	}
	return &HTTPProbe{url: u, client: p.client, scoped: true}, "http: " + u, nil
}

// Scope of a query: the values as bind parameters ($1… on Postgres, ? on
// SQLite), never pasted into the SQL ('{{…}}', quoted as a literal would
// be, is bound the same); the scoped probe shares p's pool.
func (p *SQLProbe) Scope(v Vars) (Probe, string, error) {
	q, vals, err := render(unquoted(p.query, false), p.Name(), v, func(i int, _ string) string {
		if p.driver == "pgx" {
			return "$" + strconv.Itoa(i+1)
		}
		return "?"
	})
	if err != nil {
		return nil, "", err
	}
	s := &SQLProbe{query: q, driver: p.driver, dsn: p.dsn, display: p.display, path: p.path, Timeout: p.Timeout, shared: p}
	for _, val := range vals {
		s.args = append(s.args, val)
	}
	return s, fmt.Sprintf("sql: %s %q", q, vals), nil
}

// scoped reports whether spec names values of an event.
func scoped(spec string) bool { return placeholder().MatchString(spec) }

// Scope of a named probe: the scoped probe under the same name.
func (n *namedProbe) Scope(v Vars) (Probe, string, error) {
	s, ok := n.p.(Scoper)
	if !ok {
		return nil, "", errors.New("not scoped")
	}
	p, key, err := s.Scope(v)
	if err != nil {
		return nil, "", err
	}
	return &namedProbe{p: p, name: n.name, auto: n.auto}, key, nil
}

// Scope of a redacted probe: the scoped probe, still redacted.
func (r *redactedProbe) Scope(v Vars) (Probe, string, error) {
	s, ok := r.p.(Scoper)
	if !ok {
		return nil, "", errors.New("not scoped")
	}
	p, key, err := s.Scope(v)
	if err != nil {
		return nil, "", err
	}
	return &redactedProbe{p: p, redact: r.redact}, key, nil
}

// IsScoped reports whether p (named or redacted) names values of an event.
func IsScoped(p Probe) bool {
	switch u := Unwrap(p).(type) {
	case *SQLProbe:
		return u.shared == nil && scoped(u.query)
	case *CmdProbe:
		return !u.scoped && scoped(u.cmd)
	case *HTTPProbe:
		return !u.scoped && scoped(u.url)
	}
	return false
}

// ScopeAll returns probes as one delivery reads them (v its values): a
// scoped probe with the values filled in, any other as it is. keys[i] says
// what probe i reads for that delivery, "" for a probe that is not scoped
// (it reads the same for every delivery).
func ScopeAll(probes []Probe, v Vars) (out []Probe, keys []string, err error) {
	out = make([]Probe, len(probes))
	keys = make([]string, len(probes))
	for i, p := range probes {
		out[i] = p
		if !IsScoped(p) {
			continue
		}
		s, ok := p.(Scoper)
		if !ok {
			continue
		}
		if out[i], keys[i], err = s.Scope(v); err != nil {
			return nil, nil, err
		}
	}
	return out, keys, nil
}
