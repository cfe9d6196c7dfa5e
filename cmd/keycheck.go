package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/keycheck"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

type keycheckOptions struct {
	IO            *iostreams.IO
	Store         func() (*store.Store, error)
	ExistingStore func() (*store.Store, error)

	To      string
	Method  string
	Body    string
	Headers []string
	From    int64
	FromSet bool

	KeyHeader string
	Key       string
	Profile   string
	// Profile overrides; -1 (or "" for the header): the profile's own.
	ReuseStatus, InFlightStatus, KeyTooLongStatus, MaxKeyLength, OutageStatus int
	ReplayHeader                                                              string
	Replay5xx                                                                 string
	WhitespaceReuse                                                           string
	ProblemJSON                                                               string
	OpenFingerprint                                                           string

	OtherAccount []string
	SlowBody     string
	FailBody     string
	InvalidBody  string
	Also         []string
	IDPath       string
	GetPath      string
	StoreDown    string
	StoreUp      string
	TTL          time.Duration
	Burst        int
	Checks       []string

	// probes holds the probe flags, declared and validated as check's.
	probes    checkOptions
	Serve     string
	ResetCmd  string
	Timeout   time.Duration
	Settle    time.Duration
	SettleSet bool
	SettleMax time.Duration
	MaxTime   time.Duration
	Insecure  bool
	Reports   []string
	JSON      bool
	Quiet     bool
}

func newKeycheckCmd(f *factory, runF func(*keycheckOptions) error) *cobra.Command {
	o := &keycheckOptions{IO: f.IO, Store: f.Store, ExistingStore: f.ExistingStore}
	var checks, configPath string
	cmd := &cobra.Command{
		Use:   "keycheck --to URL --body JSON [probes] | keycheck [NAME...] (hookreplay.yaml)",
		Short: "Prove that an API honours the Idempotency-Key header",
		Long: `Sends requests with Idempotency-Key headers to your API the way real clients
retry — the same key again, after a lost answer, in a tight burst, while the
first is still running, with another body, from another account — and reads
side-effect probes (as check does) before and after each check to prove that
one key is one operation. Answers are judged against a profile:

  bird    (default) reuse 409, in flight 409, key over 255 characters 422,
          replays carry Idempotency-Replay: true, a 5xx is not kept, store down 503
  ietf    draft-ietf-httpapi-idempotency-key-header: reuse 422, in flight 409,
          no replay header; whitespace, query, method and a kept 5xx are the
          server's choice (info)
  stripe  reuse 400, in flight 409, keys up to 255, Idempotent-Replayed: true,
          a 500 is kept and replayed

Every value can be overridden (--reuse-status, --in-flight-status,
--replay-header, ...). A code another profile uses is a warn that says so.
The key goes in Idempotency-Key (--key-header for another; Fiber's middleware
reads X-Idempotency-Key): a key the API ignores there but honours in a header
keycheck knows is a setup error that names it.

Checks (--checks; default: all the inputs allow):
` + keycheckChecksHelp() + `
Bodies (--body, --slow-body, --fail-body, --invalid-body) are JSON text, @FILE
or - (stdin). {{nonce}} in a body becomes a fresh token per check. {id} in an
--also path is the first answer's "id" (--id-path for another JSON path).

Exit codes: 0 every judged check passed (warn and info allowed), 1 a check
failed, 2 usage or setup error (a probe that cannot be read, a first request
the API refuses), 3 inconclusive (the probes saw no effect).`,
		Example: `  # first, on the example API (a check-then-insert race: burst fails, exit 1; see 'hookreplay demo api --help')
  hookreplay demo api race --listen 127.0.0.1:8080 &
  sleep 1
  hookreplay keycheck --to 8080/v1/messages --body '{"text":"hi {{nonce}}"}' -H 'Authorization: AccessKey acct_a' \
    --probe-http count=8080/debug/count -q
  kill %1; wait   # stop the example API

  # a local API, its effect counted by a SQL probe
  hookreplay keycheck --to http://127.0.0.1:8080/v1/messages \
    --body '{"to":"+31600000000","text":"hi"}' -H 'Authorization: AccessKey acct_a' \
    --probe-sql "SELECT count(*) FROM messages" --dsn sqlite:./app.db

  # every check: slow, failing and invalid bodies, another account, another route
  hookreplay keycheck --to 8080/v1/messages --body @msg.json \
    --slow-body '{"text":"hi","delay_ms":600}' --fail-body '{"text":"{{nonce}}","fail_once":true}' \
    --invalid-body '{}' --other-account 'Authorization: AccessKey acct_b' \
    --also 'DELETE /v1/messages/{id}' --probe-http count=http://127.0.0.1:8080/debug/count

  # a captured client request, judged by Stripe's rules
  hookreplay keycheck --from 42 --to http://127.0.0.1:8080 --profile stripe --probe-cmd ./count-charges

  # in CI: every keycheck in ./hookreplay.yaml (keychecks:); 'hookreplay check' runs them too
  hookreplay keycheck

  # only the race and the stored 5xx
  hookreplay keycheck --to 8080/v1/messages --body @msg.json --fail-body @fail.json \
    --checks burst,5xx --probe-http http://127.0.0.1:8080/debug/count`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if path := keycheckConfigPath(cmd, configPath); path != "" {
				return keycheckConfigRun(cmd.Context(), cmd, o, path, args, runF)
			}
			if len(args) > 0 {
				return usageErr("keycheck takes no arguments but the names of hookreplay.yaml's keychecks (got %q)", args[0])
			}
			if err := keycheckArgs(cmd.Flags(), o, checks); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return redactExit(keycheckRun(cmd.Context(), o), &o.probes.secrets)
		},
	}
	keycheckFlags(cmd.Flags(), o, &checks)
	addConfigFlag(cmd.Flags(), &configPath)
	return cmd
}

