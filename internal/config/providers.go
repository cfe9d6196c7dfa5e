package config

// The providers: section: signature schemes the user declares for
// providers hookreplay has no built-in scheme for. verify.Declare judges
// each declaration; this file reads it and points a mistake at its line.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// Provider is one declared provider scheme and where it was declared.
type Provider struct {
	Scheme verify.Scheme
	Path   string // the file, or "--declare"
	Line   int
}

// ProviderKeys are the keys a provider declaration may have, in the order
// docs/providers.md documents them.
var ProviderKeys = []string{"title", "signature_header", "format", "timestamp_header", "timestamp_unit", "signed", "mac", "encoding",
	"secret_encoding", "compare", "tolerance", "event_id", "event_type", "new_event_id", "detect", "timeout", "retries", "retry_source", "retry_final"}

// maxRetryOffset bounds a retry offset: the longest published horizon is a
// few days (Stripe's 3 days, Svix's 5 days, WhatsApp's 7 days).
const maxRetryOffset = 90 * 24 * time.Hour

// LoadProviders reads only the providers: section of the file at path (the
// rest of the file is check's business): every command reads it, so a
// file's checks need not be valid for 'hookreplay list' to run.
func LoadProviders(path string) ([]Provider, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Path: path, Msg: "cannot read it: " + pathErrText(err)}
	}
	if len(data) > MaxSize {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("larger than %d KiB: not a config file", MaxSize>>10)}
	}
	p := &parser{path: path, env: os.LookupEnv}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.syntaxErr(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil // check says what is wrong with it, when it is run
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "providers" {
			continue
		}
		v := root.Content[i+1]
		if err := p.noAliases(v); err != nil {
			return nil, err
		}
		if err := p.noLiteralSecrets(v); err != nil {
			return nil, err
		}
		return p.providers(v)
	}
	return nil, nil
}

// ParseDeclare reads a --declare value: providers: entries as YAML, e.g.
// 'acme: {signature_header: X-Acme-Signature, signed: "{timestamp}.{body}"}'.
func ParseDeclare(value string) ([]Provider, error) {
	p := &parser{path: "--declare", env: os.LookupEnv}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return nil, p.syntaxErr(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{Path: p.path, Msg: "empty: give NAME: {signature_header: HEADER, ...}"}
	}
	if err := p.noAliases(&doc); err != nil {
		return nil, err
	}
	ps, err := p.providers(doc.Content[0])
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Line = 0 // one line: the key names the place
		}
		return nil, err
	}
	for i := range ps {
		ps[i].Line = 0 // one line: the flag is the place
	}
	return ps, nil
}

func (p *parser) providers(n *yaml.Node) ([]Provider, error) {
	var out []Provider
	err := p.mapping(n, "providers", nil, func(name string, k, v *yaml.Node) error {
		d := verify.Declaration{Name: name}
		fields := map[string]*yaml.Node{"": k} // the keys read without a mistake
		what := "provider " + name
		err := p.mapping(v, what, ProviderKeys, func(key string, kn, vn *yaml.Node) error {
			w := what + ": " + key
			var err error
			switch key {
			case "title":
				d.Title, err = p.str(w, vn)
			case "signature_header":
				d.SignatureHeader, err = p.str(w, vn)
			case "format":
				d.Format, err = p.str(w, vn)
			case "timestamp_header":
				d.TimestampHeader, err = p.str(w, vn)
			case "timestamp_unit":
				d.TimestampUnit, err = p.str(w, vn)
			case "signed":
				d.Signed, err = p.str(w, vn)
			case "mac":
				d.MAC, err = p.str(w, vn)
			case "encoding":
				d.Encoding, err = p.str(w, vn)
			case "secret_encoding":
				d.SecretEncoding, err = p.str(w, vn)
			case "compare":
				d.Compare, err = p.str(w, vn)
			case "tolerance":
				d.Tolerance, err = p.duration(w, vn, false)
			case "event_id":
				d.EventID, err = p.str(w, vn)
			case "event_type":
				d.EventType, err = p.str(w, vn)
			case "new_event_id":
				d.NewEventID, err = p.str(w, vn)
			case "detect":
				d.Detect, err = p.strs(w, vn)
			case "timeout":
				d.Timeout, err = p.duration(w, vn, false)
			case "retries":
				d.Retries, err = p.retries(w, vn)
			case "retry_source":
				d.RetrySource, err = p.str(w, vn)
			case "retry_final":
				d.RetryFinal, err = p.str(w, vn)
			}
			if err == nil {
				fields[key] = vn
			}
			return err
		})
		if err != nil {
			// The keys read are above the one refused: a mistake of
			// theirs comes first, so that fixing top-down works.
			if at, de := firstAlone(d, fields, nil); de != nil {
				return p.errf(at, "%v", de)
			}
			return err
		}
		s, err := verify.Declare(d)
		var de *verify.DeclarationError
		if errors.As(err, &de) {
			at := fields[de.Field]
			if at == nil {
				at = k
			}
			// Declare judges in its own order, not the file's.
			if n, e := firstAlone(d, fields, at); e != nil {
				at, de = n, e
			}
			return p.errf(at, "%v", de)
		}
		if err != nil {
			return p.errf(k, "%v", err)
		}
		out = append(out, Provider{Scheme: s, Path: p.path, Line: k.Line})
		return nil
	})
	return out, err
}

// firstAlone is the first, in file order, of the read fields' mistakes that
// hold whatever the other fields say (verify.FieldError), above the node
// before when it is given, with its node.
func firstAlone(d verify.Declaration, fields map[string]*yaml.Node, before *yaml.Node) (*yaml.Node, *verify.DeclarationError) {
	var at *yaml.Node
	var first *verify.DeclarationError
	for key, n := range fields {
		if before != nil && !above(n, before) || at != nil && !above(n, at) {
			continue
		}
		if de := verify.FieldError(d, key); de != nil {
			at, first = n, de
		}
	}
	return at, first
}

// above reports whether a comes before b in the file.
func above(a, b *yaml.Node) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}

// retries reads a list of offsets from the first attempt ("1m", "2h", "3d").
func (p *parser) retries(what string, n *yaml.Node) ([]time.Duration, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s: want a list of offsets from the first attempt, e.g. [1m, 10m, 1h, 1d]", what)
	}
	var out []time.Duration
	for _, c := range n.Content {
		s, err := p.scalar(what, c, "a duration such as 10m or 2d")
		if err != nil {
			return nil, err
		}
		var d time.Duration
		if days, ok := strings.CutSuffix(s, "d"); ok {
			k, err := strconv.Atoi(days)
			if err != nil {
				return nil, p.errf(c, "%s: %q is not a duration such as 10m, 2h or 3d", what, s)
			}
			d = time.Duration(k) * 24 * time.Hour
		} else if d, err = time.ParseDuration(s); err != nil {
			return nil, p.errf(c, "%s: %q is not a duration such as 10m, 2h or 3d", what, s)
		}
		if d <= 0 || d > maxRetryOffset {
			return nil, p.errf(c, "%s: %s is out of range (more than 0, at most 90d)", what, s)
		}
		out = append(out, d)
	}
	return out, nil
}
