package cmd

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

type signOptions struct {
	IO *iostreams.IO

	Provider  string
	Secret    string // from --secret or --secret-env; never stored or printed
	SecretEnv string
	Timestamp time.Time // zero: now
	ID        string
	URL       string
	Headers   message.Headers
	SigHeader string
	Algo      string
	Encoding  string
	Prefix    string
}

func newSignCmd(f *factory, runF func(*signOptions) error) *cobra.Command {
	o := &signOptions{IO: f.IO}
	var ts string
	var headers []string
	cmd := &cobra.Command{
		Use:   "sign",
		Short: "Print the signature headers a provider would add to a body",
		Example: `  hookreplay sign --provider stripe --secret-env STRIPE_WEBHOOK_SECRET < event.json

  # send it with curl
  curl -H "$(hookreplay sign --provider github --secret s < push.json | tail -1)" \
    --data-binary @push.json http://localhost:3000/webhooks/github

  hookreplay sign --provider standard --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw \
    --id msg_p5jXN8AQM9LWM0D4loKWxJek --timestamp 1614265330 < body.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Provider == "" {
				return usageErr("--provider is required (one of %s)", strings.Join(verify.Names(), ", "))
			}
			if !verify.KnownProvider(o.Provider) {
				return usageErr("unknown provider %q (known: %s)", o.Provider, strings.Join(verify.Names(), ", "))
			}
			o.Provider = strings.ToLower(o.Provider)
			if err := genericOnly(o.Provider, o.Algo, o.Encoding, o.Prefix); err != nil {
				return err
			}
			if ts != "" {
				t, err := parseSignTime("--timestamp", ts)
				if err != nil {
					return err
				}
				o.Timestamp = t
			}
			if s := verify.Lookup(o.Provider); o.ID != "" && (s.IdentityInBody() || !verify.Known(s)) {
				return usageErr("--id: %s keeps no event id in a header; edit the body instead", o.Provider)
			}
			if err := parseSigHeaders(headers, &o.Headers, &o.SigHeader); err != nil {
				return err
			}
			secret, err := signingSecret(o.Secret, o.SecretEnv, o.Provider, true)
			if err != nil {
				return err
			}
			o.Secret = secret
			if runF != nil {
				return runF(o)
			}
			return signRun(o)
		},
	}
	lazyLong(cmd, signLong)
	cmd.Flags().StringVar(&o.Provider, "provider", "", "provider scheme: "+strings.Join(verify.Providers, ", ")+", or one declared in hookreplay.yaml (hookreplay providers)")
	cmd.Flags().StringVar(&o.Secret, "secret", "", "signing secret (prefer --secret-env)")
	cmd.Flags().StringVar(&o.SecretEnv, "secret-env", "", "name of the environment variable holding the signing secret")
	cmd.Flags().StringVar(&ts, "timestamp", "", "signing time: unix seconds or RFC 3339 (default now)")
	cmd.Flags().StringVar(&o.ID, "id", "", "event id for header-identity providers (default: a fresh one where the signature covers it)")
	cmd.Flags().StringVar(&o.URL, "url", "", "full URL the request is sent to (required for "+providers(signsURL)+")")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "extra request header 'Name: value' (e.g. Content-Type); a bare NAME is the generic provider's signature header")
	cmd.Flags().StringVar(&o.Algo, "algo", "", "generic provider: sha256 (default), sha1 or sha512")
	cmd.Flags().StringVar(&o.Encoding, "encoding", "", "generic provider: hex (default) or base64")
	cmd.Flags().StringVar(&o.Prefix, "prefix", "", "generic provider: text before the signature, e.g. sha256=")
	return cmd
}

// genericOnly refuses --algo, --encoding and --prefix for a provider other
// than generic, whose scheme fixes them: given, they would be ignored.
func genericOnly(provider, algo, encoding, prefix string) error {
	if provider == verify.Generic {
		return nil
	}
	for _, f := range []struct{ name, v string }{{"--algo", algo}, {"--encoding", encoding}, {"--prefix", prefix}} {
		if f.v != "" {
			return usageErr("%s is for --provider generic: %s's scheme fixes its hash, encoding and prefix", f.name, provider)
		}
	}
	return nil
}

func parseSignTime(flag, s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, usageErr("%s %q is neither unix seconds nor RFC 3339 (2024-09-11T16:20:00Z)", flag, s)
}

func signRun(o *signOptions) error {
	body, err := readStdinBody(o.IO.In, "sign")
	if err != nil {
		return err
	}
	req, err := verify.NewRequest(body, o.Headers, o.URL)
	if err != nil {
		return usageErr("--url: %v", err)
	}
	now := o.Timestamp
	if now.IsZero() {
		now = time.Now()
	}
	opt := verify.Options{Now: now, URL: o.URL, Header: o.SigHeader, Algo: o.Algo, Encoding: o.Encoding, Prefix: o.Prefix}
	base := req
	if o.ID != "" {
		if req, err = verify.Reidentify(req, o.Provider, o.ID, "", now, opt); err != nil {
			return verifyErr(err)
		}
	}
	signed, err := verify.Sign(req, o.Provider, o.Secret, opt)
	if err != nil {
		return verifyErr(err)
	}
	// Print what a sender adds: every header that signing or --id set or
	// changed, in request order.
	for _, h := range signed.Headers {
		if !base.Headers.Has(h.Name) || base.Headers.Get(h.Name) != h.Value {
			fmt.Fprintf(o.IO.Out, "%s: %s\n", h.Name, h.Value)
		}
	}
	if !bytes.Equal(signed.Body, base.Body) {
		// The scheme signs inside the body: what was signed is this body.
		fmt.Fprintf(o.IO.Out, "\n%s", signed.Body)
		if len(signed.Body) > 0 && signed.Body[len(signed.Body)-1] != '\n' {
			fmt.Fprintln(o.IO.Out)
		}
	}
	return nil
}

// signLong is sign's long help. Naming the schemes that sign a time signs
// a sample of every provider (signsTime), so it is built when the help is
// shown (lazyLong), not at every start.
func signLong() string {
	return `Read a request body on stdin and print the header lines the provider would
send with it, signed with your secret: for example to test a handler with
curl, or to check your own signing code.

--timestamp sets the signing time (unix seconds or RFC 3339; default now) for
schemes that sign one (` + providers(signsTime) + `).
--id sets the event id for schemes that carry it in a header
(` + providers(identityInHeader) + `); ` + bodyIdentityTitles() + ` the event id in the body.
` + signsURLSentence() + `: --url is required for it.

Where the signature covers a timestamp or lives inside the body (Linear's
webhookTimestamp, Mailgun's signature object), signing changes the body: the
signed body is printed after the header lines and a blank line, and it is
that body that must be sent.`
}

// bodyIdentityTitles is "Stripe and Slack keep" (or "X keeps").
func bodyIdentityTitles() string {
	t, one := providerTitles(identityInBody)
	if one {
		return t + " keeps"
	}
	return t + " keep"
}
