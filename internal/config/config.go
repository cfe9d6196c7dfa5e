// Package config owns hookreplay.yaml, the file that describes the checks a
// CI job runs: it finds the file, parses it and validates every value, and
// reports each problem with the line it is on. It knows nothing of the
// command line: cmd maps a Check onto the same options its flags build.
//
// A secret never belongs in the file: the signing secret is named by the
// environment variable holding it (secret_env), a password in a DSN or URL is
// written as ${VAR}, and a value that looks like a provider secret is refused.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookreplay/hookreplay/internal/address"
	"github.com/hookreplay/hookreplay/internal/secret"
)

// Names are the file names Find looks for, in order.
var Names = []string{"hookreplay.yaml", "hookreplay.yml"}

// MaxSize bounds the file Load reads: a CI config is a few kilobytes.
const MaxSize = 1 << 20

// ReportFormats are the report formats a check's reports may name.
var ReportFormats = []string{"json", "junit", "markdown", "text"}

// File is a parsed hookreplay.yaml.
type File struct {
	// Path is the file as it was named (for messages).
	Path string
	// Checks are the file's checks in the order they are written.
	Checks []*Check
	// KeyChecks are the file's keychecks (keychecks:), in order.
	KeyChecks []*KeyCheck
	// FromEnv are the values ${VAR} references in the file were replaced
	// with. Any of them may be a credential (a header's, a password): the
	// commands redact each wherever they print or store it.
	FromEnv []string
	// Providers are the schemes the file declares (providers:), in order.
	Providers []Provider
}

// Check is one named check: which deliveries go to which handler, what is
// probed, and how.
type Check struct {
	Name string
	Line int

	Deliveries Deliveries
	To         string
	SignedURL  string // the URL copies are signed for ("" to's), as --signed-url
	Serve      string // shell command starting the handler ("" none)
	Reset      string // shell command restoring its state ("" none)
	// Kill and Start kill and start the handler again for crash, when
	// serve cannot (docker compose, systemd); both or neither.
	Kill, Start string
	// DedupeTTL is how long the handler remembers an event id (0: not
	// declared); Forget a shell command making it forget one ("" none).
	DedupeTTL time.Duration
	Forget    string
	Probes    []Probe
	Phases    []string // nil: every phase the inputs allow
	SecretEnv string   // environment variable holding the signing secret

	Copies          int           // 0: the default
	Burst           int           // 0: the default
	Jobs            int           // 0: the default (deliveries at once, scoped probes)
	Settle          time.Duration // 0: the default
	SettleMax       time.Duration // 0: the default
	ProviderTimeout time.Duration // 0: the provider's
	MaxTime         time.Duration // 0: the default
	Seed            *int64        // nil: random
	Insecure        bool
	Reports         []Report
}

// Deliveries says which deliveries a check sends: JSONL files and/or a
// selection from the store.
type Deliveries struct {
	From     []string // JSONL files, as 'hookreplay export --format jsonl' writes
	IDs      []int64
	Last     bool
	EventIDs []string
	// Provider, Type and Since filter the store; Limit (default 1) is how
	// many of the newest matching deliveries are taken. With Last or
	// EventIDs, Provider and Type narrow those instead.
	Provider string
	Type     string
	Since    time.Duration
	Limit    int
	// OnePerType takes the newest delivery of each provider and event type
	// that Provider, Type and Since match (check --one-per-type).
	OnePerType bool
}

// Filtered reports whether the store filters select deliveries by
// themselves; with last or event_id, provider and type narrow those instead
// (as check's --provider and --type narrow --last and --event-id).
func (d Deliveries) Filtered() bool {
	return (d.Provider != "" || d.Type != "" || d.Since > 0) && !d.Last && len(d.EventIDs) == 0 && !d.OnePerType
}

// Probe is one named side-effect probe: exactly one of SQL (with DSN), Cmd,
// HTTP, Redis, Sink or SMTP (with the calls or emails it counts, Match) is
// set.
type Probe struct {
	Name  string
	Line  int
	SQL   string
	DSN   string
	Cmd   string
	HTTP  string
	Redis string
	Sink  string
	SMTP  string
	Match []string
}

