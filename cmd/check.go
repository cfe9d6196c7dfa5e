package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/address"
	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/exchange"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/redact"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

type checkOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)
	// ExistingStore opens the database only when it exists: deliveries
	// selected from the store need one (see openStore).
	ExistingStore func() (*store.Store, error)

	deliverySelector
	From      []string
	To        string
	ProbeSQL  []string
	DSN       string
	ProbeCmd  []string
	ProbeHTTP []string
	Sink      string
	SinkMatch []string
	// ProbeRedis are --probe-redis reads; SMTPSink and SMTPMatch the
	// SMTP sink's address and the messages it counts.
	ProbeRedis []string
	SMTPSink   string
	SMTPMatch  []string
	Secret     string
	SecretEnv  string
	// SignedURL (--signed-url) is the URL copies are signed for when the
	// provider signs one (check_signedurl.go); signedURL its parsed form.
	SignedURL string
	signedURL *url.URL
	N         int
	Burst     int
	Phases    []string
	ResetCmd  string
	// DedupeTTL and ForgetCmd feed the retention phase.
	DedupeTTL time.Duration
	ForgetCmd string
	Serve     string
	// KillCmd and StartCmd kill and restart, for crash, a handler not
	// killable through --serve's process group (docker compose, systemd).
	KillCmd, StartCmd string
	// ProviderTimeout 0 means the provider's own.
	ProviderTimeout time.Duration
	// Timeout bounds each request; 0 is the provider timeout plus 5s.
	Timeout time.Duration
	Settle  time.Duration
	// SettleSet: --settle was given, so the quiet period is not learned.
	SettleSet bool
	SettleMax time.Duration
	// MaxTime bounds the whole run (--max-time).
	MaxTime time.Duration
	// Jobs is how many deliveries with scoped probes are checked at once
	// (--jobs; 0: check.DefaultJobs).
	Jobs     int
	Seed     int64
	SeedSet  bool
	Insecure bool
	Reports  []string
	JSON     bool
	Quiet    bool

	// selection, with --shard, is what this shard was cut from.
	selection *shardedSelection

	// secrets are every secret the flags hold (the signing secret, the DSN
	// password, passwords and tokens in --probe-http URLs), hidden wherever
	// they appear in what check prints or stores.
	secrets redact.Secrets
}

