package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/verify"
)

const acme = `# a declared provider next to a check
providers:
  acme:
    title: Acme Pay
    signature_header: Acme-Signature
    format: "t={timestamp},v1={signature}"
    signed: "{timestamp}.{body}"
    mac: hmac-sha256
    encoding: hex
    tolerance: 5m
    event_id: $.id
    event_type: $.type
    new_event_id: "evt_{random:24}"
    timeout: 10s
    retries: [1m, 1h, 3d]
    retry_source: https://acme.example/docs/webhooks#retries
    retry_final: the endpoint is disabled
    compare: exact
`

func TestProvidersValid(t *testing.T) {
	for _, load := range []func(string) ([]Provider, error){
		LoadProviders,
		func(path string) ([]Provider, error) {
			f, err := Load(path, ciEnv)
			if err != nil {
				return nil, err
			}
			return f.Providers, nil
		},
	} {
		path := filepath.Join(t.TempDir(), "hookreplay.yaml")
		// A check alongside: LoadProviders reads only providers:, Load both.
		body := acme + "checks:\n  pay:\n    deliveries: {last: true}\n    to: http://127.0.0.1:3000/hook\n    probes: {n: {cmd: 'echo 1'}}\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		ps, err := load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Line != 3 || ps[0].Path != path {
			t.Fatalf("providers %+v", ps)
		}
		s := ps[0].Scheme
		d, _ := verify.DeclarationOf(s)
		if s.Name() != "acme" || s.Title() != "Acme Pay" || s.Tolerance() != 5*time.Minute || s.ResponseTimeout() != 10*time.Second ||
			len(s.Retries().Retries) != 3 || s.Retries().Final != "the endpoint is disabled" || d.Compare != "exact" || s.Retries().Retries[2] != 72*time.Hour || d.Signed != "{timestamp}.{body}" || !s.IdentityInBody() {
			t.Fatalf("scheme %+v", d)
		}
	}
}

