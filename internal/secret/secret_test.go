package secret

import (
	"slices"
	"testing"
)

func TestURLPassword(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string
	}{
		{"postgres://bob@db/app", nil},
		{"postgres://db/app", nil},
		{"not a url", nil},
		{"postgres://bob:s3cr%2Ft@db/app", []string{"s3cr/t", "s3cr%2Ft", "s3cr%2Ft", "s3cr%2Ft"}},
		{"postgres://bob:p%20w@db/app?x=1", []string{"p w", "p%20w", "p+w", "p%20w"}},
		// '@' after the authority is not part of the password as written.
		{"postgres://bob:hunter22@db/app?options=a@b", []string{"hunter22", "hunter22", "hunter22", "hunter22"}},
		// '/' unescaped in the password: the URL does not parse, and the
		// password is read up to the last '@'.
		{"postgres://bob:pa/ss@db/app", []string{"pa/ss"}},
	} {
		if got := URLPassword(c.raw); !slices.Equal(got, c.want) {
			t.Errorf("URLPassword(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestHide(t *testing.T) {
	for _, c := range []struct {
		text    string
		secrets []string
		want    string
	}{
		{"token hunter2 and hunter22", []string{"hunter2", "hunter22"}, "token X and X"},
		{"postgres://bob:o@db/app: connection refused to host", []string{"o", ""}, "postgres://bob:X@db/app: connection refused to host"},
		{"no secret", nil, "no secret"},
	} {
		if got := Hide(c.text, c.secrets, "X"); got != c.want {
			t.Errorf("Hide(%q, %q) = %q, want %q", c.text, c.secrets, got, c.want)
		}
	}
}