func keycheckChecksHelp() string {
	var b strings.Builder
	for _, c := range keycheck.Checks() {
		fmt.Fprintf(&b, "  %-16s %s\n", c.Name, c.About)
	}
	return b.String()
}

// keycheckFlags declares every flag of a keycheck (the config file maps
// onto the same options, with the same defaults).
func keycheckFlags(fl *pflag.FlagSet, o *keycheckOptions, checks *string) {
	urlFlag(fl, &o.To, "to", "", "the API's URL the body is sent to (required), e.g. http://127.0.0.1:8080/v1/messages")
	fl.StringVarP(&o.Method, "method", "X", "POST", "the request's method")
	fl.StringVar(&o.Body, "body", "", "the request body: JSON text, @FILE or - (stdin); {{nonce}} becomes a fresh token per check")
	fl.StringArrayVarP(&o.Headers, "header", "H", nil, "a request header, 'Name: value' (repeatable), e.g. the first account's credentials")
	fl.Int64Var(&o.From, "from", 0, "take method, path, headers and body from captured request ID (capture records any HTTP request)")
	fl.StringVar(&o.KeyHeader, "key-header", keycheck.DefaultKeyHeader, "the header the key is sent in (Fiber's idempotency middleware reads X-Idempotency-Key)")
	fl.StringVar(&o.Key, "key", "", "key pattern: {{uuid}} and {{nonce}} are replaced per check (default: a fresh UUID, 36 characters)")
	fl.StringVar(&o.Profile, "profile", "bird", "the contract answers are judged by: "+strings.Join(keycheck.ProfileNames(), ", "))
	fl.IntVar(&o.ReuseStatus, "reuse-status", -1, "override the profile: the status for a used key with another request")
	fl.IntVar(&o.InFlightStatus, "in-flight-status", -1, "override the profile: the status for a key still in flight")
	fl.IntVar(&o.MaxKeyLength, "max-key-length", -1, "override the profile: the longest key accepted (0: no maximum, key-length skipped)")
	fl.IntVar(&o.KeyTooLongStatus, "key-too-long-status", -1, "override the profile: the status for a longer key")
	fl.IntVar(&o.OutageStatus, "outage-status", -1, "override the profile: the status while the idempotency store is down")
	fl.StringVar(&o.ReplayHeader, "replay-header", "", "override the profile: the header marking a replay, 'Name: value' or Name (value true), or none")
	fl.StringVar(&o.Replay5xx, "replay-5xx", "", "override the profile: true if a stored 5xx is replayed (stripe), false if the retry runs (bird), either if the server decides (ietf)")
	fl.StringVar(&o.WhitespaceReuse, "whitespace-reuse", "", "override the profile: true if the same JSON with other whitespace is another request (bird, ietf), false if parameters are compared (stripe)")
	fl.StringVar(&o.OpenFingerprint, "open-fingerprint", "", "override the profile: the parts beyond the body ("+strings.Join(keycheck.FingerprintParts, ",")+") left to the server, where the stored answer or, for query and method, a new operation is info (ietf: all), or none")
	fl.StringVar(&o.ProblemJSON, "problem-json", "", "override the profile: true if reuse and in-flight errors must be application/problem+json (ietf)")
	fl.StringArrayVar(&o.OtherAccount, "other-account", nil, "a header that makes a request another account's, 'Name: value' (repeatable; enables scope)")
	fl.StringVar(&o.SlowBody, "slow-body", "", "a body the API takes long on, e.g. 600ms (enables in-flight): JSON, @FILE or -")
	fl.StringVar(&o.FailBody, "fail-body", "", "a body that gets a 5xx the first time its {{nonce}} is seen (enables 5xx): JSON, @FILE or -")
	fl.StringVar(&o.InvalidBody, "invalid-body", "", "a body the API refuses with a 4xx (enables 4xx): JSON, @FILE or -")
	fl.StringArrayVar(&o.Also, "also", nil, "another mutating route, 'METHOD /path/{id} [BODY]', sent twice with one key (repeatable; enables methods)")
	fl.StringVar(&o.IDPath, "id-path", "id", "the JSON path of the id in the first answer, for {id} (e.g. data.id)")
	fl.StringVar(&o.GetPath, "get", "", "the path safe-get GETs (default: --to's path; {id} allowed)")
	fl.StringVar(&o.StoreDown, "store-down-cmd", "", "shell command stopping the API's idempotency store (with --store-up-cmd, enables outage)")
	fl.StringVar(&o.StoreUp, "store-up-cmd", "", "shell command starting the idempotency store again")
	fl.DurationVar(&o.TTL, "ttl", 0, "how long the API keeps keys: expiry sends a key again after it (enables expiry)")
	fl.IntVar(&o.Burst, "burst", 20, "concurrent copies in one burst")
	fl.StringVar(checks, "checks", "", "comma-separated checks to run: "+strings.Join(keycheck.CheckNames(), ","))
	checkProbeFlags(fl, &o.probes)
	fl.StringVar(&o.Serve, "serve", "", "shell command starting the API on --to's address; stopped afterwards")
	fl.StringVar(&o.ResetCmd, "reset-cmd", "", "shell command restoring the API's state, run before the first check and before each check that starts from a fresh operation (lost, burst, no-key, 5xx, scope, …)")
	fl.DurationVar(&o.Timeout, "timeout", 30*time.Second, "per request: connect, send and wait for the answer")
	fl.DurationVar(&o.Settle, "settle", probe.DefaultSettle, "probes must hold still this long before a reading counts; when not given, it comes down to 3× the time the first request's effects took (at least 100ms)")
	fl.DurationVar(&o.SettleMax, "settle-max", probe.DefaultSettleMax, "longest wait for probes to settle")
	fl.DurationVar(&o.MaxTime, "max-time", defaultCheckMaxTime, "stop the whole run after this long (exit 2)")
	fl.BoolVar(&o.Insecure, "insecure", false, "accept an https API's unverifiable certificate")
	fl.StringArrayVar(&o.Reports, "report", nil, "also write a report: json=PATH, junit=PATH, markdown=PATH, html=PATH, text=PATH (repeatable; PATH - is stdout, instead of the text report)")
	fl.BoolVar(&o.JSON, "json", false, "print the JSON report on stdout instead of text")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress lines on stderr")
}

