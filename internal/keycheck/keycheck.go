// Package keycheck is the plan behind `hookreplay keycheck`: it proves that
// an API honours the Idempotency-Key request header — the other direction
// of the problem `check` solves for webhook receivers. It sends requests
// with fresh keys, replays, lost answers, last-byte-synchronised bursts,
// in-flight copies and reused keys, reads the side-effect probes settled
// before and after each check, and judges every answer against a Profile
// (bird, ietf, stripe, each value overridable).
//
// The checks are a registry (registry.go), one file each. Sending, bursts
// and lost answers are replay's; probes and settling are probe's; the run,
// its attempts, readings and verdicts are stored with kind "keycheck"; the
// report is report.KeyCheck. The engine never prints and never names a
// command-line flag: messages name inputs through Options.Name.
package keycheck

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/panics"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Route is another mutating route (--also): sent twice with one key.
type Route struct {
	Method string
	// Path may hold {id}: the id of the first answer (Options.IDPath).
	Path string
	Body []byte
}

// Options is everything one keycheck needs.
type Options struct {
	// Target is the API's URL: scheme and host, and the path (and query)
	// the body is sent to.
	Target *url.URL
	TLS    *tls.Config
	// Method is the mutating request's method (default POST).
	Method string
	// Headers go on every request (credentials, Content-Type). The key
	// header is set by the check.
	Headers message.Headers
	// Body is the request (may hold {{nonce}}, replaced by a fresh token
	// per check). SlowBody runs long enough to be in flight; FailBody fails
	// with a 5xx the first time its nonce is seen; InvalidBody is refused
	// with a 4xx. nil: not given (the checks that need it are skipped).
	Body, SlowBody, FailBody, InvalidBody []byte
	// KeyHeader is the header's name (default Idempotency-Key).
	KeyHeader string
	// KeyPattern makes keys: {{uuid}} and {{nonce}} are replaced ("" : a
	// fresh UUID, 36 characters).
	KeyPattern string
	Profile    Profile
	// OtherAccount are the headers that make a request another account's
	// (they replace Headers of the same name).
	OtherAccount message.Headers
	Also         []Route
	// IDPath is the JSON path of the id in the first answer ("id").
	IDPath string
	// GetPath is the path safe-get GETs ("" : Target's path).
	GetPath string
	// StoreDownCmd and StoreUpCmd stop and start the idempotency store (sh -c).
	StoreDownCmd, StoreUpCmd string
	// TTL, when set, is how long keys are kept: expiry sends the key again after it.
	TTL time.Duration
	// Burst is the copies of one burst (default 20); BurstRounds how many
	// bursts a passing burst check sends (default 3).
	Burst, BurstRounds int
	// InFlightDelay is how long after the slow request its copy is sent
	// (default 150ms).
	InFlightDelay time.Duration
	// Checks selects checks; empty means all (those whose inputs are missing are skipped).
	Checks []string
	Probes []probe.Probe
	// ProbeDefs says what each probe is, as given.
	ProbeDefs []string
	// Serve, when set, starts the API first and stops it afterwards.
	Serve *check.Server
	// ResetCmd, when set, runs (sh -c) before the first check and before
	// each check that starts from a fresh operation (checkDef.fresh).
	ResetCmd string
	// Timeout bounds each request (default 30s).
	Timeout time.Duration
	// Settle and SettleMax tune probe settling; LearnSettle lets the quiet
	// period come down once the first request showed how long its effects take.
	Settle, SettleMax time.Duration
	LearnSettle       bool
	Store             *store.Store
	RunOptions        map[string]any
	Observer          Observer
	// Name is how messages mention an input (cmd: its flag).
	Name func(Input) string
}

// DefaultKeyHeader is the header keys are sent in.
const DefaultKeyHeader = "Idempotency-Key"

type runner struct {
	o      Options
	obs    Observer
	k      *report.KeyCheck
	runID  int64
	target replay.Target
	path   string // request-target of Options.Target

	// e is E, the effect of one accepted operation.
	e     []delta
	first *sent // the first check's request and answer
	// replays are the replay check's answers, for replay-header.
	replays []store.Attempt

	quiet, effDur time.Duration
	gen           int // sends and commands so far
	last          *reading
	lastGen       int
	copies        map[string]int
	// headerTried lists the other key headers keyIgnored tried (nil: not
	// tried yet).
	headerTried []string
	// resets counts the reset command's runs; idFrom, when set, is the
	// answer whose id fills {id} instead of the first's, which a reset
	// may have removed (idStale: a reset ran since it was taken).
	resets  int
	idFrom  *store.Attempt
	idStale bool
	// gone, when set, says why the API cannot be reached any more: the
	// checks after are not run.
	gone string
	// keyHonoured: replay sent the same request again with the key and
	// the probes did not move, so the API reads the key where it is sent;
	// a burst in which every copy ran is then a race, not a key ignored.
	keyHonoured bool
}