// A mistake in a declaration is refused with the line of the key it is in.
func TestProvidersErrors(t *testing.T) {
	for _, tc := range []struct{ edit, want string }{
		{`signed: "{timestamp}.{body}"=>signed: "{timestamp}.{bdy}"`, `:7: provider acme: signed: placeholder {bdy}: unknown placeholder (known: {timestamp}, {body}`},
		{`mac: hmac-sha256=>mac: hmac-md5`, `:8: provider acme: mac: unknown MAC "hmac-md5" (want hmac-sha256, hmac-sha1 or hmac-sha512)`},
		{`encoding: hex=>encoding: base32`, `:9: provider acme: encoding: unknown encoding "base32" (want hex, base64 or base64url)`},
		{`format: "t={timestamp},v1={signature}"=>format: "{timestamp}{signature}"`, `:6: provider acme: format: {signature} follows {timestamp} with nothing between them`},
		{`format: "t={timestamp},v1={signature}"=>format: "t={timestamp}"`, `:6: provider acme: format: give {signature} exactly once`},
		{`event_id: $.id=>event_id: $..id`, `:11: provider acme: event_id: "$..id" has an empty key`},
		{`tolerance: 5m=>tolerance: 5`, `:10: provider acme: tolerance: 5: give a unit, e.g. 5s`},
		{`retries: [1m, 1h, 3d]=>retries: [1h, 1m]`, `:15: provider acme: retries: offsets from the first attempt must be above 0 and increasing`},
		{`retries: [1m, 1h, 3d]=>retries: [1m, soon]`, `:15: provider acme: retries: "soon" is not a duration`},
		{`    title: Acme Pay=>    titel: Acme Pay`, `:4: provider acme: unknown key "titel" (known: title, signature_header`},
		{`  acme:=>  Acme:`, `:3: provider Acme: the name must be lower-case`},
		{`  acme:=>  stripe:`, `:3: provider stripe: stripe is a built-in provider`},
		{`    signature_header: Acme-Signature=>    signature_header: whsec_abcdefghijklmn`, `:5: a literal secret (whsec_ab…) is refused`},
	} {
		old, repl, _ := strings.Cut(tc.edit, "=>")
		path := filepath.Join(t.TempDir(), "hookreplay.yaml")
		if err := os.WriteFile(path, []byte(strings.Replace(acme, old, repl, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadProviders(path)
		if err == nil || !strings.Contains(err.Error(), path+tc.want) {
			t.Errorf("%s:\n got %v\nwant %s%s", tc.edit, err, path, tc.want)
		}
		if _, err2 := Load(path, ciEnv); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: Load says %v, LoadProviders %v", tc.edit, err2, err)
		}
	}
}

// Of two mistakes in a declaration the first in the file is reported (one
// line, as ever), so that fixing them top-down works: a bad encoding above
// an unparsable tolerance reported the tolerance, and Declare's own order
// (compare before event_id) reported the lower line. A mistake that holds
// only next to the refused key is not taken for one above it.
func TestProvidersFirstMistakeFirst(t *testing.T) {
	for _, tc := range []struct {
		edits []string
		want  string
	}{
		{[]string{`encoding: hex=>encoding: base32`, `tolerance: 5m=>tolerance: 5`}, `:9: provider acme: encoding: unknown encoding "base32"`},
		{[]string{`mac: hmac-sha256=>mac: hmac-md5`, `retries: [1m, 1h, 3d]=>retries: [1m, soon]`}, `:8: provider acme: mac: unknown MAC "hmac-md5"`},
		{[]string{`event_id: $.id=>event_id: $..id`, `compare: exact=>compare: exacto`}, `:11: provider acme: event_id: "$..id" has an empty key`},
		{[]string{`encoding: hex=>encoding: base32`, `    title: Acme Pay=>    title: "Acme\u0007Pay"`}, `:4: provider acme: title: must be printable`},
		{[]string{`encoding: hex=>encoding: base32`, `  acme:=>  Acme:`}, `:3: provider Acme: the name must be lower-case`},
		// signed's {timestamp} would be carried by the refused
		// timestamp_header below it: signed is not blamed for its absence.
		{[]string{`format: "t={timestamp},v1={signature}"=>format: "v1={signature}"`, "    mac: hmac-sha256=>    timestamp_header: [Acme-Timestamp]\n    mac: hmac-sha256"}, `:8: provider acme: timestamp_header:`},
	} {
		body := acme
		for _, e := range tc.edits {
			old, repl, _ := strings.Cut(e, "=>")
			body = strings.Replace(body, old, repl, 1)
		}
		path := filepath.Join(t.TempDir(), "hookreplay.yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadProviders(path)
		if err == nil || !strings.Contains(err.Error(), path+tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %v\nwant %s%s", tc.edits, err, path, tc.want)
		}
	}
	// --declare is one line: the first mistake is the leftmost.
	_, err := ParseDeclare(`acme: {signature_header: Acme-Signature, encoding: base32, tolerance: 5}`)
	if err == nil || !strings.Contains(err.Error(), "encoding: unknown encoding") {
		t.Errorf("--declare: %v", err)
	}
}

// A file without providers: declares nothing; a broken checks: section is
// check's business, not every command's.
func TestLoadProvidersIgnoresTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookreplay.yaml")
	os.WriteFile(path, []byte("checks:\n  x: {to: 1}\n"), 0o600)
	if ps, err := LoadProviders(path); err != nil || len(ps) != 0 {
		t.Fatalf("%v %v", ps, err)
	}
}

func TestParseDeclare(t *testing.T) {
	ps, err := ParseDeclare(`acme: {signature_header: Acme-Signature, format: "sha256={signature}", event_id: "header:Acme-Event-Id"}`)
	if err != nil || len(ps) != 1 || ps[0].Scheme.Name() != "acme" || ps[0].Path != "--declare" {
		t.Fatalf("%+v %v", ps, err)
	}
	for in, want := range map[string]string{
		`acme: {signature_header: Acme-Signature, mac: sha3}`: `--declare: provider acme: mac: unknown MAC "sha3"`,
		`acme: {signature_header: Acme-Signature`:             `--declare:1: not valid YAML`,
		`acme`: `--declare: providers: want a mapping of keys, got "acme"`,
		``:     `--declare: empty`,
	} {
		if _, err := ParseDeclare(in); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}

// FuzzParseDeclare: whatever a --declare value or a providers: section
// holds, the result is declarations or one line naming the place, never a
// panic.
func FuzzParseDeclare(f *testing.F) {
	f.Add(`acme: {signature_header: Acme-Signature, format: "t={timestamp},v1={signature}", signed: "{timestamp}.{body}", tolerance: 5m, event_id: $.id}`)
	f.Add("acme: {signature_header: X, signed: \"{bo\ndy}\"}")
	f.Add(`acme: {signature_header: X, format: "{signature}{timestamp}", retries: [1m, 1d, 2d], detect: [header:X=1]}`)
	f.Add(`a: &x [*x, *x]`)
	f.Add(`acme: {signature_header: X, signed: "{bo\ndy}"}`)
	f.Add("\"a\\nb\": {signature_header: X}")
	f.Fuzz(func(t *testing.T, value string) {
		ps, err := ParseDeclare(value)
		if err != nil {
			assertOneLineError(t, err)
			return
		}
		for _, p := range ps {
			if p.Scheme == nil || p.Scheme.Name() == "" {
				t.Fatalf("declaration without a scheme: %+v", p)
			}
		}
		if _, err := LoadProviders("/nonexistent/hookreplay.yaml"); err == nil {
			t.Fatal("a missing file loaded")
		}
	})
}
