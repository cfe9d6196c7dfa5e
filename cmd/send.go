package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

type sendOptions struct {
	IO *iostreams.IO
	// Send delivers one request (replay.Send; tests may swap it).
	Send func(ctx context.Context, t replay.Target, req *message.Request) store.Attempt

	Provider  string
	Event     string
	BodyPath  string // --body: a file, or "-" for stdin; "" sends the sample
	KeepID    bool
	To        string
	Via       string
	Secret    string // from --secret or --secret-env; never stored or printed
	SecretEnv string
	Timeout   time.Duration
	List      bool
	JSON      bool
}

func newSendCmd(f *factory, runF func(*sendOptions) error) *cobra.Command {
	o := &sendOptions{IO: f.IO, Send: func(ctx context.Context, t replay.Target, req *message.Request) store.Attempt {
		return replay.Send(ctx, t, req, replay.SendOptions{})
	}}
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Send a realistic signed test delivery to a handler",
		Long: `Send one realistic delivery of a provider's event to your handler, signed
with your secret exactly as the provider would: the provider's headers and
User-Agent, a fresh unique event id on every send, the timestamp and
signature of now. 'hookreplay send --list' shows the sample events.

--body FILE (or - for stdin) sends a body of your own instead, dressed and
signed the same way. Its event id is replaced by a fresh one where the
provider keeps it in the body (` + bodyIdentityNames() + `), and so are its
timestamp ("created", "event_time") and a Twilio form's message sids;
--keep-id sends the body byte for byte. Header ids (X-GitHub-Delivery,
webhook-id, ...) are fresh either way. --event is needed with --body only
where the provider names the event in a header (GitHub's X-GitHub-Event:
--event push or pull_request.opened; Shopify's X-Shopify-Topic).

--to is the handler URL the provider is configured with (` + signsURLSentence() + `).
--via CAPTURE_URL sends the delivery to a running 'hookreplay capture'
instead, so that it is stored; capture answers it, or forwards it when it was
started with --forward. The request keeps the path and query of --to unless
CAPTURE_URL has a path of its own, and capture appends that path to its
--forward URL: start capture with '--forward http://localhost:3000' (no
path) to have a delivery for http://localhost:3000/webhooks/stripe arrive
there.

Exit status: 0 the handler answered 2xx, 1 it answered something else,
2 usage error or the handler could not be reached.`,
		Example: `  hookreplay send --list
  hookreplay send --provider stripe --event invoice.paid --to http://localhost:3000/webhooks/stripe --secret-env STRIPE_WEBHOOK_SECRET
  hookreplay send --provider stripe --body event.json --to http://localhost:3000/webhooks/stripe --secret-env STRIPE_WEBHOOK_SECRET
  gh api repos/OWNER/REPO/hooks/ID/deliveries/DID --jq .request.payload | \
    hookreplay send --provider github --event pull_request --body - --to http://localhost:3000/webhooks/github --secret s3cr3t

  # through capture, so the delivery is stored and can be replayed
  hookreplay capture --listen 127.0.0.1:9000 --forward http://localhost:3000 &
  hookreplay send --provider github --event push --secret s3cr3t \
    --to http://localhost:3000/webhooks/github --via http://127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.List {
				if runF != nil {
					return runF(o)
				}
				return sendList(o)
			}
			if err := sendValidate(o); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return sendRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Provider, "provider", "", "provider: "+providers(hasSamples)+" (inferred from --event when unique)")
	cmd.Flags().StringVar(&o.Event, "event", "", "sample event to send, e.g. invoice.paid (see --list); with --body, the event a header names (github, shopify)")
	cmd.Flags().StringVar(&o.BodyPath, "body", "", "send this body (a file, or - for stdin) instead of a sample, signed as the provider would")
	cmd.Flags().BoolVar(&o.KeepID, "keep-id", false, "with --body: keep the body's own event id and timestamps (send it byte for byte)")
	urlFlag(cmd.Flags(), &o.To, "to", "", "handler URL the provider is configured with, e.g. http://localhost:3000/webhooks/stripe")
	urlFlag(cmd.Flags(), &o.Via, "via", "", "URL of a running 'hookreplay capture' to send through (it stores the delivery)")
	cmd.Flags().StringVar(&o.Secret, "secret", "", "signing secret (prefer --secret-env)")
	cmd.Flags().StringVar(&o.SecretEnv, "secret-env", "", "name of the environment variable holding the signing secret")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 10*time.Second, "per request: connect, send and wait for the answer")
	cmd.Flags().BoolVar(&o.List, "list", false, "list the sample events (of --provider) and exit")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result (or --list) as JSON")
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return verify.ProviderNames(hasSamples), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("event", func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		p, _ := c.Flags().GetString("provider")
		var out []string
		for _, f := range verify.Fixtures() {
			if p == "" || strings.EqualFold(p, f.Provider) {
				out = append(out, f.Event+"\t"+f.Provider+": "+f.Summary)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// sampleEvents is "invoice.paid, push, ..." for provider, or every
// provider's events as "stripe: a, b; github: c" when provider is "".
func sampleEvents(provider string) string {
	var parts []string
	for _, s := range verify.Schemes() {
		if provider != "" && !strings.EqualFold(provider, s.Name()) {
			continue
		}
		var ev []string
		for _, f := range s.Samples() {
			ev = append(ev, f.Event)
		}
		if len(ev) == 0 {
			continue
		}
		if provider != "" {
			return strings.Join(ev, ", ")
		}
		parts = append(parts, s.Name()+": "+strings.Join(ev, ", "))
	}
	return strings.Join(parts, "; ")
}

// bodyIdentityNames is "stripe, slack": the providers whose event id is in the body.
func bodyIdentityNames() string { return providers(identityInBody) }

func sendValidate(o *sendOptions) error {
	if o.KeepID && o.BodyPath == "" {
		return usageErr("--keep-id keeps the event id of a body given with --body")
	}
	p, err := providerFlag(o.Provider, sendable)
	if err != nil {
		return err
	}
	o.Provider = p
	if s, err := verify.SchemeFor(p); err == nil && !hasSamples(s) && o.BodyPath == "" {
		return usageErr("--provider %s is declared and has no sample events: give the body to send with --body FILE", p)
	}
	if o.BodyPath != "" {
		if o.Provider == "" {
			return usageErr("--body: pass --provider (one of %s) to sign it as that provider would", providers(hasSamples))
		}
	} else if o.Event == "" {
		return usageErr("--event is required (%s), or --body FILE", sampleEvents(o.Provider))
	}
	if o.Provider == "" {
		var match []string
		for _, fx := range verify.Fixtures() {
			if fx.Event == o.Event {
				match = append(match, fx.Provider)
			}
		}
		switch len(match) {
		case 0:
			return usageErr("no sample event %q (events: %s)", o.Event, sampleEvents(""))
		case 1:
			o.Provider = match[0]
		default:
			return usageErr("event %q exists for %s: pass --provider", o.Event, strings.Join(match, ", "))
		}
	}
	o.Provider = strings.ToLower(o.Provider)
	s, err := verify.SchemeFor(o.Provider)
	if err != nil || !sendable(s) {
		return usageErr("unknown provider %q (known: %s)", o.Provider, providers(hasSamples))
	}
	if o.BodyPath == "" {
		if _, err := verify.FixtureBody(o.Provider, o.Event); err != nil {
			return usageErr("no sample %s event %q (%s events: %s)", o.Provider, o.Event, o.Provider, sampleEvents(o.Provider))
		}
	}
	if o.To == "" && o.Via == "" {
		return usageErr("--to URL is required (the handler the provider is configured with)")
	}
	for _, u := range []struct{ flag, val string }{{"--to", o.To}, {"--via", o.Via}} {
		if u.val == "" {
			continue
		}
		if _, err := handlerAddr(u.flag, u.val); err != nil {
			return err
		}
	}
	if err := durationFlagIn("--timeout", o.Timeout, 1, maxDuration); err != nil {
		return err
	}
	secret, err := signingSecret(o.Secret, o.SecretEnv, o.Provider, true)
	if err != nil {
		return err
	}
	o.Secret = secret
	return nil
}

type sendListItem struct {
	Provider string `json:"provider"`
	Event    string `json:"event"`
	Summary  string `json:"summary"`
}

func sendList(o *sendOptions) error {
	var fx []verify.Fixture
	for _, f := range verify.Fixtures() {
		if o.Provider == "" || strings.EqualFold(o.Provider, f.Provider) {
			fx = append(fx, f)
		}
	}
	if len(fx) == 0 {
		return usageErr("unknown provider %q (known: %s)", o.Provider, providers(hasSamples))
	}
	if o.JSON {
		items := make([]sendListItem, len(fx))
		for i, f := range fx {
			items[i] = sendListItem{f.Provider, f.Event, f.Summary}
		}
		enc := report.NewJSONEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tEVENT\tSAMPLE")
	for _, f := range fx {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Provider, f.Event, f.Summary)
	}
	return tw.Flush()
}

type sendJSON struct {
	Provider string `json:"provider"`
	Event    string `json:"event"`
	EventID  string `json:"event_id"`
	// EventIDs lists every event id when the delivery carries several (a
	// WhatsApp batch); EventID is the first.
	EventIDs  []string `json:"event_ids,omitempty"`
	To        string   `json:"to"`
	Via       string   `json:"via,omitempty"`
	SentTo    string   `json:"sent_to"`
	Status    int      `json:"status"`
	LatencyMS int64    `json:"latency_ms"`
	Error     string   `json:"error,omitempty"`
}

func sendRun(ctx context.Context, o *sendOptions) error {
	to := o.To
	if to == "" {
		to = o.Via
	}
	d := verify.Delivery{Provider: o.Provider, Event: o.Event, KeepID: o.KeepID, URL: to, Now: time.Now()}
	if o.BodyPath != "" {
		body, err := sendBody(o)
		if err != nil {
			return err
		}
		d.Body = body
	}
	req, err := verify.Build(d, o.Secret)
	if err != nil {
		return sendBuildErr(o, err)
	}
	dest := to
	if o.Via != "" {
		dest = o.Via
	}
	u, _ := url.Parse(dest)
	t := replay.Target{URL: u, Timeout: o.Timeout}
	if o.Via != "" && o.To != "" {
		// Through capture, as through a tunnel, the request keeps the Host
		// of the URL the provider is configured with: capture verifies a
		// scheme that signs the URL (Twilio, Square, Bird, HubSpot) against
		// it, and forwards it with it.
		if tu, err := url.Parse(o.To); err == nil {
			t.Host = tu.Host
		}
	}
	a := o.Send(ctx, t, req)
	id := verify.IdentityFor(o.Provider, req)
	event := o.Event
	if o.BodyPath != "" && id.EventType != "" {
		event = id.EventType
	}
	if event == "" {
		event = "delivery" // a Twilio body names no event type
	}
	sentTo := replay.FullURL(u, req.Target)
	if o.JSON {
		j := sendJSON{Provider: o.Provider, Event: event, EventID: id.EventID, EventIDs: report.SeveralEventIDs(id.EventID, id.Extra), To: o.To, Via: o.Via, SentTo: sentTo,
			Status: a.Status, LatencyMS: a.Latency.Milliseconds(), Error: a.Err}
		enc := report.NewJSONEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(j); err != nil {
			return setupErr("write: %v", err)
		}
		switch {
		case replay.Outcome(a) == replay.OutcomeError:
			return silentExit(2)
		case a.Status < 200 || a.Status > 299:
			return silentExit(1)
		}
		return nil
	}
	if replay.Outcome(a) == replay.OutcomeError {
		return setupErr("send %s %s to %s: %s%s", o.Provider, event, sentTo, a.Err, sendRefusedHint(o, u, a.Err))
	}
	via := ""
	if o.Via != "" {
		via = " via capture"
	}
	line := fmt.Sprintf("sent %s %s %s to %s%s: %d %s in %s", o.Provider, event, report.EventIDLabel(id.EventID, report.SeveralEventIDs(id.EventID, id.Extra), 0), sentTo, via,
		a.Status, http.StatusText(a.Status), report.Duration(a.Latency))
	if a.Status < 200 || a.Status > 299 {
		return failErr("%s%s", line, sendBodyHint(a.ResponseBody))
	}
	fmt.Fprintln(o.IO.Out, line)
	return nil
}

// sendRefusedHint says what to start when nothing listened where send
// connected (it said only "connect: connection refused"): capture, for
// --via, else the handler. dest is where send connected.
func sendRefusedHint(o *sendOptions, dest *url.URL, why string) string {
	if why != "connect: connection refused" {
		return ""
	}
	if o.Via != "" {
		return fmt.Sprintf(": nothing is listening at --via %s; start 'hookreplay capture --listen %s' first", o.Via, dest.Host)
	}
	return ": nothing is listening at --to; start the handler first, or give --to the address it listens on"
}

// sendBodyHint is the start of a non-2xx answer's body, on one line.
func sendBodyHint(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return ""
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return ": " + s
}

// sendBody reads --body: a file, or stdin for "-", at most maxInputBody bytes.
func sendBody(o *sendOptions) ([]byte, error) {
	if o.BodyPath == "-" {
		return readStdinBody(o.IO.In, "send --body -")
	}
	return readBodyFile("--body", o.BodyPath)
}

// sendBuildErr words an error from building the delivery for the command
// line: what --body lacks, and the flag that supplies it.
func sendBuildErr(o *sendOptions, err error) error {
	var oe *verify.OptionError
	if errors.As(err, &oe) && oe.Field == "Event" {
		return usageErr("--body: %s names the event in %s: pass --event (e.g. %s)", o.Provider, oe.Detail, sampleEvents(o.Provider))
	}
	var fe *verify.FreshIDError
	if errors.As(err, &fe) {
		return usageErr("--body %s: %v (--keep-id sends the body unchanged)", o.BodyPath, err)
	}
	return verifyErr(err)
}
