package config

// The typed values of a check: each is read from its node with the node's
// line in every message.

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookreplay/hookreplay/internal/address"
	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/secret"
)

// scalar returns n's text when it is a single value (not a list, mapping or nothing).
func (p *parser) scalar(what string, n *yaml.Node, want string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, "%s: want %s, got %s", what, want, kindName(n))
	}
	return n.Value, nil
}

func (p *parser) str(what string, n *yaml.Node) (string, error) {
	s, err := p.scalar(what, n, "text")
	if err != nil {
		return "", err
	}
	if n.Tag == "!!bool" {
		return "", p.errf(n, "%s: want text, got %s", what, s)
	}
	return s, nil
}

// strs reads one text or a list of texts.
func (p *parser) strs(what string, n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		s, err := p.str(what, n)
		if err != nil {
			return nil, p.errf(n, "%s: want text or a list of texts, got %s", what, kindName(n))
		}
		return []string{s}, nil
	}
	var out []string
	for _, c := range n.Content {
		s, err := p.str(what, c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) int64(what string, n *yaml.Node) (int64, error) {
	s, err := p.scalar(what, n, "a whole number")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n.Tag != "!!int" {
		return 0, p.errf(n, "%s: want a whole number, got %q", what, s)
	}
	return v, nil
}

func (p *parser) intIn(what string, n *yaml.Node, lo, hi int64) (int, error) {
	v, err := p.int64(what, n)
	if err != nil {
		return 0, err
	}
	if v < lo || v > hi {
		return 0, p.errf(n, "%s: %d is out of range (%d to %d)", what, v, lo, hi)
	}
	return int(v), nil
}

func (p *parser) bool(what string, n *yaml.Node) (bool, error) {
	s, err := p.scalar(what, n, "true or false")
	if err != nil {
		return false, err
	}
	if n.Tag != "!!bool" {
		return false, p.errf(n, "%s: want true or false, got %q", what, s)
	}
	return s == "true" || s == "True" || s == "TRUE", nil
}

// maxDuration bounds every duration: a day is longer than any CI job.
const maxDuration = 24 * time.Hour

// duration reads a Go duration ("200ms", "5s"); days ("7d") when allowDays.
func (p *parser) duration(what string, n *yaml.Node, allowDays bool) (time.Duration, error) {
	s, err := p.scalar(what, n, "a duration such as 5s")
	if err != nil {
		return 0, err
	}
	limit := maxDuration
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok && allowDays {
		k, err := strconv.Atoi(days)
		if err != nil || k <= 0 || k > 3650 {
			return 0, p.errf(n, "%s: %q is not a duration such as 2h or 7d", what, s)
		}
		return time.Duration(k) * 24 * time.Hour, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return 0, p.errf(n, "%s: %s: give a unit, e.g. %ss", what, s, s)
		}
		return 0, p.errf(n, "%s: %q is not a duration such as 500ms or 5s", what, s)
	}
	if d <= 0 || d > limit {
		return 0, p.errf(n, "%s: %s is out of range (more than 0, at most %s)", what, s, limit)
	}
	return d, nil
}

// ref is an environment variable reference: ${NAME} or $NAME.
var ref = regexp.MustCompile(`^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)`)

// expanded reads text in which ${NAME} is replaced by the variable's value;
// an unset variable is an error (a CI secret that was not passed in).
func (p *parser) expanded(what string, n *yaml.Node) (string, error) {
	s, err := p.str(what, n)
	if err != nil {
		return "", err
	}
	if err := p.noLiteralPassword(what, n, s); err != nil {
		return "", err
	}
	var missing string
	out := os.Expand(s, func(name string) string {
		v, ok := p.env(name)
		if !ok && missing == "" {
			missing = name
		}
		p.noteEnv(v)
		return v
	})
	if missing != "" {
		return "", p.errf(n, "%s: the environment variable %s is not set", what, missing)
	}
	return out, nil
}

// noteEnv records v as a value taken from the environment.
func (p *parser) noteEnv(v string) {
	if v != "" && !slices.Contains(p.fromEnv, v) {
		p.fromEnv = append(p.fromEnv, v)
	}
}

// shellVar is a variable a shell command refers to: ${NAME} or $NAME.
var shellVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
})

