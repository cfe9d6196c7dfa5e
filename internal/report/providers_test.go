package report

import (
	"bytes"
	"regexp"
	"testing"
	"time"

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
	if err := WriteProviders(&b, []Provider{ProviderOf(verify.Lookup("standard"), ""), ProviderOf(acme, "hookreplay.yaml:3"), ProviderOf(verify.Lookup("generic"), ""), ProviderOf(verify.Lookup("mailgun"), "")}); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^NAME +TITLE +SIGNATURE +TOLERANCE +EVENT ID +RETRIES +FROM$`,
		`(?m)^standard +Standard Webhooks +webhook-signature \+2 +5m +header, signed +- +built in$`,
		`(?m)^acme +Acme Pay +Acme-Signature \+1, URL +5m +body, signed +- +hookreplay.yaml:3$`,
		`(?m)^generic +generic +\(header you name\) +- +none +- +built in$`,
		// Mailgun signs inside the body: no header to name.
		`(?m)^mailgun +Mailgun +\(in the body\) +`,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("no line matching %s in\n%s", re, b.String())
		}
	}
}

// A horizon of hours and minutes reads as such: Linear's 7 h 1 min was
// "421m" in hookreplay providers' table.
func TestSpanHoursAndMinutes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		421 * time.Minute: "7h1m", 5 * time.Minute: "5m", 60 * time.Minute: "1h", 72 * time.Hour: "3d",
		27*time.Hour + 35*time.Minute + 5*time.Second: "27h35m5s", 90 * time.Minute: "1h30m", 155 * time.Second: "2m35s",
	} {
		if got := span(d); got != want {
			t.Errorf("span(%v) = %q, want %q", d, got, want)
		}
	}
}
