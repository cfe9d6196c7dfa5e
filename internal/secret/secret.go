// Package secret owns the one policy for hiding a secret in text that
// store (a Postgres URL's password in its errors) and redact (every secret
// a command knows, in what it prints and stores) share: which forms of a
// URL's password to look for, and where a secret is replaced — everywhere
// when it is long enough to be told from ordinary text, else only where it
// stands as a URL's password. Each caller keeps its own marker and adds
// what only it knows (store: libpq's password=VALUE).
package secret

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

// MinLen is the shortest secret replaced wherever it occurs: a shorter one
// (a test server's password "o") would blank out ordinary letters, so it
// is replaced only as a URL's userinfo password (":o@").
const MinLen = 4

// URLPassword returns the password of raw's userinfo in every form text may
// show it: decoded, path-escaped, query-escaped and as written in raw (nil
// when raw has none). When raw does not parse as a URL (a password holding
// '/' or '?' unescaped breaks the parse, and nothing then tells where the
// authority ends) it returns the text between the ':' after "://" and the
// last '@', as written.
func URLPassword(raw string) []string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		if pw, ok := written(raw, false); ok {
			return []string{pw}
		}
		return nil
	}
	pw, ok := u.User.Password()
	if !ok {
		return nil
	}
	out := []string{pw, url.PathEscape(pw), url.QueryEscape(pw)}
	if w, ok := written(raw, true); ok {
		out = append(out, w)
	}
	return out
}

// written is the password of raw's userinfo as written: after the first
// ':' and before the last '@' of what follows "://" (of its authority
// alone, up to the first '/', '?' or '#', when authority is set).
func written(raw string, authority bool) (string, bool) {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", false
	}
	if end := strings.IndexAny(rest, "/?#"); authority && end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", false
	}
	_, pw, ok := strings.Cut(rest[:at], ":")
	return pw, ok
}

// Hide returns text with each of secrets replaced by marker: one of MinLen
// characters or more wherever it occurs, a shorter one only where it stands
// as a URL's password (":o@" becomes ":MARKER@"). Longer secrets are
// replaced first, so a secret that contains another is replaced whole.
func Hide(text string, secrets []string, marker string) string {
	if !slices.IsSortedFunc(secrets, longerFirst) {
		secrets = slices.Clone(secrets)
		sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	}
	for _, s := range secrets {
		switch {
		case s == "":
		case len(s) >= MinLen:
			text = strings.ReplaceAll(text, s, marker)
		default:
			text = strings.ReplaceAll(text, ":"+s+"@", ":"+marker+"@")
		}
	}
	return text
}

func longerFirst(a, b string) int { return len(b) - len(a) }

// credentialVars are what a variable's name holds when its value is a
// credential (PGPASSWORD, MYSQL_PWD, API_TOKEN, STRIPE_SECRET,
// AWS_SECRET_ACCESS_KEY…), compared in upper case.
var credentialVars = []string{"PASS", "PWD", "SECRET", "TOKEN", "KEY", "AUTH", "CREDENTIAL"}

// CredentialVar reports whether an environment variable named name holds a
// credential by its name. PWD and OLDPWD are the shell's directories.
func CredentialVar(name string) bool {
	name = strings.ToUpper(name)
	if name == "PWD" || name == "OLDPWD" {
		return false
	}
	return slices.ContainsFunc(credentialVars, func(c string) bool { return strings.Contains(name, c) })
}