// command reads a shell command (serve, reset, forget, a cmd probe). The
// shell expands its variables when it runs, so they are left as written;
// the values of those named like credentials (API_TOKEN, PGPASSWORD) are
// recorded as taken from the environment, since the command's output and
// errors may show them.
func (p *parser) command(what string, n *yaml.Node) (string, error) {
	s, err := p.str(what, n)
	if err != nil {
		return "", err
	}
	for _, m := range shellVar().FindAllStringSubmatch(s, -1) {
		if name := m[1] + m[2]; secret.CredentialVar(name) {
			if v, ok := p.env(name); ok {
				p.noteEnv(v)
			}
		}
	}
	return s, nil
}

var kvPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bpassword\s*=\s*(\S*)`) })

// noLiteralPassword refuses a URL or key=value DSN that holds a password
// written out rather than as ${VAR}.
func (p *parser) noLiteralPassword(what string, n *yaml.Node, s string) error {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" && !ref.MatchString(pw) {
				return p.errf(n, "%s: a literal password is refused: write it as ${VAR} and set VAR in the CI job's environment", what)
			}
		}
	}
	for _, m := range kvPassword().FindAllStringSubmatch(s, -1) {
		if pw := strings.Trim(m[1], `'"`); pw != "" && !ref.MatchString(pw) {
			return p.errf(n, "%s: a literal password is refused: write it as password=${VAR} and set VAR in the CI job's environment", what)
		}
	}
	return nil
}

var deliveryKeys = []string{"from", "ids", "last", "event_id", "one_per_type", "provider", "type", "since", "limit"}

func (p *parser) deliveries(check string, n *yaml.Node, d *Deliveries) error {
	what := check + ": deliveries"
	err := p.mapping(n, what, deliveryKeys, func(k string, kn, v *yaml.Node) error {
		var err error
		switch k {
		case "from":
			var files []string
			if files, err = p.strs(what+": from", v); err != nil {
				return err
			}
			for _, f := range files {
				if f == "" {
					return p.errf(v, "%s: from: an empty file name", what)
				}
			}
			d.From = files
		case "ids":
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
			}
			for _, it := range items {
				id, err := p.int64(what+": ids", it)
				if err != nil {
					return err
				}
				if id <= 0 {
					return p.errf(it, "%s: ids: %d is not a delivery id (see 'hookreplay list')", what, id)
				}
				d.IDs = append(d.IDs, id)
			}
		case "last":
			d.Last, err = p.bool(what+": last", v)
		case "event_id":
			d.EventIDs, err = p.strs(what+": event_id", v)
		case "provider":
			d.Provider, err = p.str(what+": provider", v)
			d.Provider = strings.ToLower(strings.TrimSpace(d.Provider))
		case "type":
			d.Type, err = p.str(what+": type", v)
		case "since":
			d.Since, err = p.duration(what+": since", v, true)
		case "limit":
			d.Limit, err = p.intIn(what+": limit", v, 1, 1000)
		case "one_per_type":
			d.OnePerType, err = p.bool(what+": one_per_type", v)
		}
		return err
	})
	if err != nil {
		return err
	}
	if (d.Last || len(d.EventIDs) > 0) && (d.Since > 0 || d.Limit > 0) {
		return p.errf(n, "%s: last and event_id name deliveries themselves: only provider and type narrow them (leave out since and limit)", what)
	}
	if d.OnePerType && (d.Last || len(d.EventIDs) > 0 || d.Limit > 0) {
		return p.errf(n, "%s: one_per_type takes the newest delivery of each type that provider, type and since match: leave out last, event_id and limit", what)
	}
	if d.Limit > 0 && !d.Filtered() {
		return p.errf(n, "%s: limit applies to provider, type or since: give one of them", what)
	}
	if d.Filtered() && d.Limit == 0 {
		d.Limit = 1
	}
	return nil
}

var probeKeys = []string{"sql", "dsn", "cmd", "http", "redis", "sink", "smtp", "match"}

// probeName is a name reports can call a probe by (probe.SplitName's rule).
var probeName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

