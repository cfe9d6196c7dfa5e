package tui

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/store"
)

// filterHelp is the one-line reminder shown while typing a filter.
const filterHelp = "provider:stripe source:staging type:'invoice.*' event-id:evt_1 since:2h, other words: text in the body"

// parseFilter reads the `/` filter: list's flags written as name:value (or
// --name value, --name=value) — provider, type, event-id, since — and any
// other words as text the body must contain. source matches a capture's
// --source name exactly (case kept: it is the user's own name).
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
		default:
			return f, fmt.Errorf("unknown filter --%s (want provider, source, type, event-id, since or words of the body)", name)
		}
	}
	f.Text = strings.Join(text, " ")
	return f, nil
}

func isFilterName(s string) bool {
	switch s {
	case "provider", "p", "source", "type", "t", "event-id", "event", "e", "since", "s":
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
