package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

type verifyOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	ID        int64 // 0: the request comes from stdin and --header
	Provider  string
	Secret    string // from --secret or --secret-env; never stored or printed
	SecretEnv string
	Tolerance time.Duration
	URL       string
	Headers   message.Headers // request headers for a stdin request
	SigHeader string          // generic: the header carrying the signature
	Algo      string
	Encoding  string
	Prefix    string
	JSON      bool
	jsonOut   *jsonOutput // --json FIELDS, --jq, --template
	At        time.Time   // judge the timestamp at this instant instead
}

func newVerifyCmd(f *factory, runF func(*verifyOptions) error) *cobra.Command {
	o := &verifyOptions{IO: f.IO, Store: f.ExistingStore}
	var headers []string
	var at string
	cmd := &cobra.Command{
		Use:   "verify [ID]",
		Short: "Check a delivery's provider signature",
		Long: `Check that a delivery is authentic: its signature header matches the body
signed with your secret, and a timestamped signature (` + providers(timestamped) + `)
is within the tolerance.

With an ID, the stored delivery is checked and its timestamp is judged
against the moment capture received it, not the wall clock, so a delivery
captured last week still verifies. Without an ID, the request body is read
from stdin and its headers come from --header 'Name: value' (the timestamp is
judged against now).

Providers: ` + providers(anyProvider) + `, and those declared in
hookreplay.yaml's providers: or with --declare (hookreplay providers lists
them; docs/providers.md).
The provider is detected from the headers unless --provider is given.
` + signsURLSentence() + ` it was configured with: pass it with --url.
The generic provider is an HMAC of the raw body in a header you name:
--provider generic --header X-Signature [--algo sha256|sha1|sha512]
[--encoding hex|base64] [--prefix sha256=].

A mismatch says why it may have happened: when the body verifies once a
usual re-encoding is undone (compacted or re-indented JSON, a newline added or
dropped, CRLF, escaped <>&), that re-encoding; otherwise another secret, a
re-encoded body or a proxy that rewrote the request.

Exit status: 0 valid, 1 invalid (the reason is printed), 2 usage error or
nothing to verify (a request with no known provider's signature, or Meta's
GET verification request, which Meta never signs).`,
		Example: `  # a stored delivery (see 'hookreplay list')
  hookreplay verify 42 --secret-env STRIPE_WEBHOOK_SECRET
  # → valid (stripe, v1, signed 1s before capture)

  # a request from a script
  hookreplay verify --provider github --secret "$GH_SECRET" \
    --header "X-Hub-Signature-256: sha256=757107ea..." < body.json

  # a generic HMAC-SHA256 hex signature
  hookreplay verify 7 --provider generic --header X-Signature --secret s3cr3t`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := verifyArgs(cmd, o, args, headers, at); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return verifyRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Provider, "provider", "", "provider scheme (default: detected from the headers)")
	cmd.Flags().StringVar(&o.Secret, "secret", "", "signing secret (prefer --secret-env: arguments are visible to other users)")
	cmd.Flags().StringVar(&o.SecretEnv, "secret-env", "", "name of the environment variable holding the signing secret")
	cmd.Flags().DurationVar(&o.Tolerance, "tolerance", 0, "allowed signature age, e.g. 5m (default: the provider's, "+tolerancesHelp()+")")
	cmd.Flags().StringVar(&o.URL, "url", "", "full URL the provider was configured with ("+signsURLSentence()+")")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "request header 'Name: value' for a stdin request (repeatable); a bare NAME is the generic provider's signature header")
	cmd.Flags().StringVar(&o.Algo, "algo", "", "generic provider: HMAC hash sha256 (default), sha1 or sha512")
	cmd.Flags().StringVar(&o.Encoding, "encoding", "", "generic provider: signature encoding hex (default) or base64")
	cmd.Flags().StringVar(&o.Prefix, "prefix", "", "generic provider: text before the signature, e.g. sha256=")
	cmd.Flags().StringVar(&at, "at", "", "judge the signature timestamp at this instant (unix seconds or RFC 3339) instead of the capture time or now")
	o.jsonOut = addJSONFlags(cmd.Flags(), &o.JSON, "the result").knownFields(verifyJSON{})
	return cmd
}