// Report is one report file a check writes.
type Report struct {
	Format string
	Path   string
	// shared: the path is $GITHUB_STEP_SUMMARY, which every check appends to.
	shared bool
}

// Error is a problem in the file, at a line (0 when it concerns the whole file).
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// Find returns the path of the config file in dir, or "" when there is none.
func Find(dir string) string {
	for _, n := range Names {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			if dir == "." {
				return n
			}
			return p
		}
	}
	return ""
}

// Lookup reads an environment variable, as os.LookupEnv does.
type Lookup func(name string) (string, bool)

// Load reads and parses the file at path, expanding ${VAR} references with env.
func Load(path string, env Lookup) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Path: path, Msg: "no such file"}
		}
		return nil, &Error{Path: path, Msg: "cannot read it: " + pathErrText(err)}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, &Error{Path: path, Msg: "cannot read it: " + pathErrText(err)}
	}
	if len(data) > MaxSize {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("larger than %d KiB: not a config file", MaxSize>>10)}
	}
	return Parse(path, data, env)
}

func pathErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse parses data as the config file named path (for messages),
// expanding ${VAR} references with env (nil: the process environment).
func Parse(path string, data []byte, env Lookup) (*File, error) {
	if env == nil {
		env = os.LookupEnv
	}
	p := &parser{path: path, env: env}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.syntaxErr(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{Path: path, Msg: "empty: give at least one check under checks:"}
	}
	if err := p.noAliases(&doc); err != nil {
		return nil, err
	}
	if err := p.noLiteralSecrets(&doc); err != nil {
		return nil, err
	}
	f, err := p.file(doc.Content[0])
	if err != nil {
		// A value read from the environment may be quoted by the error
		// (a header written without its colon, a URL that does not parse).
		var ce *Error
		if errors.As(err, &ce) {
			ce.Msg = secret.Hide(ce.Msg, p.fromEnv, RedactedMarker)
		}
		return nil, err
	}
	f.FromEnv = p.fromEnv
	return f, nil
}

// RedactedMarker replaces a value from the environment in the file's errors.
const RedactedMarker = "[REDACTED]"

type parser struct {
	path string
	env  Lookup
	// fromEnv are the values ${VAR} references were replaced with.
	fromEnv []string
}

func (p *parser) errf(n *yaml.Node, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Path: p.path, Line: line, Msg: fmt.Sprintf(format, a...)}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxErr words a YAML syntax error with its line, without the library's prefix.
func (p *parser) syntaxErr(err error) error {
	msg := strings.TrimSpace(strings.SplitN(err.Error(), "\n", 2)[0])
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Path: p.path, Line: line, Msg: "not valid YAML: " + m[2]}
	}
	return &Error{Path: p.path, Msg: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// noAliases refuses anchors and aliases: a config has no need of them, and
// following them is how a small file expands into a huge one.
func (p *parser) noAliases(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return p.errf(n, "anchors and aliases (&, *) are not supported: write the values out")
	}
	for _, c := range n.Content {
		if err := p.noAliases(c); err != nil {
			return err
		}
	}
	return nil
}