// keycheckArgs completes the flags once parsed.
func keycheckArgs(fl *pflag.FlagSet, o *keycheckOptions, checks string) error {
	if checks != "" {
		for _, c := range strings.Split(checks, ",") {
			if c = strings.TrimSpace(c); c == "" {
				continue
			}
			if !isKeycheck(c) {
				return usageErr("--checks: unknown check %q (known: %s)", c, strings.Join(keycheck.CheckNames(), ","))
			}
			o.Checks = append(o.Checks, c)
		}
	}
	o.FromSet = fl.Changed("from")
	o.SettleSet = fl.Changed("settle")
	o.probes.secrets.AddURL(o.probes.DSN)
	for _, h := range o.probes.ProbeHTTP {
		o.probes.secrets.AddURL(h)
	}
	for _, c := range []string{o.ResetCmd, o.Serve, o.StoreDown, o.StoreUp} {
		o.probes.secrets.AddCommand(c)
	}
	for _, c := range o.probes.ProbeCmd {
		_, c = probe.SplitName(c)
		o.probes.secrets.AddCommand(c)
	}
	return nil
}

func isKeycheck(name string) bool {
	for _, n := range keycheck.CheckNames() {
		if n == name {
			return true
		}
	}
	return false
}

// keycheckBody reads a body flag: JSON text, @FILE or - (stdin); nil when
// the flag is empty.
func keycheckBody(o *keycheckOptions, flag, v string) ([]byte, error) {
	switch {
	case v == "":
		return nil, nil
	case v == "-":
		return readStdinBody(o.IO.In, "keycheck "+flag+" -")
	case strings.HasPrefix(v, "@"):
		return readBodyFile(flag, v[1:])
	}
	return []byte(v), nil
}