// verifyArgs reads verify's argument and flags into o: the delivery ID or
// the stdin request's --header lines, the secret, the provider, --at and
// --tolerance.
func verifyArgs(cmd *cobra.Command, o *verifyOptions, args, headers []string, at string) error {
	if len(args) == 1 {
		id, err := parseID("delivery", args[0])
		if err != nil {
			return err
		}
		o.ID = id
	}
	if err := parseSigHeaders(headers, &o.Headers, &o.SigHeader); err != nil {
		return err
	}
	if o.ID != 0 && len(o.Headers) > 0 {
		return usageErr("--header 'Name: value' describes a request on stdin; it cannot be combined with a delivery ID")
	}
	secret, err := signingSecret(o.Secret, o.SecretEnv, o.Provider, false)
	if err != nil {
		return err
	}
	o.Secret = secret
	if o.Provider != "" && !verify.KnownProvider(o.Provider) {
		return usageErr("unknown provider %q (known: %s)", o.Provider, strings.Join(verify.Names(), ", "))
	}
	if o.Provider != "" {
		if err := genericOnly(strings.ToLower(o.Provider), o.Algo, o.Encoding, o.Prefix); err != nil {
			return err
		}
	}
	if at != "" {
		t, err := parseSignTime("--at", at)
		if err != nil {
			return err
		}
		o.At = t
	}
	if err := durationFlagIn("--tolerance", o.Tolerance, 0, maxTolerance); err != nil {
		return err
	}
	if o.Tolerance == 0 && cmd.Flags().Changed("tolerance") {
		// Zero is how the verify package spells "the provider's
		// default": passed on, 0s would silently mean 300s.
		return usageErr("--tolerance 0s would accept no signature age at all; give an age such as 1s, or leave it out for the provider's default")
	}
	return nil
}

// parseSigHeaders splits --header values into request header lines
// ("Name: value") and at most one bare NAME, the generic signature header.
func parseSigHeaders(vals []string, headers *message.Headers, sigHeader *string) error {
	for _, v := range vals {
		if !strings.Contains(v, ":") {
			name := strings.TrimSpace(v)
			if name == "" || strings.ContainsAny(name, " \t") {
				return usageErr("--header %q is neither 'Name: value' nor a header name", v)
			}
			if *sigHeader != "" {
				return usageErr("give the generic signature header name once (got %s and %s)", *sigHeader, name)
			}
			*sigHeader = name
			continue
		}
		h, err := message.ParseHeaderLine(v)
		if err != nil {
			return usageErr("--header: %v", err)
		}
		*headers = append(*headers, h)
	}
	return nil
}

// signingSecret resolves --secret / --secret-env. The secret is only ever
// held in memory: never stored, logged or printed.
// provider names the scheme when known; signs says the command signs (send,
// sign), so that a key-pair scheme is asked for a private key rather than
// the public key that verify takes.
func signingSecret(secret, env, provider string, signs bool) (string, error) {
	secret, err := secretFlags(secret, env)
	if err != nil {
		return "", err
	}
	if _, keyPair := verify.Lookup(provider).(verify.KeyPair); secret == "" && keyPair {
		// Not a shared secret: say which key.
		if signs {
			return "", usageErr("%s signs with a private key: give --secret-env NAME (or --secret KEY) with the private key of a test key pair, and configure the handler with its public key (docs/signatures.md, \"Key-pair schemes\")", provider)
		}
		return "", usageErr("a key is required: --secret-env NAME (or --secret KEY) with %s's public key, which verifies, or the private key of a test key pair (docs/signatures.md, \"Key-pair schemes\")", provider)
	}
	if secret == "" {
		return "", usageErr("a signing secret is required: --secret S or --secret-env NAME")
	}
	return secret, nil
}

// readStdinBody reads a request body from in, refusing an interactive terminal.
func readStdinBody(in io.Reader, what string) ([]byte, error) {
	if f, ok := in.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return nil, usageErr("%s: pipe the request body on stdin (e.g. < body.json)", what)
	}
	return readCapped(in, "stdin")
}

