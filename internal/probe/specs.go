package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/address"
)

// Specs are the probes to build, as a user names them: SQL queries against
// one database, shell commands, URLs to GET, and an address to serve a sink
// on ("" for none). Each may start with a name, "balance=SELECT …" (see
// SplitName): reports then call the probe by that name.
type Specs struct {
	SQL  []string
	DSN  string
	Cmd  []string
	HTTP []string
	Sink string
	// SinkMatch, when set, are the calls the sink counts ("POST
	// /repos/*/issues/*/comments", see ParseCallPattern); others are
	// recorded but not counted.
	SinkMatch []string
	// Redis are Redis reads ("redis://127.0.0.1:6379/0 LLEN queue:default",
	// see ParseRedisSpec).
	Redis []string
	// SMTP is an address to serve the SMTP sink on ("" for none); its
	// probe is called "emails" unless named. SMTPMatch, when set, are the
	// messages it counts ("to:*@example.com", see ParseMailPattern).
	SMTP      string
	SMTPMatch []string
	// Redact, when set, hides secrets in what Labels returns and in every
	// probe's Name and errors (a password inside a command or URL).
	Redact func(string) string
}

// Empty reports whether Specs names no probe at all.
func (s Specs) Empty() bool {
	return len(s.SQL) == 0 && len(s.Cmd) == 0 && len(s.HTTP) == 0 && len(s.Redis) == 0 && s.Sink == "" && s.SMTP == ""
}

// Labels describes every probe as it was given, after the name reports
// call it by ("balance = sql: QUERY", "cmd1 = cmd: CMD", "http: URL",
// "redis: URL COMMAND", "sink: ADDR", "smtp: ADDR"), in the order FromSpecs
// builds them: what a run records as its options, and the report's header
// shows once.
func (s Specs) Labels() []string {
	var out []string
	label := func(kind string, i int, spec string) string {
		name, rest := autoName(kind, i, spec)
		return name + " = " + kind + ": " + rest
	}
	for i, q := range s.SQL {
		out = append(out, label("sql", i, q))
	}
	for i, c := range s.Cmd {
		out = append(out, label("cmd", i, c))
	}
	for i, h := range s.HTTP {
		out = append(out, label("http", i, h))
	}
	for i, r := range s.Redis {
		out = append(out, label("redis", i, r))
	}
	if s.Sink != "" {
		name, rest := SplitName(s.Sink)
		if name == "" {
			out = append(out, "sink: "+rest)
		} else {
			out = append(out, name+" = sink: "+rest)
		}
	}
	if s.SMTP != "" {
		name, addr := SplitName(s.SMTP)
		if name == "" {
			name = DefaultSMTPName
		}
		out = append(out, name+" = smtp: "+addr)
	}
	if s.Redact != nil {
		for i := range out {
			out[i] = s.Redact(out[i])
		}
	}
	return out
}

// SpecKind names the kind of probe a SpecError is about.
type SpecKind string

// The kinds of probe spec that can fail to build.
const (
	SpecSQL  SpecKind = "sql"
	SpecCmd  SpecKind = "cmd"
	SpecHTTP SpecKind = "http"
	SpecSink SpecKind = "sink"
	// SpecSinkMatch is a --sink-match pattern that cannot be read.
	SpecSinkMatch SpecKind = "sink-match"
	SpecRedis     SpecKind = "redis"
	SpecSMTP      SpecKind = "smtp"
	// SpecSMTPMatch is an --smtp-match pattern that cannot be read.
	SpecSMTPMatch SpecKind = "smtp-match"
)

// DefaultSMTPName is what reports call the SMTP sink's probe when it is
// not named.
const DefaultSMTPName = "emails"

// SpecError is a probe that could not be built from its spec: a database
// that cannot be opened, a sink address that cannot be listened on. Spec is
// the query or address as given.
type SpecError struct {
	Kind SpecKind
	Spec string
	Err  error
}

func (e *SpecError) Error() string { return string(e.Kind) + " probe " + e.Spec + ": " + e.Err.Error() }

// Redacted wraps p so that its name and the text of its errors pass through
// redact: a command or URL may hold a password, a failing command may print
// one. Values are the handler's effects and are kept.
func Redacted(p Probe, redact func(string) string) Probe {
	return &redactedProbe{p: p, redact: redact}
}

type redactedProbe struct {
	p      Probe
	redact func(string) string
}

func (r *redactedProbe) Name() string { return r.redact(r.p.Name()) }

// Unwrap returns the probe whose name and errors are redacted.
func (r *redactedProbe) Unwrap() Probe { return r.p }

func (r *redactedProbe) Read(ctx context.Context) (Value, error) {
	v, err := r.p.Read(ctx)
	if err == nil {
		return v, nil
	}
	inner, name := err, r.Name()
	var pe *Error
	if errors.As(err, &pe) {
		// The probe's error names it as it should be named (in full, for
		// an automatic name): keep that name, redacted.
		inner, name = pe.Err, r.redact(pe.Probe)
	}
	return v, &Error{Probe: name, Err: &redactedErr{msg: r.redact(inner.Error()), err: inner}}
}

