package report

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// The providers table names each scheme's signature header and counts the
// others, so that it stays narrow; a declared scheme shows where it was
// declared and its title escaped.
func TestWriteProviders(t *testing.T) {
	acme, err := verify.Declare(verify.Declaration{Name: "acme", Title: "Acme Pay", SignatureHeader: "Acme-Signature", TimestampHeader: "Acme-Timestamp",
		Signed: "{timestamp}.{url}.{body}", Tolerance: 300e9, EventID: "$.id"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteProviders(&b, []Provider{ProviderOf(verify.Lookup("standard"), ""), ProviderOf(acme, "hookreplay.yaml:3"), ProviderOf(verify.Lookup("generic"), "")}); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^NAME +TITLE +SIGNATURE +TOLERANCE +EVENT ID +RETRIES +FROM$`,
		`(?m)^standard +Standard Webhooks +webhook-signature \+2 +5m +header, signed +- +built in$`,
		`(?m)^acme +Acme Pay +Acme-Signature \+1, URL +5m +body, signed +- +hookreplay.yaml:3$`,
		`(?m)^generic +generic +\(header you name\) +- +none +- +built in$`,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("no line matching %s in\n%s", re, b.String())
		}
	}
}
