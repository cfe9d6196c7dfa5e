package redact

import (
	"errors"
	"strings"
	"testing"
)

func TestSecretsFindEveryForm(t *testing.T) {
	var s Secrets
	s.Add("whsec_abcdef", "abc") // "abc" is too short to be treated as a secret
	s.AddURL("postgres://app:p%40ss%20w0rd@db.example:5432/app?sslmode=disable")
	s.AddURL("http://probe:hunter22@127.0.0.1:9/count?token=tok_123456&page=2&api-key=k_987654")
	s.AddURL("not a url")
	for _, c := range []struct{ in, want string }{
		{"echo whsec_abcdef", "echo [REDACTED]"},
		{"abc is not a secret", "abc is not a secret"},
		{"psql postgres://app:p%40ss%20w0rd@db", "psql postgres://app:[REDACTED]@db"},
		{"PGPASSWORD='p@ss w0rd' psql", "PGPASSWORD='[REDACTED]' psql"},
		{"GET http://probe:hunter22@127.0.0.1:9/count?token=tok_123456&page=2&api-key=k_987654",
			"GET http://probe:[REDACTED]@127.0.0.1:9/count?token=[REDACTED]&page=2&api-key=[REDACTED]"},
	} {
		if got := s.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	base := errors.New("exit 3: whsec_abcdef refused")
	err := s.Error(base)
	if strings.Contains(err.Error(), "whsec_abcdef") || !errors.Is(err, base) {
		t.Errorf("Error: %v (Is base: %v)", err, errors.Is(err, base))
	}
	var none *Secrets
	if none.String("x") != "x" || !none.Empty() {
		t.Error("a nil Secrets must redact nothing")
	}
}

// A one-letter DSN password is never printed as the URL's password, and
// the letter elsewhere stays (it used to become the marker everywhere in
// the store's messages, and was not hidden in a printed URL here).
func TestSecretsShortURLPassword(t *testing.T) {
	var s Secrets
	s.AddURL("postgres://bob:o@db.example/app")
	for _, c := range []struct{ in, want string }{
		{"open postgres://bob:o@db.example/app: connection refused", "open postgres://bob:[REDACTED]@db.example/app: connection refused"},
		{"cannot connect to host", "cannot connect to host"},
	} {
		if got := s.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if err := s.Error(errors.New("dial postgres://bob:o@db.example/app")); strings.Contains(err.Error(), ":o@") {
		t.Errorf("Error kept the password: %v", err)
	}
}

// Credentials a command carries itself are learnt from it: the value of a
// credential-named variable it sets and a URL's password, quoted or not;
// other assignments and words stay.
func TestSecretsAddCommand(t *testing.T) {
	var s Secrets
	for _, c := range []string{
		"PGPASSWORD=Reset-Pw-888 psql -h 127.0.0.1 app -c 'TRUNCATE credits'",
		`cd /app && API_TOKEN="tok en 99x" STAGE=staging ./count-emails`,
		"env MYSQL_PWD='my pw 77' mysql -e 'select 1'; AWS_SECRET_ACCESS_KEY=aws/Key+55 ./reset",
		"psql 'postgres://app:UrlPw-4455@db/app' -c 'select 1'",
		"echo PATH=/usr/bin KEY= done",
	} {
		s.AddCommand(c)
	}
	for _, c := range []struct{ in, want string }{
		{"PGPASSWORD=Reset-Pw-888 psql", "PGPASSWORD=[REDACTED] psql"},
		{`API_TOKEN="tok en 99x" STAGE=staging`, `API_TOKEN="[REDACTED]" STAGE=staging`},
		{"MYSQL_PWD='my pw 77' AWS_SECRET_ACCESS_KEY=aws/Key+55", "MYSQL_PWD='[REDACTED]' AWS_SECRET_ACCESS_KEY=[REDACTED]"},
		{"postgres://app:UrlPw-4455@db/app", "postgres://app:[REDACTED]@db/app"},
		{"staging /usr/bin done", "staging /usr/bin done"},
	} {
		if got := s.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