// secretShapes are the prefixes of provider secrets and tokens: a value
// holding one is a literal secret committed with the file.
var secretShapes = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(whsec_[A-Za-z0-9+/=_-]{8,}|sk_(live|test)_[A-Za-z0-9]{8,}|rk_(live|test)_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{8,}|shpss_[A-Za-z0-9]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----)`)
})

// noLiteralSecrets refuses any value shaped like a provider secret, wherever
// it is (a --secret inside a serve command too).
func (p *parser) noLiteralSecrets(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if m := secretShapes().FindString(n.Value); m != "" {
			shown := m
			if len(shown) > 8 {
				shown = shown[:8] + "…"
			}
			return p.errf(n, "a literal secret (%s) is refused: keep it in an environment variable and name the variable (secret_env: NAME, or ${NAME} in a value)", shown)
		}
	}
	for _, c := range n.Content {
		if err := p.noLiteralSecrets(c); err != nil {
			return err
		}
	}
	return nil
}

// mapping walks a mapping node's keys in order, refusing duplicates and keys
// not in known; what names the mapping in messages.
func (p *parser) mapping(n *yaml.Node, what string, known []string, each func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping of keys, got %s", what, kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, "%s: keys must be plain names", what)
		}
		if seen[k.Value] {
			return p.errf(k, "%s: %q is given twice", what, k.Value)
		}
		seen[k.Value] = true
		if known != nil && !contains(known, k.Value) {
			return p.errf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(known, ", "))
		}
		if err := each(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func (p *parser) file(root *yaml.Node) (*File, error) {
	f := &File{Path: p.path}
	var checks, keychecks *yaml.Node
	err := p.mapping(root, "the file", []string{"checks", "keychecks", "providers"}, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "keychecks":
			keychecks = v
		case "providers":
			f.Providers, err = p.providers(v)
		default:
			checks = v
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if keychecks != nil {
		if err := p.keychecks(keychecks, f); err != nil {
			return nil, err
		}
		if len(f.KeyChecks) == 0 {
			return nil, p.errf(keychecks, "keychecks: give at least one named keycheck")
		}
	}
	if checks == nil {
		if keychecks != nil {
			return f, p.distinctReports(f)
		}
		return nil, p.errf(root, "no checks: key (give at least one named check under checks:, or a keycheck under keychecks:)")
	}
	err = p.mapping(checks, "checks", nil, func(name string, k, v *yaml.Node) error {
		if !checkName.MatchString(name) {
			return p.errf(k, "check name %q: use letters, digits, '-', '_' and '.' (it is typed as 'hookreplay check NAME')", name)
		}
		c, err := p.check(name, k, v)
		if err != nil {
			return err
		}
		f.Checks = append(f.Checks, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(f.Checks) == 0 {
		return nil, p.errf(checks, "checks: give at least one named check")
	}
	if err := p.distinctKeyCheckNames(f); err != nil {
		return nil, err
	}
	return f, p.distinctReports(f)
}

var checkName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// distinctReports refuses two reports written to one path: the second
// would silently replace the first.
func (p *parser) distinctReports(f *File) error {
	seen := map[string]string{}
	for _, c := range f.Checks {
		for _, r := range c.Reports {
			if r.shared {
				continue
			}
			clean := filepath.Clean(r.Path)
			if prev, ok := seen[clean]; ok {
				return &Error{Path: p.path, Line: c.Line, Msg: fmt.Sprintf("check %s: report %s=%s is also written by %s: give each report its own file", c.Name, r.Format, r.Path, prev)}
			}
			seen[clean] = "check " + c.Name
		}
	}
	for _, c := range f.KeyChecks {
		for _, r := range c.Reports {
			if r.shared {
				continue
			}
			clean := filepath.Clean(r.Path)
			if prev, ok := seen[clean]; ok {
				return &Error{Path: p.path, Line: c.Line, Msg: fmt.Sprintf("keycheck %s: report %s=%s is also written by %s: give each report its own file", c.Name, r.Format, r.Path, prev)}
			}
			seen[clean] = "keycheck " + c.Name
		}
	}
	return nil
}

// Keys are the keys a check may have, in the order the guide documents them.
var Keys = []string{"deliveries", "to", "signed_url", "serve", "reset", "kill", "start", "probes", "phases", "secret_env", "copies", "burst", "jobs",
	"settle", "settle_max", "provider_timeout", "max_time", "seed", "insecure", "reports", "dedupe_ttl", "forget"}

func (p *parser) check(name string, key, n *yaml.Node) (*Check, error) {
	c := &Check{Name: name, Line: key.Line}
	what := "check " + name
	var to *yaml.Node
	err := p.mapping(n, what, append(Keys, "secret"), func(k string, kn, v *yaml.Node) error {
		var err error
		switch k {
		case "secret":
			return p.errf(kn, "%s: secret: a literal secret is refused: keep it in an environment variable and name it with secret_env: NAME", what)
		case "deliveries":
			return p.deliveries(what, v, &c.Deliveries)
		case "to":
			to = v
			c.To, err = p.expanded(what+": to", v)
		case "signed_url":
			c.SignedURL, err = p.expanded(what+": signed_url", v)
		case "serve":
			c.Serve, err = p.command(what+": serve", v)
		case "reset":
			c.Reset, err = p.command(what+": reset", v)
		case "kill":
			c.Kill, err = p.command(what+": kill", v)
		case "start":
			c.Start, err = p.command(what+": start", v)
		case "probes":
			c.Probes, err = p.probes(what, v)
		case "phases":
			c.Phases, err = p.phases(what, v)
		case "secret_env":
			c.SecretEnv, err = p.str(what+": secret_env", v)
			if err == nil && !envName.MatchString(c.SecretEnv) {
				err = p.errf(v, "%s: secret_env: %q is not an environment variable name (e.g. STRIPE_WEBHOOK_SECRET)", what, c.SecretEnv)
			}
		case "copies":
			c.Copies, err = p.intIn(what+": copies", v, 1, MaxCopies)
		case "burst":
			c.Burst, err = p.intIn(what+": burst", v, 2, MaxBurst)
		case "jobs":
			c.Jobs, err = p.intIn(what+": jobs", v, 1, MaxJobs)
		case "settle":
			c.Settle, err = p.duration(what+": settle", v, false)
		case "settle_max":
			c.SettleMax, err = p.duration(what+": settle_max", v, false)
		case "provider_timeout":
			c.ProviderTimeout, err = p.duration(what+": provider_timeout", v, false)
		case "max_time":
			c.MaxTime, err = p.duration(what+": max_time", v, false)
		case "seed":
			var s int64
			s, err = p.int64(what+": seed", v)
			c.Seed = &s
		case "insecure":
			c.Insecure, err = p.bool(what+": insecure", v)
		case "reports":
			c.Reports, err = p.reports(what, v)
		case "dedupe_ttl":
			c.DedupeTTL, err = p.duration(what+": dedupe_ttl", v, false)
		case "forget":
			c.Forget, err = p.command(what+": forget", v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if to == nil || c.To == "" {
		return nil, p.errf(key, "%s: to: is required: the handler's URL, e.g. to: http://127.0.0.1:3000/webhooks", what)
	}
	if _, err := address.Handler(c.To); err != nil {
		return nil, p.errf(to, "%s: to: %s: %v", what, address.Shown(c.To), err)
	}
	c.To = address.Complete(c.To)
	if len(c.Probes) == 0 {
		return nil, p.errf(key, "%s: no probes: name at least one (probes: {balance: {sql: ..., dsn: ...}}) so hookreplay can see what the handler changes", what)
	}
	d := c.Deliveries
	if len(d.From) == 0 && len(d.IDs) == 0 && !d.Last && len(d.EventIDs) == 0 && !d.Filtered() && !d.OnePerType {
		return nil, p.errf(key, "%s: which deliveries? add deliveries: {from: FILE.jsonl} (or ids, last, event_id, one_per_type, provider, type, since)", what)
	}
	if c.Settle > 0 && c.SettleMax > 0 && c.SettleMax < c.Settle {
		return nil, p.errf(key, "%s: settle_max must be at least settle", what)
	}
	if (c.Kill == "") != (c.Start == "") {
		return nil, p.errf(key, "%s: kill and start go together: crash kills the handler with one and starts it again with the other", what)
	}
	return c, nil
}

// The bounds of copies and burst: the command line's for -n and --burst
// (a config check runs exactly as its command line would; cmd's tests pin
// the two equal).
const (
	// MaxCopies bounds copies (-n).
	MaxCopies = 100_000
	// MaxBurst bounds burst (--burst): each copy is an open connection.
	MaxBurst = 1024
	// MaxJobs bounds jobs (--jobs): deliveries checked at once.
	MaxJobs = 64
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