// sent is a request and its answer.
type sent struct {
	req *message.Request
	a   store.Attempt
}

// Run performs the keycheck and returns its report. A *SetupError (or a
// context error) means no verdict could be reached; the report of what was
// judged until then comes with it when there is one (verdict error).
func Run(ctx context.Context, o Options) (*report.KeyCheck, error) {
	if len(o.Probes) == 0 {
		return nil, setupf("no probe: keycheck needs %s to see the API's side effects", o.name(InputProbe))
	}
	if len(o.Body) == 0 {
		return nil, setupf("no request body: give %s", o.name(InputBody))
	}
	o = withDefaults(o)
	r := &runner{o: o, obs: o.Observer, copies: map[string]int{}, quiet: o.Settle}
	r.k = &report.KeyCheck{SchemaVersion: report.SchemaVersion, Kind: "keycheck", Target: o.Target.String(), Method: o.Method,
		KeyHeader: o.KeyHeader, Profile: o.Profile.Name, Rules: o.Profile.Rules(), StartedAt: time.Now(), Options: o.RunOptions}
	for _, p := range o.Probes {
		r.k.Probes = append(r.k.Probes, p.Name())
	}
	if len(o.ProbeDefs) == len(o.Probes) {
		r.k.ProbeDefs = o.ProbeDefs
	}
	base := *o.Target
	r.path = base.RequestURI()
	base.Path, base.RawPath, base.RawQuery, base.Fragment = "", "", "", ""
	r.target = replay.Target{URL: &base, Timeout: o.Timeout, TLS: o.TLS}
	if err := r.startRun(ctx); err != nil {
		return nil, err
	}
	err := r.runCaught(ctx)
	r.k.FinishedAt = time.Now()
	if err != nil {
		r.k.Verdict = report.VerdictError
		r.finishRun(ctx, err)
		if len(r.k.Checks) == 0 {
			return nil, err
		}
		return r.k, err
	}
	r.k.Verdict = r.k.ComputeVerdict()
	if err := r.finishRun(ctx, nil); err != nil {
		return nil, err
	}
	return r.k, nil
}

func withDefaults(o Options) Options {
	if o.Method == "" {
		o.Method = "POST"
	}
	o.Method = strings.ToUpper(o.Method)
	if o.KeyHeader == "" {
		o.KeyHeader = DefaultKeyHeader
	}
	if o.Profile.Name == "" {
		o.Profile = Bird
	}
	if o.IDPath == "" {
		o.IDPath = "id"
	}
	if o.Burst <= 1 {
		o.Burst = 20
	}
	if o.BurstRounds <= 0 {
		o.BurstRounds = 3
	}
	if o.InFlightDelay <= 0 {
		o.InFlightDelay = 150 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = replay.DefaultTimeout
	}
	if o.Settle <= 0 {
		o.Settle = probe.DefaultSettle
	}
	if o.SettleMax < o.Settle {
		o.SettleMax = max(o.Settle, probe.DefaultSettleMax)
	}
	if o.Observer == nil {
		o.Observer = NopObserver{}
	}
	return o
}

// name is how messages mention in.
func (o Options) name(in Input) string {
	if o.Name != nil {
		if s := o.Name(in); s != "" {
			return s
		}
	}
	return in.String()
}

func (r *runner) name(in Input) string { return r.o.name(in) }

func (r *runner) enabled(name string) bool {
	return len(r.o.Checks) == 0 || slices.Contains(r.o.Checks, name)
}

func (r *runner) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	if !slices.Contains(r.k.Notes, n) {
		r.k.Notes = append(r.k.Notes, n)
	}
}

// runCaught runs the checks; a panic (a library's, or a bug of
// hookreplay's) ends the run as an error in one line naming where it
// happened, so the report of the checks that ran is still written.
func (r *runner) runCaught(ctx context.Context) (err error) {
	defer panics.Catch(&err)
	return r.run(ctx)
}