func (p *parser) probes(check string, n *yaml.Node) ([]Probe, error) {
	var out []Probe
	sinks, smtps := 0, 0
	err := p.mapping(n, check+": probes", nil, func(name string, k, v *yaml.Node) error {
		what := check + ": probe " + name
		if !probeName.MatchString(name) {
			return p.errf(k, "%s: a probe's name is a lower-case word (a letter, then letters, digits, _ or -), e.g. balance", what)
		}
		pr := Probe{Name: name, Line: k.Line}
		kinds := 0
		err := p.mapping(v, what, probeKeys, func(key string, kn, vn *yaml.Node) error {
			var err error
			switch key {
			case "sql":
				pr.SQL, err = p.str(what+": sql", vn)
				kinds++
			case "dsn":
				pr.DSN, err = p.expanded(what+": dsn", vn)
			case "cmd":
				pr.Cmd, err = p.command(what+": cmd", vn)
				kinds++
			case "http":
				pr.HTTP, err = p.expanded(what+": http", vn)
				if err == nil {
					if _, uerr := address.Handler(pr.HTTP); uerr != nil {
						err = p.errf(vn, "%s: http: %s: %v", what, address.Shown(pr.HTTP), uerr)
					}
				}
				kinds++
			case "sink":
				pr.Sink, err = p.str(what+": sink", vn)
				kinds++
				sinks++
			case "redis":
				pr.Redis, err = p.expanded(what+": redis", vn)
				if err == nil {
					if _, rerr := probe.ParseRedisSpec(pr.Redis); rerr != nil {
						err = p.errf(vn, "%s: redis: %v", what, rerr)
					}
				}
				kinds++
			case "smtp":
				pr.SMTP, err = p.str(what+": smtp", vn)
				kinds++
				smtps++
			case "match":
				pr.Match, err = p.strs(what+": match", vn)
			}
			return err
		})
		if err != nil {
			return err
		}
		switch {
		case kinds != 1:
			return p.errf(k, "%s: give exactly one of sql (with dsn), cmd, http, redis, sink or smtp", what)
		case pr.SQL != "" && pr.DSN == "":
			return p.errf(k, "%s: sql needs dsn: sqlite:PATH or postgres://...", what)
		case pr.SQL == "" && pr.DSN != "":
			return p.errf(k, "%s: dsn is only for an sql probe", what)
		case pr.Sink == "" && pr.SMTP == "" && len(pr.Match) > 0:
			return p.errf(k, "%s: match is only for a sink (the calls it counts, e.g. 'POST /v1/send') or an smtp sink (the emails, e.g. 'to:*@example.com')", what)
		case sinks > 1:
			return p.errf(k, "%s: a check serves one sink", what)
		case smtps > 1:
			return p.errf(k, "%s: a check serves one smtp sink", what)
		}
		for _, prev := range out {
			if prev.SQL != "" && pr.SQL != "" && prev.DSN != pr.DSN {
				return p.errf(k, "%s: the sql probes of one check read one database (probe %s uses another dsn)", what, prev.Name)
			}
		}
		out = append(out, pr)
		return nil
	})
	return out, err
}

func (p *parser) phases(owner string, n *yaml.Node) ([]string, error) {
	what := owner + ": phases"
	items, err := p.strs(what, n)
	if err != nil {
		return nil, err
	}
	if len(items) == 1 && strings.Contains(items[0], ",") {
		items = strings.Split(items[0], ",")
	}
	var out []string
	for _, ph := range items {
		ph = strings.TrimSpace(ph)
		if _, ok := check.PhaseNamed(ph); !ok {
			return nil, p.errf(n, "%s: unknown phase %q (known: %s)", what, ph, strings.Join(check.AllPhases, ", "))
		}
		out = append(out, ph)
	}
	if len(out) == 0 {
		return nil, p.errf(n, "%s: name at least one phase, or leave phases out for all", what)
	}
	return out, nil
}

func (p *parser) reports(check string, n *yaml.Node) ([]Report, error) {
	what := check + ": reports"
	var out []Report
	err := p.mapping(n, what, ReportFormats, func(format string, k, v *yaml.Node) error {
		path, err := p.expanded(what+": "+format, v)
		if err != nil {
			return err
		}
		if path == "" || path == "-" {
			return p.errf(v, "%s: %s: give a file (stdout carries each check's text report)", what, format)
		}
		out = append(out, Report{Format: format, Path: path, shared: strings.Contains(v.Value, "GITHUB_STEP_SUMMARY")})
		return nil
	})
	return out, err
}
