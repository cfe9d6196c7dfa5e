package redact

import (
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hookreplay/hookreplay/internal/secret"
)

// credentialParams are query parameter names whose values are credentials
// (compared in lower case, '-' read as '_').
var credentialParams = []string{"token", "access_token", "api_key", "apikey", "key", "secret", "password", "passwd",
	"pass", "pwd", "auth", "signature", "sig", "client_secret"}

// Secrets are the secret values one command knows (signing secrets, the
// value of --secret-env, DSN and URL passwords, credential query
// parameters). String replaces them wherever they occur in text that is
// printed or stored, including inside commands and URLs the user wrote.
// The zero value knows no secret. It is not safe for concurrent Add.
type Secrets struct {
	// vals are replaced as secret.Hide says, longest first: those shorter
	// than secret.MinLen are URL passwords (AddURL), replaced only where
	// they stand as the password of a URL's userinfo (":o@"), so a URL is
	// never printed with one while the letter o elsewhere stays.
	vals []string
}

// Add learns secret values; empty and very short values are ignored.
func (s *Secrets) Add(vals ...string) {
	for _, v := range vals {
		if len(v) >= secret.MinLen {
			s.add(v)
		}
	}
}

func (s *Secrets) add(v string) {
	if v != "" && !slices.Contains(s.vals, v) {
		s.vals = append(s.vals, v)
		// Longest first, so a secret that contains another is replaced whole.
		sort.SliceStable(s.vals, func(i, j int) bool { return len(s.vals[i]) > len(s.vals[j]) })
	}
}

// AddURL learns the secrets inside a URL or URL-shaped DSN
// (postgres://user:PASSWORD@host/db?sslpassword=...): the userinfo password
// and the values of credential-like query parameters, as written and
// decoded. Anything that does not parse as a URL with a scheme is ignored.
func (s *Secrets) AddURL(raw string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" {
		return
	}
	// Decoded, escaped and as written, short ones too (secret.Hide
	// replaces those only as the URL's password).
	for _, v := range secret.URLPassword(raw) {
		s.add(v)
	}
	for k, vs := range u.Query() {
		if !credentialParam(k) {
			continue
		}
		for _, v := range vs {
			s.Add(v, url.QueryEscape(v))
		}
	}
}

// assignment is a shell variable assignment (NAME=VALUE, the value bare
// or quoted) where a command or a word of it begins.
var assignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=('[^']*'|"[^"]*"|[^\s;&|)'"]+)`)
})

// AddCommand learns the secrets a shell command carries itself: the values
// of credential-named variables it sets (PGPASSWORD=… psql …, the most
// common way to give a reset command or a probe its database's password)
// and the passwords of the URLs in it. A run's options keep the commands
// it ran, and a team store shows them to everyone who may read it.
func (s *Secrets) AddCommand(cmd string) {
	for _, m := range assignment().FindAllStringSubmatch(cmd, -1) {
		if !secret.CredentialVar(m[1]) {
			continue
		}
		v := m[2]
		if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') {
			v = v[1 : len(v)-1]
		}
		s.Add(v)
	}
	for _, w := range strings.Fields(cmd) {
		if strings.Contains(w, "://") {
			s.AddURL(strings.Trim(w, `'"`))
		}
	}
}

// Empty reports whether no secret is known.
func (s *Secrets) Empty() bool { return s == nil || len(s.vals) == 0 }

// String returns text with every known secret replaced by Marker.
func (s *Secrets) String(text string) string {
	if s == nil {
		return text
	}
	return secret.Hide(text, s.vals, Marker)
}

// Strings applies String to each element of a copy of texts.
func (s *Secrets) Strings(texts []string) []string {
	if texts == nil {
		return nil
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = s.String(t)
	}
	return out
}

// Error returns err with its message redacted; errors.Is and errors.As still
// see the original (whose own message is never printed through it).
func (s *Secrets) Error(err error) error {
	if err == nil || s.Empty() {
		return err
	}
	msg := s.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func credentialParam(k string) bool {
	k = strings.ReplaceAll(strings.ToLower(k), "-", "_")
	return slices.Contains(credentialParams, k) || strings.HasSuffix(k, "_token") || strings.HasSuffix(k, "_key") ||
		strings.HasSuffix(k, "_secret") || strings.HasSuffix(k, "password")
}
