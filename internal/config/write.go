package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v3"
)

// checkNode is c as the YAML mapping of one check, with the keys the TUI's
// check form sets: deliveries (ids, event ids), to, serve, reset, probes,
// phases and secret_env.
func checkNode(c *Check) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(parent *yaml.Node, k string, v *yaml.Node) {
		parent.Content = append(parent.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	seq := func(ss []string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range ss {
			n.Content = append(n.Content, str(s))
		}
		return n
	}
	d := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	if len(c.Deliveries.EventIDs) > 0 {
		add(d, "event_id", seq(c.Deliveries.EventIDs))
	}
	if len(c.Deliveries.IDs) > 0 {
		var ids []string
		for _, id := range c.Deliveries.IDs {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
		add(d, "ids", seq(ids))
	}
	if c.Deliveries.Last {
		add(d, "last", str("true"))
	}
	add(m, "deliveries", d)
	add(m, "to", str(c.To))
	if c.Serve != "" {
		add(m, "serve", str(c.Serve))
	}
	if c.Reset != "" {
		add(m, "reset", str(c.Reset))
	}
	if c.Kill != "" {
		add(m, "kill", str(c.Kill))
		add(m, "start", str(c.Start))
	}
	ps := &yaml.Node{Kind: yaml.MappingNode}
	for _, p := range c.Probes {
		pn := &yaml.Node{Kind: yaml.MappingNode}
		for _, kv := range [][2]string{{"sql", p.SQL}, {"dsn", p.DSN}, {"cmd", p.Cmd}, {"http", p.HTTP},
			{"redis", p.Redis}, {"sink", p.Sink}, {"smtp", p.SMTP}} {
			if kv[1] != "" {
				add(pn, kv[0], str(kv[1]))
			}
		}
		if len(p.Match) > 0 {
			add(pn, "match", seq(p.Match))
		}
		add(ps, p.Name, pn)
	}
	add(m, "probes", ps)
	if len(c.Phases) > 0 {
		add(m, "phases", seq(c.Phases))
	}
	if c.SecretEnv != "" {
		add(m, "secret_env", str(c.SecretEnv))
	}
	return m
}

// CheckYAML is a config file holding c alone, under its name: what the
// TUI's check form validates with Parse, so the form and the file agree on
// every rule.
func CheckYAML(c *Check) ([]byte, error) {
	checks := &yaml.Node{Kind: yaml.MappingNode}
	checks.Content = append(checks.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: c.Name}, checkNode(c))
	root := &yaml.Node{Kind: yaml.MappingNode}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "checks"}, checks)
	return encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}})
}

func encode(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	enc.Close()
	return b.Bytes(), nil
}

// AddCheck adds c under checks: in the config file at path (created when
// there is none), keeping every other check and key; a name already taken
// is refused. The result is parsed before it is written (a file that would
// not load is never written), and written whole through a temporary file
// in the same directory and a rename.
func AddCheck(path string, c *Check, env Lookup) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return &Error{Path: path, Msg: "cannot read it: " + pathErrText(err)}
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return (&parser{path: path}).syntaxErr(err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return &Error{Path: path, Msg: "not a mapping of checks: add the check by hand"}
	}
	var checks *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "checks" {
			checks = root.Content[i+1]
		}
	}
	if checks == nil {
		checks = &yaml.Node{Kind: yaml.MappingNode}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "checks"}, checks)
	}
	if checks.Kind != yaml.MappingNode {
		return &Error{Path: path, Line: checks.Line, Msg: "checks: is not a mapping of named checks"}
	}
	for i := 0; i < len(checks.Content); i += 2 {
		if checks.Content[i].Value == c.Name {
			return &Error{Path: path, Line: checks.Content[i].Line, Msg: fmt.Sprintf("a check named %s is already there: choose another name", c.Name)}
		}
	}
	checks.Content = append(checks.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: c.Name}, checkNode(c))
	out, err := encode(&doc)
	if err != nil {
		return &Error{Path: path, Msg: err.Error()}
	}
	if _, err := Parse(path, out, env); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".hookreplay-*.yaml")
	if err != nil {
		return &Error{Path: path, Msg: "cannot write it: " + pathErrText(err)}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return &Error{Path: path, Msg: "cannot write it: " + pathErrText(err)}
	}
	if err := tmp.Close(); err != nil {
		return &Error{Path: path, Msg: "cannot write it: " + pathErrText(err)}
	}
	if fi, err := os.Stat(path); err == nil {
		os.Chmod(tmp.Name(), fi.Mode().Perm())
	} else {
		os.Chmod(tmp.Name(), 0o644)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return &Error{Path: path, Msg: "cannot write it: " + pathErrText(err)}
	}
	return nil
}