type verifyJSON struct {
	DeliveryID int64   `json:"delivery_id,omitempty"`
	Valid      bool    `json:"valid"`
	Provider   string  `json:"provider"`
	Scheme     string  `json:"scheme,omitempty"`
	SignedAt   string  `json:"signed_at,omitempty"`
	CheckedAt  string  `json:"checked_at,omitempty"`
	AgeSeconds float64 `json:"age_seconds,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	Why        string  `json:"why,omitempty"` // why a signature mismatch may have happened
	Result     string  `json:"result"`
}

func verifyRun(ctx context.Context, o *verifyOptions) error {
	opt := verify.Options{Tolerance: o.Tolerance, URL: o.URL, Header: o.SigHeader, Algo: o.Algo, Encoding: o.Encoding, Prefix: o.Prefix}
	var req *message.Request
	provider := o.Provider
	ref := ""
	if o.ID != 0 {
		st, err := o.Store()
		if err != nil {
			return err
		}
		defer st.Close()
		d, err := getDelivery(ctx, st, o.ID)
		if err != nil {
			return err
		}
		req, opt.Now, ref = d.Request(), d.ReceivedAt, "capture"
		if provider == "" {
			provider = d.Provider
			if !verify.Recognised(provider) && o.SigHeader == "" {
				return usageErr("delivery %d has no known provider's signature headers; pass --provider (or --provider generic --header NAME)", o.ID)
			}
		}
	} else {
		body, err := readStdinBody(o.IO.In, "verify without a delivery ID")
		if err != nil {
			return err
		}
		if req, err = verify.NewRequest(body, o.Headers, o.URL); err != nil {
			return usageErr("--url: %v", err)
		}
		opt.Now = time.Now()
	}
	if !o.At.IsZero() {
		opt.Now, ref = o.At, ""
	}
	if provider == "" && o.SigHeader != "" {
		provider = verify.Generic
	}
	s, err := verify.Resolve(req, provider, opt)
	if err != nil {
		return verifyErr(err)
	}
	r, err := verify.VerifyWith(s, req, o.Secret, opt)
	if errors.Is(err, verify.ErrUnsigned) {
		// Nothing to judge, as for a delivery no scheme signs: exit 2.
		what := "the request"
		if o.ID != 0 {
			what = fmt.Sprintf("delivery %d", o.ID)
		}
		return usageErr("%s is %v", what, err)
	}
	if err != nil {
		return verifyErr(err)
	}
	if !r.Valid && o.URL == "" && s.SignsURL() && strings.HasPrefix(r.Reason, "signature mismatch (") {
		// The scheme tried the request's own URL; the flag gives the right one.
		r.Reason = fmt.Sprintf("signature mismatch (%s signs the full URL; pass --url with the URL configured in %s)", s.Title(), s.Title())
	}
	if !r.Valid && r.Reason == "signature mismatch" && strings.TrimSpace(o.Secret) != o.Secret {
		// A secret pasted or read from a file often carries a newline.
		r.Reason += " (the secret has leading or trailing whitespace, e.g. a newline from a file; providers' secrets have none)"
	}
	line := r.Describe(ref)
	why := ""
	if !r.Valid && r.Reason == "signature mismatch" {
		// Why it may not match, worded once for verify, the TUI and check.
		name := "--secret"
		if o.SecretEnv != "" {
			name = o.SecretEnv
		}
		why = verify.WhyMismatch(s, req, o.Secret, name, opt)
		line += ": " + why
	}
	if o.JSON {
		j := verifyJSON{DeliveryID: o.ID, Valid: r.Valid, Provider: r.Provider, Scheme: r.Scheme, Reason: r.Reason, Why: why, Result: line}
		if !r.SignedAt.IsZero() {
			j.SignedAt = r.SignedAt.UTC().Format(time.RFC3339)
			j.CheckedAt = r.CheckedAt.UTC().Format(time.RFC3339Nano)
			j.AgeSeconds = r.CheckedAt.Sub(r.SignedAt).Seconds()
		}
		err := o.jsonOut.write(o.IO, func(w io.Writer) error {
			enc := report.NewJSONEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(j)
		})
		var ee *ExitError
		if errors.As(err, &ee) {
			return err // --jq or --template words its own error
		}
		if err != nil {
			return setupErr("write: %v", err)
		}
		if !r.Valid {
			return silentExit(1)
		}
		return nil
	}
	if !r.Valid {
		return failErr("%s", line)
	}
	fmt.Fprintln(o.IO.Out, line)
	return nil
}