// Close closes the wrapped probe when it holds resources (the sink is
// stopped by its Set, as Close does).
func (r *redactedProbe) Close() error {
	if isSetOwned(r.p) {
		return nil
	}
	if c, ok := r.p.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

type redactedErr struct {
	msg string
	err error
}

func (e *redactedErr) Error() string { return e.msg }
func (e *redactedErr) Unwrap() error { return e.err }

// Unwrap returns the underlying error.
func (e *SpecError) Unwrap() error { return e.Err }

// Set is the probes built from Specs, and the sinks when they were
// started (their probes are among Probes).
type Set struct {
	Probes []Probe
	Sink   *Sink
	SMTP   *SMTPSink
}

// Close closes every probe and stops the sinks.
func (s *Set) Close() error {
	err := Close(s.Probes)
	if s.Sink != nil {
		err = errors.Join(err, s.Sink.Close())
	}
	if s.SMTP != nil {
		err = errors.Join(err, s.SMTP.Close())
	}
	return err
}

// Check finds the problems of s that building would meet without opening
// anything: an empty command, an HTTP probe that is not an address (read as
// --to reads one: a URL, a bare port or host:port with a path), a
// --sink-match pattern that cannot be read. It returns a *SpecError.
func (s Specs) Check() error {
	for _, spec := range s.SQL {
		if _, q := SplitName(spec); checkPlaceholders(q) != nil {
			return &SpecError{Kind: SpecSQL, Spec: q, Err: checkPlaceholders(q)}
		}
	}
	for _, spec := range s.Cmd {
		_, c := SplitName(spec)
		if strings.TrimSpace(c) == "" {
			return &SpecError{Kind: SpecCmd, Spec: c, Err: errors.New("empty command")}
		}
		if err := checkPlaceholders(c); err != nil {
			return &SpecError{Kind: SpecCmd, Spec: c, Err: err}
		}
	}
	for _, spec := range s.HTTP {
		_, h := SplitName(spec)
		if _, err := address.Handler(h); err != nil {
			return &SpecError{Kind: SpecHTTP, Spec: h, Err: err}
		}
		if err := checkPlaceholders(h); err != nil {
			return &SpecError{Kind: SpecHTTP, Spec: h, Err: err}
		}
	}
	for _, m := range s.SinkMatch {
		if _, err := ParseCallPattern(m); err != nil {
			return &SpecError{Kind: SpecSinkMatch, Spec: m, Err: err}
		}
	}
	for _, spec := range s.Redis {
		_, r := SplitName(spec)
		if _, err := ParseRedisSpec(r); err != nil {
			return &SpecError{Kind: SpecRedis, Spec: r, Err: err}
		}
		if scoped(r) {
			return &SpecError{Kind: SpecRedis, Spec: r, Err: errors.New("a Redis probe cannot name an event's values ({{…}}); scope a --probe-sql, --probe-cmd or --probe-http instead")}
		}
	}
	for _, m := range s.SMTPMatch {
		if _, err := ParseMailPattern(m); err != nil {
			return &SpecError{Kind: SpecSMTPMatch, Spec: m, Err: err}
		}
	}
	return nil
}

// FromSpecs builds the probes in the order Labels lists them: SQL queries,
// commands, HTTP URLs, Redis reads, the sink's call count, then the SMTP
// sink's message count. The sink serves until ctx
// is cancelled or the Set is closed. On error (a *SpecError) nothing is left
// open.
func FromSpecs(ctx context.Context, s Specs) (*Set, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	set := &Set{}
	for i, spec := range s.SQL {
		name, q := autoName("sql", i, spec)
		p, err := NewSQL(s.DSN, q)
		if err != nil {
			_ = set.Close()
			return nil, &SpecError{Kind: SpecSQL, Spec: q, Err: err}
		}
		set.Probes = append(set.Probes, named(p, name, spec))
	}
	for i, spec := range s.Cmd {
		name, c := autoName("cmd", i, spec)
		set.Probes = append(set.Probes, named(NewCmd(c), name, spec))
	}
	for i, spec := range s.HTTP {
		name, h := autoName("http", i, spec)
		set.Probes = append(set.Probes, named(NewHTTP(address.Complete(h)), name, spec))
	}
	for i, spec := range s.Redis {
		name, r := autoName("redis", i, spec)
		rs, err := ParseRedisSpec(r)
		var p *Redis
		if err == nil {
			p, err = NewRedis(rs)
		}
		if err != nil {
			_ = set.Close()
			return nil, &SpecError{Kind: SpecRedis, Spec: r, Err: err}
		}
		set.Probes = append(set.Probes, named(p, name, spec))
	}
	var match []CallPattern
	for _, m := range s.SinkMatch {
		p, err := ParseCallPattern(m)
		if err != nil {
			_ = set.Close()
			return nil, &SpecError{Kind: SpecSinkMatch, Spec: m, Err: err}
		}
		match = append(match, p)
	}
	if s.Sink != "" {
		name, addr := SplitName(s.Sink)
		sink, err := StartSink(ctx, addr)
		if err != nil {
			_ = set.Close()
			return nil, &SpecError{Kind: SpecSink, Spec: addr, Err: err}
		}
		sink.SetMatch(match)
		set.Sink = sink
		set.Probes = append(set.Probes, Named(sink.Probe(), name))
	}
	if s.SMTP != "" {
		var mm []MailPattern
		for _, m := range s.SMTPMatch {
			p, _ := ParseMailPattern(m) // Check read them all
			mm = append(mm, p)
		}
		name, addr := SplitName(s.SMTP)
		if name == "" {
			name = DefaultSMTPName
		}
		sink, err := StartSMTPSink(ctx, addr)
		if err != nil {
			_ = set.Close()
			return nil, &SpecError{Kind: SpecSMTP, Spec: addr, Err: err}
		}
		sink.SetMatch(mm)
		set.SMTP = sink
		set.Probes = append(set.Probes, Named(sink.Probe(), name))
	}
	if s.Redact != nil {
		for i, p := range set.Probes {
			set.Probes[i] = Redacted(p, s.Redact)
		}
	}
	return set, nil
}

// SplitName splits a probe spec "NAME=PROBE" into its name and the probe.
// The name is a lower-case word — a letter, then letters, digits, _ or - —
// directly followed by "=" at the very start of the spec. Anything else is
// the probe itself, unnamed: SQL ("SELECT … WHERE a=1": the first word is
// followed by a space), a URL ("http:" is not a word), a command that sets
// an upper-case variable ("PGPASSWORD=x psql …"). A command that starts by
// setting a lower-case variable needs a name in front ("n=x=1 ./count") or
// env ("env x=1 ./count").
func SplitName(spec string) (name, probe string) {
	i := strings.IndexByte(spec, '=')
	if i <= 0 || !isName(spec[:i]) {
		return "", spec
	}
	return spec[:i], spec[i+1:]
}

func isName(s string) bool {
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return s != ""
}

// Unwrap returns the probe p names or redacts (p itself when it is
// neither).
func Unwrap(p Probe) Probe {
	for {
		u, ok := p.(interface{ Unwrap() Probe })
		if !ok {
			return p
		}
		p = u.Unwrap()
	}
}

// IsSMTP reports whether p (named or redacted) counts the SMTP sink's
// messages.
func IsSMTP(p Probe) bool {
	_, ok := Unwrap(p).(*smtpProbe)
	return ok
}

// IsSink reports whether p (named or redacted) counts the calls made to
// the HTTP sink, the stand-in downstream API.
func IsSink(p Probe) bool {
	_, ok := Unwrap(p).(*sinkProbe)
	return ok
}

// Named gives p the name reports call it by; "" keeps p's own name
// ("sql: SELECT …").
func Named(p Probe, name string) Probe {
	if name == "" {
		return p
	}
	return &namedProbe{p: p, name: name}
}

// autoName splits spec, the i-th probe of its kind, into the name reports
// call it by and the probe: the name given, or an automatic short one
// (sql1, cmd2, http1, redis1), so that a long query is shown once, in the
// report's header, and every line names it in a word.
func autoName(kind string, i int, spec string) (name, probe string) {
	name, probe = SplitName(spec)
	if name == "" {
		name = fmt.Sprintf("%s%d", kind, i+1)
	}
	return name, probe
}

// named is Named for a probe built from spec: when spec gave no name (its
// name is automatic), the probe's errors keep naming it in full ("probe sql:
// SELECT …: no such table"), which the user reads once and must recognise.
func named(p Probe, name, spec string) Probe {
	if given, _ := SplitName(spec); given == "" {
		return &namedProbe{p: p, name: name, auto: true}
	}
	return Named(p, name)
}

type namedProbe struct {
	p    Probe
	name string
	// auto: the name is automatic; errors name the probe in full.
	auto bool
}

func (n *namedProbe) Name() string { return n.name }

// Unwrap returns the probe that was named.
func (n *namedProbe) Unwrap() Probe { return n.p }

func (n *namedProbe) Read(ctx context.Context) (Value, error) {
	v, err := n.p.Read(ctx)
	if err != nil && n.auto {
		return v, probeErr(n.p.Name(), err)
	}
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return v, &Error{Probe: n.name, Err: err}
	}
	return v, nil
}

// Close closes the wrapped probe when it holds resources (the sink is
// stopped by its Set).
func (n *namedProbe) Close() error {
	if isSetOwned(n.p) {
		return nil
	}
	if c, ok := n.p.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