func newCheckCmd(f *factory, runF func(*checkOptions) error) *cobra.Command {
	o := &checkOptions{IO: f.IO, Store: f.Store, ExistingStore: f.ExistingStore}
	var phases, configPath string
	cmd := &cobra.Command{
		Use:   "check [ID...] --to URL [probes] | check [NAME...] (hookreplay.yaml)",
		Short: "Prove that a handler does its work exactly once per event",
		Long: `Sends captured deliveries to a handler the way providers really deliver them —
once, then duplicates, a concurrent burst, after a lost response, with a
tampered body, after a crash, out of order — and reads side-effect probes
(settled) before and after each phase to judge that every event did its work
exactly once.

Phases (default: all the inputs allow):
  first    the delivery, sent once with a fresh event id: its effect E
  dups     n-1 more copies of that same event, one by one: nothing may change
  tamper   (--secret) altered body / 1h-old signature: 4xx and no effect
  burst    --burst copies of a fresh event at once: combined effect must be E
  lost     a fresh event whose answer is lost, then the retry: effect E once
  order    (2+ deliveries, --reset-cmd) every ordering must end in one state
  latency  first answer against the provider's timeout
  crash    (--serve) handler killed mid-delivery, restarted, retried: E once
  retention (--dedupe-ttl, or --probe-redis on the dedupe keys) event ids kept
           as long as the provider retries; with --forget-cmd, a late retry
           after forgetting the event is sent and judged

Before each phase the probes must be quiet; a phase during which effects of
earlier ones are still arriving at --settle-max is not judged, not failed.

Probes can be named: --probe-sql balance='SELECT …' (likewise --probe-cmd,
--probe-http, --probe-redis, --sink, --smtp-sink), and reports call them by
that name; an unnamed one is called sql1, cmd1, http1, redis1 (in the order
given), its full text shown once in the report's header. A name is a
lower-case word (letters, digits, _ and -, starting with a letter) directly
followed by = at the very start; anything else is the probe itself, so SQL
with = inside, URLs and commands setting an upper-case variable
(PGPASSWORD=x psql …) are read as they are.

Exit codes: 0 every judged phase passed, 1 a violation, 2 usage or setup error
(including a probe that cannot be read), 3 inconclusive (the probes saw no
effect of the first delivery), 130 interrupted (143 SIGTERM, 129 SIGHUP): the
reports are written for what was judged, the phase in progress marked
interrupted, and the --serve handler is stopped.`,
		Example: `  # the last captured Stripe delivery against a local handler, probing its database
  hookreplay check --last --to http://localhost:3000/webhooks/stripe \
    --probe-sql "SELECT balance FROM wallets WHERE customer='cus_QpB3d9uYnWx2Ke'" \
    --dsn sqlite:./app.db --secret-env STRIPE_WEBHOOK_SECRET

  # in CI: every check described in ./hookreplay.yaml (docs/guide.md, "A config file"); exit 1 if any violates
  hookreplay check

  # in CI, from committed deliveries, starting the handler, with a JUnit report
  hookreplay check --from testdata/webhooks.jsonl --to http://127.0.0.1:8080/hook \
    --serve "./bin/server" --reset-cmd "./scripts/reset-db" \
    --probe-cmd "psql -tAc 'select count(*) from emails' $DATABASE_URL" \
    --report junit=check.xml --report markdown=$GITHUB_STEP_SUMMARY

  # count calls to a downstream API: point the handler at the sink
  EMAIL_API_URL=http://127.0.0.1:9100 ./server &
  hookreplay check 42 --to http://127.0.0.1:8080/hook --sink 127.0.0.1:9100

  # count receipts: the handler sends mail through the built-in SMTP sink
  SMTP_HOST=127.0.0.1 SMTP_PORT=2525 ./server &
  hookreplay check 42 --to 8080/hook --smtp-sink 2525 --smtp-match 'subject:Your receipt*'

  # a Redis dedupe key and the jobs it enqueues (docs/probes.md has recipes)
  hookreplay check 42 --to 8080/hook --probe-redis "redis://127.0.0.1:6379/0 KEYS-COUNT 'evt:*'" \
    --probe-redis 'jobs=redis://127.0.0.1:6379/0 LLEN rq:queue:default'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if path := checkConfigPath(cmd, configPath, args); path != "" {
				return checkConfigRun(cmd.Context(), cmd, o, path, args, runF)
			}
			ids, err := parseDeliveryIDs(args)
			if err != nil {
				return err
			}
			o.IDs = ids
			if err := checkEngineArgs(cmd, o, phases); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return redactExit(checkRun(cmd.Context(), o), &o.secrets)
		},
	}
	fl := cmd.Flags()
	o.addLastFlag(fl, "check")
	o.addEventIDFlag(fl, "check")
	o.addOnePerTypeFlag(fl, "check")
	o.addSelectFilterFlags(fl)
	o.addShardFlag(fl)
	fl.StringArrayVar(&o.From, "from", nil, "read deliveries from a JSONL file written by 'hookreplay export --format jsonl' (repeatable)")
	checkEngineFlags(fl, o, &phases)
	// Not --timeout: that name is kept for a per-request timeout, as
	// replay and send use it.
	fl.IntVar(&o.Jobs, "jobs", 0, fmt.Sprintf("deliveries checked at once when the probes are scoped to each delivery's event ({{json:data.object.customer}}, docs/guide.md); with probes that are not scoped, the deliveries after the first are checked as a group; 1 checks every delivery alone, one at a time; N is obeyed as given (default: 8 per CPU, at most 16, and fewer while the handler answers over twice as slow as it did alone, docs/guide.md; at most %d)", check.MaxJobs))
	fl.DurationVar(&o.MaxTime, "max-time", defaultCheckMaxTime, "stop the whole run after this long (exit 2), writing the reports of what was judged so far")
	fl.StringArrayVar(&o.Reports, "report", nil, "also write a report: json=PATH, junit=PATH, markdown=PATH, html=PATH, text=PATH (repeatable; PATH - is stdout, instead of the text report)")
	fl.BoolVar(&o.JSON, "json", false, "print the JSON report on stdout instead of text")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress lines on stderr")
	addConfigFlag(fl, &configPath)
	return cmd
}

// checkEngineFlags registers the flags that configure the check itself (the
// handler, probes, phases, timing): check and tui share them.
func checkEngineFlags(fl *pflag.FlagSet, o *checkOptions, phases *string) {
	urlFlag(fl, &o.To, "to", "", "the handler's URL (required), e.g. http://localhost:3000/webhooks or 3000/webhooks")
	checkProbeFlags(fl, o)
	fl.StringVar(&o.Secret, "secret", "", "the handler's signing secret: copies are re-signed and given fresh event ids (prefer --secret-env)")
	fl.StringVar(&o.SecretEnv, "secret-env", "", "name of the environment variable holding the signing secret")
	fl.StringVar(&o.SignedURL, "signed-url", "", signedURLUsage())
	fl.IntVarP(&o.N, "copies", "n", 10, "copies of the first delivery in first+dups")
	// --n was check's name for -n before replay and check agreed on --copies;
	// kept, hidden, so scripts that spell it out do not break.
	fl.IntVar(&o.N, "n", 10, "copies of the first delivery in first+dups")
	_ = fl.MarkDeprecated("n", "use -n or --copies")
	fl.IntVar(&o.Burst, "burst", 20, "concurrent copies in the burst phase")
	fl.StringVar(phases, "phases", "", "comma-separated phases to run: "+strings.Join(check.AllPhases, ","))
	fl.StringVar(&o.ResetCmd, "reset-cmd", "", "shell command restoring the handler's state (before each ordering; makes burst/lost/crash exact)")
	fl.DurationVar(&o.DedupeTTL, "dedupe-ttl", 0, "how long the handler remembers an event id (e.g. 24h); retention fails when the provider retries for longer (default: read from the TTL of the Redis keys a fresh event creates)")
	fl.StringVar(&o.ForgetCmd, "forget-cmd", "", "shell command making the handler forget event $HOOKREPLAY_EVENT_ID (e.g. redis-cli DEL evt:$HOOKREPLAY_EVENT_ID): retention then sends the late retry and judges it")
	fl.StringVar(&o.Serve, "serve", "", "shell command starting the handler on --to's address; stopped afterwards (needed by crash, unless --kill-cmd and --start-cmd are given); a command that exits 0 leaving its server running is waited for")
	fl.StringVar(&o.KillCmd, "kill-cmd", "", "shell command killing the handler for crash, e.g. 'docker compose kill -s SIGKILL app' (with --start-cmd; without --serve, the running handler is used and left running)")
	fl.StringVar(&o.StartCmd, "start-cmd", "", "shell command starting the handler again after --kill-cmd, e.g. 'docker compose start app'; hookreplay waits until --to's address accepts connections")
	fl.DurationVar(&o.ProviderTimeout, "provider-timeout", 0, "the provider's answer timeout, judged by latency (default: the provider's: "+timeoutsHelp()+")")
	fl.DurationVar(&o.Timeout, "timeout", 0, "per request: connect, send and wait for the answer (default: --provider-timeout plus 5s)")
	fl.DurationVar(&o.Settle, "settle", probe.DefaultSettle, "probes must hold still this long before a reading counts (asynchronous handlers); when not given, it comes down to 3× the time one event's effects took (at least 100ms) once the first delivery showed it")
	fl.DurationVar(&o.SettleMax, "settle-max", probe.DefaultSettleMax, "longest wait for probes to settle")
	fl.BoolVar(&o.Insecure, "insecure", false, "accept an https handler's self-signed or otherwise unverifiable certificate")
	fl.Int64Var(&o.Seed, "seed", 0, "seed of the order phase's shuffles (default: random, printed)")
}

// checkProbeFlags declares the probe flags (--probe-sql, --dsn,
// --probe-cmd, --probe-http, --probe-redis, --sink, --smtp-sink and their
// matches): check, tui and keycheck share them.
func checkProbeFlags(fl *pflag.FlagSet, o *checkOptions) {
	fl.StringArrayVar(&o.ProbeSQL, "probe-sql", nil, "probe: a SQL query against --dsn, optionally named (balance='SELECT …'); a single numeric cell is compared as a number (repeatable)")
	fl.StringVar(&o.DSN, "dsn", "", "database for --probe-sql: sqlite:PATH or postgres://...")
	fl.StringArrayVar(&o.ProbeCmd, "probe-cmd", nil, "probe: a shell command whose trimmed stdout is the value, optionally named (emails='./count-emails') (repeatable)")
	fl.StringArrayVar(&o.ProbeHTTP, "probe-http", nil, "probe: the body of a GET of this URL, optionally named (state=http://…) (repeatable)")
	fl.StringArrayVar(&o.SinkMatch, "sink-match", nil, "count only the sink calls matching 'METHOD /path/glob' (e.g. 'POST /repos/*/issues/*/comments', or 'GET /path' for a read that does work; repeatable); others are listed apart")
	fl.StringVar(&o.Sink, "sink", "", "serve a stand-in downstream API at ADDR ([NAME=]ADDR) that records calls; the count of those that are not reads (GET, HEAD, OPTIONS) is a probe; a bare port means 127.0.0.1:PORT")
	fl.StringArrayVar(&o.ProbeRedis, "probe-redis", nil, "probe: a Redis read, '[NAME=]redis://HOST:PORT/DB COMMAND', COMMAND one of "+redisCommandsHelp()+" (repeatable)")
	fl.StringVar(&o.SMTPSink, "smtp-sink", "", "serve a stand-in mail server at ADDR ([NAME=]ADDR, probe name emails by default): every message accepted is counted as an effect; a bare port means 127.0.0.1:PORT")
	fl.StringArrayVar(&o.SMTPMatch, "smtp-match", nil, "count only the emails matching FIELD:GLOB, FIELD to, from or subject (e.g. 'to:*@example.com', 'subject:Your receipt*'; repeatable)")
}

// checkEngineArgs completes the engine flags once parsed: phases, seed, secret.
func checkEngineArgs(cmd *cobra.Command, o *checkOptions, phases string) error {
	if phases != "" {
		for _, p := range strings.Split(phases, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if !isPhase(p) {
				return usageErr("--phases: unknown phase %q (known: %s)", p, strings.Join(check.AllPhases, ","))
			}
			o.Phases = append(o.Phases, p)
		}
	}
	o.SeedSet = cmd.Flags().Changed("seed")
	o.SettleSet = cmd.Flags().Changed("settle")
	return resolveCheckSecret(o)
}

func isPhase(p string) bool {
	_, ok := check.PhaseNamed(p)
	return ok
}

func resolveCheckSecret(o *checkOptions) error {
	secret, err := secretFlags(o.Secret, o.SecretEnv)
	if err != nil {
		return err
	}
	o.Secret = secret
	o.secrets.Add(secret)
	o.secrets.AddURL(o.DSN)
	for _, h := range o.ProbeHTTP {
		o.secrets.AddURL(h)
	}
	// PGPASSWORD=… psql …: kept out of the run's options, which a team
	// store shows to everyone who may read it.
	for _, c := range []string{o.ResetCmd, o.Serve, o.ForgetCmd, o.KillCmd, o.StartCmd} {
		o.secrets.AddCommand(c)
	}
	for _, c := range o.ProbeCmd {
		_, c = probe.SplitName(c)
		o.secrets.AddCommand(c)
	}
	for _, r := range o.ProbeRedis {
		_, spec := probe.SplitName(r)
		if u, _, _ := strings.Cut(strings.TrimSpace(spec), " "); u != "" {
			o.secrets.AddURL(u)
		}
	}
	return nil
}

// redisCommandsHelp lists the reads a --probe-redis runs.
func redisCommandsHelp() string {
	var out []string
	for _, c := range probe.RedisCommands {
		if c.Arg == "" {
			out = append(out, c.Name)
		} else {
			out = append(out, c.Name+" "+strings.ToUpper(c.Arg[:1])+c.Arg[1:])
		}
	}
	return strings.Join(out, ", ")
}

// redactExit hides secrets in the message of the error check ends with.
func redactExit(err error, s *redact.Secrets) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		c := *ee
		c.Err = s.Error(c.Err)
		return &c
	}
	return s.Error(err)
}

// checkValidate catches usage errors before anything is sent.
func checkValidate(o *checkOptions) (*url.URL, error) {
	noDelivery := len(o.IDs) == 0 && !o.Last && len(o.EventIDs) == 0 && !o.OnePerType && len(o.From) == 0
	if o.To == "" && noDelivery {
		// A bare 'hookreplay check' where there is no hookreplay.yaml.
		return nil, usageErr("check needs deliveries, the handler's URL and a probe: hookreplay check --last --to URL --probe-sql QUERY --dsn DSN (see 'hookreplay check --help'), or a hookreplay.yaml in this directory (docs/guide.md, \"A config file\")")
	}
	if err := o.validateFilters(); err != nil {
		return nil, err
	}
	if noDelivery {
		return nil, usageErr("which delivery? give an ID (see 'hookreplay list'), --last, --event-id E, --one-per-type or --from FILE")
	}
	u, err := checkValidateEngine(o)
	if err != nil {
		return nil, err
	}
	if err := validateReportFlags(o.JSON, o.Reports); err != nil {
		return nil, err
	}
	return u, nil
}

// checkValidateEngine catches usage errors in the engine flags.
func checkValidateEngine(o *checkOptions) (*url.URL, error) {
	if o.To == "" {
		return nil, usageErr("--to URL is required: where the handler listens, e.g. --to http://127.0.0.1:3000/webhooks")
	}
	u, err := handlerAddr("--to", o.To)
	if err != nil {
		return nil, err
	}
	if o.signedURL, err = checkSignedURL(o.SignedURL); err != nil {
		return nil, err
	}
	if err := checkValidateProbes(o, "the handler changes"); err != nil {
		return nil, err
	}
	if err := intFlagIn("-n", o.N, 1, maxCopies); err != nil {
		return nil, err
	}
	if err := intFlagIn("--burst", o.Burst, 2, maxConcurrency); err != nil {
		return nil, err
	}
	if err := intFlagIn("--jobs", o.Jobs, 0, check.MaxJobs); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
		lo   time.Duration
	}{{"--settle", o.Settle, 1}, {"--settle-max", o.SettleMax, 1}, {"--dedupe-ttl", o.DedupeTTL, 0}, {"--provider-timeout", o.ProviderTimeout, 0}, {"--timeout", o.Timeout, 0}, {"--max-time", o.MaxTime, 0}} {
		if err := durationFlagIn(d.flag, d.v, d.lo, maxDuration); err != nil {
			return nil, err
		}
	}
	if o.SettleMax < o.Settle {
		return nil, usageErr("--settle must be positive and --settle-max at least --settle")
	}
	if (o.KillCmd == "") != (o.StartCmd == "") {
		return nil, usageErr("--kill-cmd and --start-cmd go together: crash kills the handler with one and starts it again with the other")
	}
	if phase, req, unmet := checkUnmet(o.Phases, checkGives(o)); unmet {
		return nil, checkNeedErr(phase, req)
	}
	return u, nil
}

// checkValidateProbes catches usage errors in the probe flags and
// completes the sink addresses; what ends the no-probe message ("the
// handler changes").
func checkValidateProbes(o *checkOptions, what string) error {
	if checkProbeSpecs(o).Empty() {
		return usageErr("no probe given: add --probe-sql QUERY --dsn DSN (or --probe-cmd CMD, --probe-http URL, --probe-redis 'URL COMMAND', --sink ADDR, --smtp-sink ADDR) so hookreplay can see what %s", what)
	}
	if len(o.ProbeSQL) > 0 && o.DSN == "" {
		return usageErr("--probe-sql needs --dsn sqlite:PATH or --dsn postgres://...")
	}
	if len(o.SinkMatch) > 0 && o.Sink == "" {
		return usageErr("--sink-match selects calls to the sink: give --sink ADDR too")
	}
	if len(o.SMTPMatch) > 0 && o.SMTPSink == "" {
		return usageErr("--smtp-match selects emails sent to the SMTP sink: give --smtp-sink ADDR too")
	}
	if o.DSN != "" && len(o.ProbeSQL) == 0 {
		return usageErr("--dsn is given but no --probe-sql query")
	}
	if d := o.DSN; d != "" && !strings.HasPrefix(d, "sqlite:") && !strings.Contains(d, "://") && !strings.ContainsAny(d, "= \t") {
		// A bare file name, the usual slip: say the form that works (it
		// said "sql probe: unsupported dsn"). Anything with = or a space
		// may be key=value settings holding a password: not repeated.
		return usageErr("--dsn %s: want sqlite:PATH or postgres://USER@HOST/DB (a SQLite file: --dsn sqlite:%s)", d, d)
	}
	if err := checkProbeSpecs(o).Check(); err != nil {
		return probeSpecErr(err)
	}
	if o.Sink != "" {
		name, addr := probe.SplitName(o.Sink)
		addr = listenAddr(addr)
		if err := checkListenAddr(addr); err != nil {
			return usageErr("--sink %s: %v", addr, err)
		}
		if name != "" {
			addr = name + "=" + addr
		}
		o.Sink = addr
	}
	if o.SMTPSink != "" {
		name, addr := probe.SplitName(o.SMTPSink)
		addr = listenAddr(addr)
		if err := checkListenAddr(addr); err != nil {
			return usageErr("--smtp-sink %s: %v", addr, err)
		}
		if name != "" {
			addr = name + "=" + addr
		}
		o.SMTPSink = addr
	}
	return nil
}

// hostPort is u's host:port, with the scheme's default port.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// openStore opens the database the run is recorded in. With --from the
// deliveries come from files and the database is created when absent (a CI
// job's fresh --db); deliveries selected from the store (IDs, --last,
// --event-id, a config's filters) need it to exist, so a check run in the
// wrong directory or with a mistyped --db says so instead of creating an
// empty database and reporting that nothing was captured in it.
func (o *checkOptions) openStore(ctx context.Context) (*store.Store, error) {
	if len(o.From) > 0 || o.ExistingStore == nil {
		return o.Store()
	}
	st, err := o.ExistingStore()
	if err != nil {
		return nil, err
	}
	if err := st.CheckWritable(ctx); err != nil {
		st.Close()
		return nil, setupErr("%v", err)
	}
	return st, nil
}

// checkHandshakesOnly is the error for a check, given no probe, of
// deliveries that are all a provider's handshake (Meta's GET verification
// request): no probe would help, since there is no event to do work for.
// nil when a delivery is an event, or when they cannot be read here (from
// an existing store only: a missing probe must not create a database); the
// missing probe is then the error.
func checkHandshakesOnly(ctx context.Context, o *checkOptions) error {
	if len(o.From) > 0 || o.ExistingStore == nil {
		return nil
	}
	st, err := o.ExistingStore()
	if err != nil {
		return nil
	}
	defer st.Close()
	ds, err := loadCheckDeliveries(ctx, o, st)
	if err != nil || len(ds) == 0 {
		return nil
	}
	var what string
	for _, d := range ds {
		if what = verify.Handshake(verify.Lookup(d.Provider), d.Request()); what == "" {
			return nil
		}
	}
	if len(ds) == 1 {
		return usageErr("delivery %d is %s, not an event: there is no work to do exactly once, so no probe to add; check a delivery of an event the handler acts on (hookreplay list --provider %s)",
			ds[0].ID, what, ds[0].Provider)
	}
	return usageErr("the %d selected deliveries are handshakes, not events (%s): there is no work to do exactly once, so no probe to add; check deliveries of events the handler acts on (hookreplay list --provider %s)",
		len(ds), what, ds[0].Provider)
}

// defaultCheckMaxTime is --max-time's default: generous, so that only a run
// that is stuck is stopped.
const defaultCheckMaxTime = 10 * time.Minute

func checkRun(ctx context.Context, o *checkOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	u, err := checkValidate(o)
	if err != nil {
		if checkProbeSpecs(o).Empty() {
			if herr := checkHandshakesOnly(ctx, o); herr != nil {
				return herr
			}
		}
		return err
	}
	st, err := o.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ds, err := loadCheckDeliveries(ctx, o, st)
	if err != nil {
		return err
	}
	if sel := o.selection; sel != nil && !o.Quiet {
		fmt.Fprintf(o.IO.ErrOut, "shard %s: %d of the %d selected deliveries\n", sel.Spec, len(ds), sel.Selected)
	}
	leftNote := handshakesNote(o.handshakesLeft)
	if leftNote != "" && !o.Quiet {
		fmt.Fprintln(o.IO.ErrOut, leftNote)
	}
	if len(ds) == 0 && o.selection != nil {
		// --shard K/N with fewer than K deliveries selected: this part
		// is empty, and its report says so for 'report merge'.
		return checkWriteReports(o, emptyShardReport(o, u), false)
	}
	var obs check.Observer
	var multi *multiProgress
	if !o.Quiet {
		hb := newHeartbeat(o.IO.ErrOut, heartbeatEvery)
		defer hb.stop()
		multi = newMultiProgress(hb, o.IO.ErrTerminal())
		obs = checkProgress{w: hb, hb: hb, multi: multi}
	}
	if o.MaxTime <= 0 {
		o.MaxTime = defaultCheckMaxTime
	}
	ctx, cancel := context.WithTimeout(ctx, o.MaxTime)
	defer cancel()
	c, err := checkEngine(ctx, o, u, st, ds, obs)
	multi.stop()
	if err != nil && c == nil {
		return err
	}
	if leftNote != "" {
		c.Notes = append([]string{leftNote}, c.Notes...)
	}
	addCheckTimeline(ctx, st, c, o.Reports)
	if werr := checkWriteReports(o, c, err == errInterrupted); werr != nil {
		return werr
	}
	if err != nil {
		// Stopped part way: the reports above hold what was judged.
		return err
	}
	if code := report.ExitCode(c.Verdict); code != 0 {
		return silentExit(code)
	}
	return nil
}

// checkWriteReports writes c as the flags ask (writeReportFlags). An
// interrupted run's is not paged: the user stopped it, possibly by closing
// the terminal.
func checkWriteReports(o *checkOptions, c *report.Check, interrupted bool) error {
	return writeReportFlags(o.IO, o.JSON, o.Reports, !interrupted, reportDoc{
		text:   func(w io.Writer, color bool) error { return report.Text(w, c, color) },
		json:   func(w io.Writer) error { return report.JSON(w, c) },
		target: func(t report.Target, stdout io.Writer) error { return t.Write(stdout, c) },
	})
}

// checkEngine runs the check of ds against u as the engine flags say,
// reporting to obs (nil: nothing), and returns its report or the error
// worded for the command line.
func checkEngine(ctx context.Context, o *checkOptions, u *url.URL, st *store.Store, ds []*store.Delivery, obs check.Observer) (*report.Check, error) {
	if phase, req, unmet := checkUnmet(o.Phases, func(in check.Input) bool { return in != check.InputTwoDeliveries || len(ds) >= 2 }); unmet {
		return nil, usageErr("phase %s needs %s (got %d)", phase, orPlain(req.Need), len(ds))
	}
	if !o.SeedSet {
		o.Seed = time.Now().UnixNano() % 1_000_000
	}

	probes, err := probe.FromSpecs(ctx, checkProbeSpecs(o))
	if err != nil {
		return nil, probeSpecErr(err)
	}
	defer probes.Close()
	var srv *check.Server
	if o.Serve != "" || o.KillCmd != "" {
		srv = &check.Server{Cmd: o.Serve, Addr: hostPort(u), KillCmd: o.KillCmd, StartCmd: o.StartCmd}
	}
	opts := check.Options{
		Target: u, SignedURL: o.signedURL, Probes: probes.Probes, ProbeDefs: checkProbeSpecs(o).Labels(), Sink: probes.Sink, SMTP: probes.SMTP, Secret: o.Secret, N: o.N, Burst: o.Burst, Phases: o.Phases,
		ResetCmd: o.ResetCmd, DedupeTTL: o.DedupeTTL, ForgetCmd: o.ForgetCmd, Serve: srv, ProviderTimeout: o.ProviderTimeout, Timeout: o.Timeout, Settle: o.Settle, SettleMax: o.SettleMax, LearnSettle: !o.SettleSet,
		Seed: o.Seed, Jobs: o.Jobs, Store: st, RunOptions: checkRunOptions(o), TLS: replayTLS(o.Insecure), Name: checkFlag, ErrorText: checkErrText,
	}
	for _, d := range ds {
		opts.Deliveries = append(opts.Deliveries, check.FromStore(d))
	}
	if obs != nil {
		opts.Observer = obs
	}
	if _, ok := obs.(checkProgress); ok {
		fmt.Fprintf(o.IO.ErrOut, "checking %d deliver%s against %s (seed %d)\n", len(ds), map[bool]string{true: "y", false: "ies"}[len(ds) == 1], u, o.Seed)
	}
	c, err := check.Run(ctx, opts)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return c, setupErr("the check ran longer than --max-time %s and was stopped; the reports hold what was judged until then", report.Duration(o.MaxTime))
		}
		if ctx.Err() != nil {
			// Interrupted: whatever failed on the way out (a store write
			// with the cancelled context) is not the error to report; the
			// report of what was judged is written all the same.
			return c, errInterrupted
		}
		return c, checkErr(err)
	}
	return c, nil
}

func checkRunOptions(o *checkOptions) map[string]any {
	m := map[string]any{"n": o.N, "burst": o.Burst, "settle": o.Settle.String(), "settle_max": o.SettleMax.String(),
		"secret": o.Secret != "", "seed": o.Seed}
	if o.Insecure {
		m["insecure"] = true
	}
	if len(o.Phases) > 0 {
		m["phases"] = strings.Join(o.Phases, ",")
	}
	// Commands may carry a secret literally (--serve "server --secret …"):
	// it never reaches the store or a report.
	redact := o.secrets.String
	if o.ResetCmd != "" {
		m["reset_cmd"] = redact(o.ResetCmd)
	}
	if o.Serve != "" {
		m["serve"] = redact(o.Serve)
	}
	if o.KillCmd != "" {
		m["kill_cmd"], m["start_cmd"] = redact(o.KillCmd), redact(o.StartCmd)
	}
	if o.ForgetCmd != "" {
		m["forget_cmd"] = redact(o.ForgetCmd)
	}
	if o.DedupeTTL > 0 {
		m["dedupe_ttl"] = o.DedupeTTL.String()
	}
	if o.Timeout > 0 {
		m["timeout"] = o.Timeout.String()
	}
	if o.ProviderTimeout > 0 {
		m["provider_timeout"] = o.ProviderTimeout.String()
	}
	m["probes"] = checkProbeSpecs(o).Labels()
	if len(o.SinkMatch) > 0 {
		m["sink_match"] = o.SinkMatch
	}
	if len(o.SMTPMatch) > 0 {
		m["smtp_match"] = o.SMTPMatch
	}
	if len(o.From) > 0 {
		m["from"] = o.From
	}
	if o.selection != nil {
		maps.Copy(m, o.selection.options())
	}
	return m
}

// loadCheckDeliveries resolves IDs, --last, --event-id and --from, in that
// order; --one-per-type picks from the --from files when there are any
// (a CI job over an export), else from the store.
func loadCheckDeliveries(ctx context.Context, o *checkOptions, st *store.Store) ([]*store.Delivery, error) {
	sel := o.deliverySelector
	if len(o.From) > 0 {
		sel.OnePerType = false
	}
	out, err := sel.load(ctx, st)
	if err != nil {
		return nil, err
	}
	o.handshakesLeft = sel.handshakesLeft
	var files []*store.Delivery
	for _, path := range o.From {
		f, err := os.Open(path)
		if err != nil {
			return nil, openErr("--from", path, err)
		}
		ds, err := store.ReadJSONL(f)
		f.Close()
		if err != nil {
			return nil, fromErr(path, err)
		}
		if len(ds) == 0 {
			return nil, usageErr("--from %s: no deliveries in the file", path)
		}
		files = append(files, ds...)
	}
	if len(o.From) > 0 && o.OnePerType {
		if files, err = o.onePerTypeOf(files); err != nil {
			return nil, err
		}
	}
	out = append(out, files...)
	if o.Shard.set() {
		var sel shardedSelection
		out, sel = shard(out, o.Shard)
		o.selection = &sel
	}
	return out, nil
}

// fromErr words a --from file that is not JSONL. A HAR, ngrok, curl or raw
// HTTP file (which import reads) is named as such, with the way to check
// it, rather than as broken JSONL.
func fromErr(path string, err error) error {
	if head, rerr := readHead(path, 64<<10); rerr == nil {
		if f, derr := exchange.Detect(head); derr == nil && f != exchange.JSONL {
			return usageErr("--from %s: a %s file, and --from reads JSONL ('hookreplay export' writes it): 'hookreplay import %s' stores its deliveries, then check the ids it prints", path, f, path)
		}
	}
	return usageErr("--from %s: %v", path, err)
}

// readHead reads at most n bytes from the start of the file at path.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

func checkProbeSpecs(o *checkOptions) probe.Specs {
	return probe.Specs{SQL: o.ProbeSQL, DSN: o.DSN, Cmd: o.ProbeCmd, HTTP: o.ProbeHTTP, Redis: o.ProbeRedis, Sink: o.Sink, SinkMatch: o.SinkMatch,
		SMTP: o.SMTPSink, SMTPMatch: o.SMTPMatch, Redact: o.secrets.String}
}

// probeSpecErr words a probe that could not be built with the flag that named it.
func probeSpecErr(err error) error {
	var se *probe.SpecError
	if !errors.As(err, &se) {
		return setupErr("%v", err)
	}
	switch se.Kind {
	case probe.SpecSink:
		return setupErr("--sink %s: %v", se.Spec, se.Err)
	case probe.SpecSMTP:
		return setupErr("--smtp-sink %s: %v", se.Spec, se.Err)
	case probe.SpecSinkMatch:
		return usageErr("--sink-match %v", se.Err)
	case probe.SpecSMTPMatch:
		return usageErr("--smtp-match %v", se.Err)
	case probe.SpecRedis:
		return usageErr("--probe-redis %s: %v", se.Spec, se.Err)
	case probe.SpecCmd:
		return usageErr("--probe-cmd %q: %v", se.Spec, se.Err)
	case probe.SpecHTTP:
		return usageErr("--probe-http %s: %v", address.Shown(se.Spec), se.Err)
	}
	return setupErr("--probe-sql: %v", se.Err)
}

// checkGives reports which check inputs the command line gives; two
// deliveries are counted once they are loaded.
func checkGives(o *checkOptions) func(check.Input) bool {
	return func(in check.Input) bool {
		switch in {
		case check.InputSecret, check.InputSecretSources:
			return o.Secret != ""
		case check.InputServe:
			return o.Serve != "" || o.KillCmd != ""
		case check.InputReset:
			return o.ResetCmd != ""
		}
		return true
	}
}