func (r *runner) run(ctx context.Context) error {
	if r.o.Serve != nil {
		if err := r.o.Serve.Start(ctx); err != nil {
			return &SetupError{Err: err}
		}
		defer r.o.Serve.Stop()
	}
	if r.o.ResetCmd != "" {
		if err := r.shell(ctx, r.o.ResetCmd); err != nil {
			return setupf("reset command: %v", err)
		}
		r.resets++
		defer func() {
			if r.resets > 1 {
				r.note("%s ran %d times: before the first check and before each check that starts from a fresh operation", r.name(InputReset), r.resets)
			}
		}()
	}
	firstOK := true
	var firstWhy string
	for _, c := range registry {
		if c.name != nameFirst && !r.enabled(c.name) {
			continue
		}
		start := time.Now()
		var res *report.KeyCheckResult
		switch {
		case c.name != nameFirst && !firstOK:
			res = &report.KeyCheckResult{Name: c.name, Status: report.Skip, Why: "not run: " + firstWhy}
		case r.gone != "":
			res = &report.KeyCheckResult{Name: c.name, Status: report.Skip, Why: "not run: " + r.gone}
		default:
			if why := r.unmet(c); why != "" {
				res = &report.KeyCheckResult{Name: c.name, Status: report.Skip, Why: why}
				break
			}
			r.obs.CheckStarted(c.name)
			var err error
			if c.fresh {
				if err := r.reset(ctx, c.name); err != nil {
					return err
				}
			}
			res, err = c.run(r, ctx)
			if err != nil {
				if res == nil {
					res = &report.KeyCheckResult{}
				}
				res.Name, res.Status, res.Why = c.name, report.Error, "error: "+err.Error()
				res.Duration = time.Since(start)
				r.k.Checks = append(r.k.Checks, *res)
				r.obs.CheckDone(*res)
				return err
			}
			res.Duration = time.Since(start)
		}
		res.Name = c.name
		if c.name == nameFirst && res.Status != report.Pass {
			firstOK, firstWhy = false, "first "+string(res.Status)+": "+res.Why
		}
		r.k.Checks = append(r.k.Checks, *res)
		r.obs.CheckDone(*res)
	}
	return nil
}

// reset runs the reset command, when there is one, before check starts
// from a fresh operation.
func (r *runner) reset(ctx context.Context, check string) error {
	if r.o.ResetCmd == "" {
		return nil
	}
	if err := r.shell(ctx, r.o.ResetCmd); err != nil {
		return setupf("reset command before %s: %v", check, err)
	}
	r.resets++
	r.idStale = true
	return nil
}

// shell runs cmd with sh -c; its output ends the error when it fails.
func (r *runner) shell(ctx context.Context, cmd string) error {
	r.gen++
	out, err := exec.CommandContext(ctx, "sh", "-c", cmd).CombinedOutput()
	if err != nil {
		if s := strings.TrimSpace(string(out)); s != "" {
			if len(s) > 300 {
				s = s[len(s)-300:]
			}
			return fmt.Errorf("%q: %v: %s", cmd, err, s)
		}
		return fmt.Errorf("%q: %v", cmd, err)
	}
	return nil
}

// startRun stores the run, when there is a store.
func (r *runner) startRun(ctx context.Context) error {
	if r.o.Store == nil {
		return nil
	}
	opts := map[string]any{"method": r.o.Method}
	for k, v := range r.o.RunOptions {
		opts[k] = v
	}
	run := &store.Run{Kind: Kind, StartedAt: r.k.StartedAt, Target: r.o.Target.String(), Options: opts}
	if err := r.o.Store.CreateRun(ctx, run); err != nil {
		return setupf("%v", err)
	}
	r.runID, r.k.RunID = run.ID, run.ID
	return nil
}

// Kind is the kind keycheck runs are stored with.
const Kind = "keycheck"

// finishRun stores every verdict and the report as the run's summary.
func (r *runner) finishRun(ctx context.Context, runErr error) error {
	if r.o.Store == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	for _, c := range r.k.Checks {
		detail, _ := json.Marshal(c)
		msg := c.Why
		if msg == "" {
			msg = c.Observed
		}
		if err := r.o.Store.InsertVerdict(ctx, &store.VerdictRow{RunID: r.runID, Phase: c.Name, Status: string(c.Status), Message: msg, Detail: detail}); err != nil {
			return setupf("%v", err)
		}
	}
	if err := r.o.Store.FinishRun(ctx, r.runID, r.k.FinishedAt, r.k.Verdict, r.k); err != nil {
		return setupf("%v", err)
	}
	return nil
}

// Load returns the report of a finished keycheck run from the store.
func Load(ctx context.Context, st *store.Store, runID int64) (*report.KeyCheck, error) {
	run, err := st.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if run.Kind != Kind {
		return nil, fmt.Errorf("run %d is a %s run, not a keycheck", runID, run.Kind)
	}
	var k report.KeyCheck
	if err := json.Unmarshal(run.Summary, &k); err != nil || len(k.Checks) == 0 {
		return nil, fmt.Errorf("keycheck run %d did not finish (verdict %q)", runID, run.Verdict)
	}
	return &k, nil
}