// keycheckProfile is --profile with its overrides.
func keycheckProfile(o *keycheckOptions) (keycheck.Profile, error) {
	p, ok := keycheck.ProfileNamed(o.Profile)
	if !ok {
		return p, usageErr("--profile %q: want one of %s", o.Profile, strings.Join(keycheck.ProfileNames(), ", "))
	}
	var changed []string
	status := func(flag string, v int, dst *int) error {
		if v < 0 {
			return nil
		}
		if v < 100 || v > 599 {
			return usageErr("%s %d: want an HTTP status, 100 to 599", flag, v)
		}
		*dst = v
		changed = append(changed, flag[2:])
		return nil
	}
	for _, s := range []struct {
		flag string
		v    int
		dst  *int
	}{{"--reuse-status", o.ReuseStatus, &p.ReuseStatus}, {"--in-flight-status", o.InFlightStatus, &p.InFlightStatus},
		{"--key-too-long-status", o.KeyTooLongStatus, &p.KeyTooLongStatus}, {"--outage-status", o.OutageStatus, &p.OutageStatus}} {
		if err := status(s.flag, s.v, s.dst); err != nil {
			return p, err
		}
	}
	if o.MaxKeyLength >= 0 {
		if err := intFlagIn("--max-key-length", o.MaxKeyLength, 0, 1<<16); err != nil {
			return p, err
		}
		p.MaxKeyLength = o.MaxKeyLength
		if p.KeyTooLongStatus == 0 {
			p.KeyTooLongStatus = 400
		}
		changed = append(changed, "max-key-length")
	}
	if h := strings.TrimSpace(o.ReplayHeader); h != "" {
		if strings.EqualFold(h, "none") {
			p.ReplayHeader, p.ReplayValue = "", ""
		} else {
			name, value, ok := strings.Cut(h, ":")
			if !ok {
				value = "true"
			}
			name, value = strings.TrimSpace(name), strings.TrimSpace(value)
			if !message.IsToken(name) || value == "" {
				return p, usageErr("--replay-header %q: want 'Name: value', a header Name or none", o.ReplayHeader)
			}
			p.ReplayHeader, p.ReplayValue = name, value
		}
		changed = append(changed, "replay-header")
	}
	if o.Replay5xx != "" {
		p.Open5xx = strings.EqualFold(o.Replay5xx, "either")
		b, err := strconv.ParseBool(o.Replay5xx)
		if err != nil && !p.Open5xx {
			return p, usageErr("--replay-5xx %q: want true, false or either", o.Replay5xx)
		}
		p.Replays5xx = b
		changed = append(changed, "replay-5xx")
	}
	if o.WhitespaceReuse != "" {
		b, err := strconv.ParseBool(o.WhitespaceReuse)
		if err != nil {
			return p, usageErr("--whitespace-reuse %q: want true or false", o.WhitespaceReuse)
		}
		p.WhitespaceIsReuse = b
		// Said explicitly, whitespace is no longer the server's choice.
		p.OpenFingerprint = slices.DeleteFunc(slices.Clone(p.OpenFingerprint), func(s string) bool { return s == "whitespace" })
		changed = append(changed, "whitespace-reuse")
	}
	if v := strings.TrimSpace(o.OpenFingerprint); v != "" {
		p.OpenFingerprint = nil
		if !strings.EqualFold(v, "none") {
			for _, part := range strings.Split(v, ",") {
				part = strings.ToLower(strings.TrimSpace(part))
				if !slices.Contains(keycheck.FingerprintParts, part) {
					return p, usageErr("--open-fingerprint %q: want none or a comma-separated list of %s", o.OpenFingerprint, strings.Join(keycheck.FingerprintParts, ","))
				}
				if !slices.Contains(p.OpenFingerprint, part) {
					p.OpenFingerprint = append(p.OpenFingerprint, part)
				}
			}
		}
		changed = append(changed, "open-fingerprint")
	}
	if o.ProblemJSON != "" {
		b, err := strconv.ParseBool(o.ProblemJSON)
		if err != nil {
			return p, usageErr("--problem-json %q: want true or false", o.ProblemJSON)
		}
		p.ProblemJSON = b
		changed = append(changed, "problem-json")
	}
	if len(changed) > 0 {
		p.Name += " (" + strings.Join(changed, ", ") + " overridden)"
	}
	return p, nil
}

