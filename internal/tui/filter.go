package tui

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/store"
)

// filterHelp is the one-line reminder shown while typing a filter.
const filterHelp = "provider:stripe source:staging type:'invoice.*' event-id:evt_1 since:2h status:5xx header:x-github-event=push, other words: text in the body"

// parseFilter reads the `/` filter: list's flags written as name:value (or
// --name value, --name=value) — provider, type, event-id, since — and any
// other words as text the body must contain. source matches a capture's
// --source name exactly (case kept: it is the user's own name). status and
// header are mitmproxy's ~c and ~h: status:5xx (a class) or status:502 (a
// code; status:none, no response recorded), header:name=value (the name in
// any case, the value exactly) or header:name (present); each header: adds
// one more the delivery must carry.
func parseFilter(q string, now time.Time) (store.Filter, error) {
	var f store.Filter
	var text []string
	words := splitWords(q)
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, ok := "", "", false
		switch {
		case strings.HasPrefix(w, "--"):
			name, value, ok = strings.Cut(strings.TrimPrefix(w, "--"), "=")
			if !ok {
				if i+1 >= len(words) {
					return f, fmt.Errorf("--%s needs a value", name)
				}
				i++
				value, ok = words[i], true
			}
		default:
			name, value, ok = strings.Cut(w, ":")
			if ok && !isFilterName(name) {
				ok = false // "a:b" in a body search
			}
		}
		if !ok {
			text = append(text, w)
			continue
		}
		switch name {
		case "provider", "p":
			f.Provider = strings.ToLower(value)
		case "source":
			f.Source = value
		case "type", "t":
			if _, err := path.Match(value, ""); err != nil {
				return f, fmt.Errorf("type %q: malformed glob (an unclosed [ ?)", value)
			}
			f.TypeGlob = value
		case "event-id", "event", "e":
			f.EventID = value
		case "since", "s":
			d, err := capture.ParseAge(value)
			if err != nil {
				return f, fmt.Errorf("since: %v", err)
			}
			f.Since = now.Add(-d)
		case "status":
			r, err := parseStatus(value)
			if err != nil {
				return f, err
			}
			f.Status = r
		case "header", "h":
			n, v, hasValue := strings.Cut(value, "=")
			if n = strings.TrimSpace(n); n == "" {
				return f, fmt.Errorf("header %q: want header:name=value or header:name", value)
			}
			f.Headers = append(f.Headers, store.HeaderMatch{Name: n, Value: v, AnyValue: !hasValue})
		default:
			return f, fmt.Errorf("unknown filter --%s (want provider, source, type, event-id, since, status, header or words of the body)", name)
		}
	}
	f.Text = strings.Join(text, " ")
	return f, nil
}

func isFilterName(s string) bool {
	switch s {
	case "provider", "p", "source", "type", "t", "event-id", "event", "e", "since", "s", "status", "header", "h":
		return true
	}
	return false
}

// splitWords splits q at spaces, keeping 'single' or "double" quoted runs
// together (the quotes are removed).
func splitWords(q string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range q {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote, in = r, true
		case quote == 0 && (r == ' ' || r == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// parseStatus reads status:'s value: a class (5xx), a code (502) or none
// (no response recorded).
func parseStatus(v string) (*store.StatusRange, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "none" || v == "0" {
		return &store.StatusRange{}, nil
	}
	if len(v) == 3 && v[0] >= '1' && v[0] <= '5' && v[1:] == "xx" {
		c := int(v[0]-'0') * 100
		return &store.StatusRange{Min: c, Max: c + 99}, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 100 && n <= 599 {
		return &store.StatusRange{Min: n, Max: n}, nil
	}
	return nil, fmt.Errorf("status %q: want a class (2xx, 4xx, 5xx), a code (502) or none", v)
}
