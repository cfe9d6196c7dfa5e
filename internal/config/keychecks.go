package config

// The keychecks: section: each named keycheck is the settings of one
// `hookreplay keycheck` command line. Its keys are the command's flags
// with _ for - (reuse_status for --reuse-status); cmd maps every value
// onto the same flag set the command line parses, so a keycheck in the
// file runs exactly as typed, with the same defaults and the same checks
// of every value. Probes and reports are written as a check's are.

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hookreplay/hookreplay/internal/address"
)

// KeyCheck is one named keycheck of the file.
type KeyCheck struct {
	Name string
	Line int
	// To is the API's URL.
	To      string
	Probes  []Probe
	Reports []Report
	// Settings are the other keys in file order: Flag is the command's
	// flag name (reuse-status), Values its value(s).
	Settings []Setting
}

// Setting is one key of a keycheck, as the flag it stands for.
type Setting struct {
	Flag   string
	Values []string
	Line   int
}

// KeyCheckKeys are the keys a keycheck may have besides to, probes and
// reports: each is the keycheck flag of that name with - for _. Lists are
// the repeatable flags; bodies may be YAML mappings (written as JSON).
var KeyCheckKeys = []string{"method", "body", "header", "from", "key_header", "key", "profile", "reuse_status",
	"in_flight_status", "max_key_length", "key_too_long_status", "outage_status", "replay_header", "replay_5xx", "whitespace_reuse", "open_fingerprint", "problem_json",
	"other_account", "slow_body", "fail_body", "invalid_body", "also", "id_path", "get", "store_down_cmd",
	"store_up_cmd", "ttl", "burst", "checks", "serve", "reset_cmd", "timeout", "settle", "settle_max", "max_time", "insecure"}

// bodyKeys may be a YAML mapping or list: the JSON body it spells.
var bodyKeys = []string{"body", "slow_body", "fail_body", "invalid_body"}

func (p *parser) keychecks(n *yaml.Node, f *File) error {
	return p.mapping(n, "keychecks", nil, func(name string, k, v *yaml.Node) error {
		if !checkName.MatchString(name) {
			return p.errf(k, "keycheck name %q: use letters, digits, '-', '_' and '.' (it is typed as 'hookreplay keycheck NAME')", name)
		}
		kc, err := p.keycheck(name, k, v)
		if err != nil {
			return err
		}
		f.KeyChecks = append(f.KeyChecks, kc)
		return nil
	})
}

func (p *parser) keycheck(name string, key, n *yaml.Node) (*KeyCheck, error) {
	c := &KeyCheck{Name: name, Line: key.Line}
	what := "keycheck " + name
	var to *yaml.Node
	known := append([]string{"to", "probes", "reports"}, KeyCheckKeys...)
	err := p.mapping(n, what, known, func(k string, kn, v *yaml.Node) error {
		var err error
		switch {
		case k == "to":
			to = v
			c.To, err = p.expanded(what+": to", v)
		case k == "probes":
			c.Probes, err = p.probes(what, v)
		case k == "reports":
			c.Reports, err = p.reports(what, v)
		case contains(bodyKeys, k) && (v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode):
			var x any
			if err := v.Decode(&x); err != nil {
				return p.errf(v, "%s: %s: %v", what, k, err)
			}
			b, err := json.Marshal(x)
			if err != nil {
				return p.errf(v, "%s: %s: cannot be written as JSON: %v", what, k, err)
			}
			c.Settings = append(c.Settings, Setting{Flag: flagName(k), Values: []string{string(b)}, Line: v.Line})
		default:
			var vals []string
			if vals, err = p.strs(what+": "+k, v); err != nil {
				if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
					vals, err = []string{v.Value}, nil // a number or true/false, as the flag reads it
				} else {
					return err
				}
			}
			for i := range vals {
				if vals[i], err = p.expand(what+": "+k, v, vals[i]); err != nil {
					return err
				}
			}
			if k == "checks" {
				vals = []string{strings.Join(vals, ",")}
			}
			c.Settings = append(c.Settings, Setting{Flag: flagName(k), Values: vals, Line: v.Line})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if to == nil || c.To == "" {
		return nil, p.errf(key, "%s: to: is required: the API's URL, e.g. to: http://127.0.0.1:8080/v1/messages", what)
	}
	if _, err := address.Handler(c.To); err != nil {
		return nil, p.errf(to, "%s: to: %s: %v", what, address.Shown(c.To), err)
	}
	c.To = address.Complete(c.To)
	if len(c.Probes) == 0 {
		return nil, p.errf(key, "%s: no probes: name at least one (probes: {messages: {http: http://127.0.0.1:8080/debug/count}}) so hookreplay can count what the API does", what)
	}
	return c, nil
}

// expand replaces ${VAR} in s, read from node n (for its line).
func (p *parser) expand(what string, n *yaml.Node, s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	c := *n
	c.Kind, c.Tag, c.Value = yaml.ScalarNode, "!!str", s
	return p.expanded(what, &c)
}

// flagName is the flag a key stands for.
func flagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// distinctKeyCheckNames refuses a keycheck named like a check: 'hookreplay
// check NAME' could not tell them apart.
func (p *parser) distinctKeyCheckNames(f *File) error {
	for _, k := range f.KeyChecks {
		for _, c := range f.Checks {
			if c.Name == k.Name {
				return &Error{Path: p.path, Line: k.Line, Msg: fmt.Sprintf("keycheck %s: a check has that name too (line %d): give each its own name", k.Name, c.Line)}
			}
		}
	}
	return nil
}