// keycheckHeaders parses 'Name: value' lines given with flag.
func keycheckHeaders(flag string, lines []string) (message.Headers, error) {
	var hs message.Headers
	for _, l := range lines {
		h, err := message.ParseHeaderLine(l)
		if err != nil {
			return nil, usageErr("%s: %v", flag, err)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// keycheckRoutes parses --also 'METHOD /path [BODY]'.
func keycheckRoutes(also []string) ([]keycheck.Route, error) {
	var out []keycheck.Route
	for _, a := range also {
		fields := strings.SplitN(strings.TrimSpace(a), " ", 3)
		if len(fields) < 2 || !message.IsToken(fields[0]) || !strings.HasPrefix(fields[1], "/") {
			return nil, usageErr("--also %q: want 'METHOD /path' or 'METHOD /path BODY', e.g. 'PATCH /v1/messages/{id}'", a)
		}
		rt := keycheck.Route{Method: strings.ToUpper(fields[0]), Path: fields[1]}
		if len(fields) == 3 {
			rt.Body = []byte(strings.TrimSpace(fields[2]))
		}
		out = append(out, rt)
	}
	return out, nil
}

func keycheckProbeSpecs(o *keycheckOptions) probe.Specs { return checkProbeSpecs(&o.probes) }

// keycheckFlag names an input by its flag.
func keycheckFlag(in keycheck.Input) string {
	switch in {
	case keycheck.InputProbe:
		return "--probe-sql/--probe-cmd/--probe-http/--probe-redis/--sink/--smtp-sink"
	case keycheck.InputSlowBody:
		return "--slow-body"
	case keycheck.InputFailBody:
		return "--fail-body"
	case keycheck.InputInvalidBody:
		return "--invalid-body"
	case keycheck.InputAlso:
		return "--also"
	case keycheck.InputOtherAccount:
		return "--other-account"
	case keycheck.InputStoreCmds:
		return "--store-down-cmd and --store-up-cmd"
	case keycheck.InputTTL:
		return "--ttl"
	case keycheck.InputReplayHeader:
		return "--replay-header"
	case keycheck.InputMaxKeyLength:
		return "--max-key-length"
	case keycheck.InputGetPath:
		return "--get"
	case keycheck.InputIDPath:
		return "--id-path"
	case keycheck.InputSettleMax:
		return "--settle-max"
	case keycheck.InputBody:
		return "--body"
	case keycheck.InputHeader:
		return "-H"
	case keycheck.InputKeyHeader:
		return "--key-header"
	case keycheck.InputKeyPattern:
		return "--key"
	case keycheck.InputReset:
		return "--reset-cmd"
	}
	return ""
}

// keycheckOptionsFor validates o and builds the engine's options (probes
// are built by the caller, who closes them).
func keycheckOptionsFor(ctx context.Context, o *keycheckOptions, st *store.Store) (keycheck.Options, error) {
	var ko keycheck.Options
	if o.To == "" {
		return ko, usageErr("--to URL is required: where the API listens, e.g. --to http://127.0.0.1:8080/v1/messages (see 'hookreplay keycheck --help'), or a hookreplay.yaml with keychecks:")
	}
	u, err := handlerAddr("--to", o.To)
	if err != nil {
		return ko, err
	}
	if err := checkValidateProbes(&o.probes, "the API does"); err != nil {
		return ko, err
	}
	if err := intFlagIn("--burst", o.Burst, 2, maxConcurrency); err != nil {
		return ko, err
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
		lo   time.Duration
	}{{"--settle", o.Settle, 1}, {"--settle-max", o.SettleMax, 1}, {"--timeout", o.Timeout, 1}, {"--max-time", o.MaxTime, 0}, {"--ttl", o.TTL, 0}} {
		if err := durationFlagIn(d.flag, d.v, d.lo, maxDuration); err != nil {
			return ko, err
		}
	}
	if o.SettleMax < o.Settle {
		return ko, usageErr("--settle-max must be at least --settle")
	}
	if (o.StoreDown == "") != (o.StoreUp == "") {
		return ko, usageErr("--store-down-cmd and --store-up-cmd go together: one stops the idempotency store, the other starts it again")
	}
	if o.Key != "" && !strings.Contains(o.Key, keycheck.UUIDPlaceholder) && !strings.Contains(o.Key, keycheck.NoncePlaceholder) {
		return ko, usageErr("--key %q: a pattern needs {{uuid}} or {{nonce}}, or every check would share one key", o.Key)
	}
	if !message.IsToken(o.KeyHeader) {
		return ko, usageErr("--key-header %q is not a header name", o.KeyHeader)
	}
	prof, err := keycheckProfile(o)
	if err != nil {
		return ko, err
	}
	hs, err := keycheckHeaders("-H", o.Headers)
	if err != nil {
		return ko, err
	}
	other, err := keycheckHeaders("--other-account", o.OtherAccount)
	if err != nil {
		return ko, err
	}
	for _, h := range append(append(message.Headers{}, hs...), other...) {
		if strings.EqualFold(h.Name, "Authorization") || strings.Contains(strings.ToLower(h.Name), "key") || strings.Contains(strings.ToLower(h.Name), "token") {
			o.probes.secrets.Add(h.Value)
		}
	}
	routes, err := keycheckRoutes(o.Also)
	if err != nil {
		return ko, err
	}
	ko = keycheck.Options{Target: u, TLS: replayTLS(o.Insecure), Method: strings.ToUpper(o.Method), Headers: hs, KeyHeader: o.KeyHeader, KeyPattern: o.Key,
		Profile: prof, OtherAccount: other, Also: routes, IDPath: o.IDPath, GetPath: o.GetPath, StoreDownCmd: o.StoreDown, StoreUpCmd: o.StoreUp,
		TTL: o.TTL, Burst: o.Burst, Checks: o.Checks, ResetCmd: o.ResetCmd, Timeout: o.Timeout, Settle: o.Settle, SettleMax: o.SettleMax,
		LearnSettle: !o.SettleSet, Store: st, Name: keycheckFlag, ProbeDefs: keycheckProbeSpecs(o).Labels()}
	if o.FromSet {
		if err := keycheckFrom(ctx, o, st, &ko); err != nil {
			return ko, err
		}
	}
	for _, b := range []struct {
		flag string
		v    string
		dst  *[]byte
	}{{"--body", o.Body, &ko.Body}, {"--slow-body", o.SlowBody, &ko.SlowBody}, {"--fail-body", o.FailBody, &ko.FailBody}, {"--invalid-body", o.InvalidBody, &ko.InvalidBody}} {
		body, err := keycheckBody(o, b.flag, b.v)
		if err != nil {
			return ko, err
		}
		if body != nil {
			*b.dst = body
		}
	}
	if len(ko.Body) == 0 {
		return ko, usageErr("--body is required (JSON text, @FILE or -), or --from ID to take a captured request's")
	}
	if o.Serve != "" {
		ko.Serve = &check.Server{Cmd: o.Serve, Addr: hostPort(u)}
	}
	ko.RunOptions = keycheckRunOptions(o, prof)
	return ko, nil
}

// keycheckFrom takes method, path, headers and body from a captured
// request; flags given explicitly win.
func keycheckFrom(ctx context.Context, o *keycheckOptions, st *store.Store, ko *keycheck.Options) error {
	d, err := st.GetDelivery(ctx, o.From)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return usageErr("--from %d: no captured request with that id in %s (see 'hookreplay list')", o.From, st.Path())
		}
		return setupErr("--from %d: %v", o.From, err)
	}
	m := d.Request()
	if o.Method == "POST" && m.Method != "" {
		ko.Method = strings.ToUpper(m.Method)
	}
	if ko.Target.EscapedPath() == "" || ko.Target.EscapedPath() == "/" {
		t := *ko.Target
		if p, err := url.ParseRequestURI(m.Target); err == nil {
			t.Path, t.RawPath, t.RawQuery = p.Path, p.RawPath, p.RawQuery
		}
		ko.Target = &t
	}
	var hs message.Headers
	for _, h := range m.Headers {
		if strings.EqualFold(h.Name, "Host") || strings.EqualFold(h.Name, "Content-Length") || strings.EqualFold(h.Name, ko.KeyHeader) || message.IsHopByHop(h.Name) {
			continue
		}
		hs = append(hs, h)
	}
	for _, h := range ko.Headers {
		hs = hs.Set(h.Name, h.Value)
	}
	ko.Headers = hs
	if o.Body == "" {
		ko.Body = m.Body
	}
	return nil
}

func keycheckRunOptions(o *keycheckOptions, p keycheck.Profile) map[string]any {
	m := map[string]any{"profile": p.Name, "burst": o.Burst, "settle": o.Settle.String(), "settle_max": o.SettleMax.String(),
		"probes": keycheckProbeSpecs(o).Labels(), "key_header": o.KeyHeader}
	if len(o.Checks) > 0 {
		m["checks"] = strings.Join(o.Checks, ",")
	}
	if o.FromSet {
		m["from"] = o.From
	}
	if o.TTL > 0 {
		m["ttl"] = o.TTL.String()
	}
	for k, v := range map[string]string{"serve": o.Serve, "reset_cmd": o.ResetCmd, "store_down_cmd": o.StoreDown, "store_up_cmd": o.StoreUp} {
		if v != "" {
			m[k] = o.probes.secrets.String(v)
		}
	}
	return m
}

func keycheckRun(ctx context.Context, o *keycheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := validateReportFlags(o.JSON, o.Reports); err != nil {
		return err
	}
	st, err := o.Store()
	if o.FromSet && o.ExistingStore != nil {
		if st != nil {
			st.Close()
		}
		st, err = o.ExistingStore()
	}
	if err != nil {
		return err
	}
	defer st.Close()
	ko, err := keycheckOptionsFor(ctx, o, st)
	if err != nil {
		return err
	}
	probes, err := probe.FromSpecs(ctx, keycheckProbeSpecs(o))
	if err != nil {
		return probeSpecErr(err)
	}
	defer probes.Close()
	ko.Probes = probes.Probes
	if !o.Quiet {
		hb := newHeartbeat(o.IO.ErrOut, heartbeatEvery)
		defer hb.stop()
		ko.Observer = keycheckProgress{w: hb}
		fmt.Fprintf(o.IO.ErrOut, "keycheck %s %s, profile %s\n", ko.Method, ko.Target, ko.Profile.Name)
	}
	if o.MaxTime <= 0 {
		o.MaxTime = defaultCheckMaxTime
	}
	ctx, cancel := context.WithTimeout(ctx, o.MaxTime)
	defer cancel()
	k, err := keycheck.Run(ctx, ko)
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = setupErr("the keycheck ran longer than --max-time %s and was stopped", report.Duration(o.MaxTime))
		case ctx.Err() != nil:
			return context.Canceled
		default:
			err = keycheckErr(err)
		}
		if k == nil {
			return err
		}
	}
	addKeyCheckTimeline(ctx, st, k, o.Reports)
	if werr := keycheckWriteReports(o, k, ctx.Err() != nil); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	if code := report.ExitCode(k.Verdict); code != 0 {
		return silentExit(code)
	}
	return nil
}

// keycheckErr words an engine error for the command line.
func keycheckErr(err error) error {
	var sv *check.ServeError
	if errors.As(err, &sv) {
		return setupErr("--serve: %s", serveErrText(sv))
	}
	return setupErr("%v", err)
}

// keycheckWriteReports writes k as the flags ask (writeReportFlags).
func keycheckWriteReports(o *keycheckOptions, k *report.KeyCheck, interrupted bool) error {
	return writeReportFlags(o.IO, o.JSON, o.Reports, !interrupted, reportDoc{
		text:   func(w io.Writer, color bool) error { return report.KeyCheckText(w, k, color) },
		json:   func(w io.Writer) error { return report.KeyCheckJSON(w, k) },
		target: func(t report.Target, stdout io.Writer) error { return t.WriteKeyCheck(stdout, k) },
	})
}

// keycheckProgress prints one line per check on stderr.
type keycheckProgress struct{ w *heartbeat }

func (p keycheckProgress) CheckStarted(name string) { p.w.phase(check.PhaseStart{Phase: name}) }

func (p keycheckProgress) Attempt(store.Attempt) {}

func (p keycheckProgress) CheckDone(res report.KeyCheckResult) {
	line := res.Observed
	if line == "" || res.Status != report.Pass {
		line = res.Why
	}
	fmt.Fprintf(p.w, "  %s %-16s %s (%s)\n", report.Symbol(res.Status), res.Name, oneLineText(line), report.Duration(res.Duration))
}

func oneLineText(s string) string {
	s = message.Printable(strings.ReplaceAll(s, "\n", " "))
	if len(s) > 140 {
		s = s[:140] + "…"
	}
	return s
}
