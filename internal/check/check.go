// Package check is the plan behind `hookreplay check`: it drives the replay
// engine through the phases (first, dups, burst, lost, tamper, latency, crash,
// order), reads the side-effect probes settled before and after each, stores
// every attempt, reading and verdict, and judges whether the handler did its
// work exactly once per event.
package check

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Phase names, in the order they run.
const (
	PhaseFirst   = "first"
	PhaseDups    = "dups"
	PhaseBurst   = "burst"
	PhaseLost    = "lost"
	PhaseOrder   = "order"
	PhaseTamper  = "tamper"
	PhaseLatency = "latency"
	PhaseCrash   = "crash"
)

// AllPhases lists every phase in run order.
var AllPhases = []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost, PhaseOrder, PhaseTamper, PhaseLatency, PhaseCrash}

// Delivery is one captured delivery to check.
type Delivery struct {
	ID        int64
	Provider  string
	EventID   string
	EventType string
	Req       *message.Request
}

// FromStore converts a stored delivery.
func FromStore(d *store.Delivery) Delivery {
	return Delivery{ID: d.ID, Provider: d.Provider, EventID: d.EventID, EventType: d.EventType, Req: d.Request()}
}

// Options is everything one check run needs.
type Options struct {
	Target *url.URL
	// TLS configures https targets (nil: system roots; --insecure skips verification).
	TLS        *tls.Config
	Deliveries []Delivery
	// Probes are read before and after every phase. The sink's probe, when
	// a sink is used, is one of them.
	Probes []probe.Probe
	// Sink, when set, is the stand-in downstream API whose calls are shown
	// per phase as effects.
	Sink *probe.Sink
	// Secret signs copies (fresh timestamps, fresh identities); "" keeps the
	// captured signature.
	Secret string
	// N is the number of copies in first+dups (default 10); Burst the number
	// of concurrent copies (default 20).
	N, Burst int
	// BurstRounds is how many bursts (each a fresh event) a passing burst
	// phase sends before it passes (default 3).
	BurstRounds int
	// Phases selects phases; empty means every phase the inputs allow.
	Phases []string
	// ResetCmd, when set, restores the handler's state (sh -c) before the
	// phases that are judged exactly and before each ordering.
	ResetCmd string
	// Serve, when set, is the handler process (needed by crash).
	Serve *Server
	// ProviderTimeout overrides the provider's answer timeout (latency).
	ProviderTimeout time.Duration
	// Settle and SettleMax tune probe.Settle.
	Settle, SettleMax time.Duration
	// Seed seeds the order phase's shuffles.
	Seed int64
	// Store, when set, records the run, attempts, readings and verdicts.
	Store *store.Store
	// RunOptions are recorded with the run (never secrets).
	RunOptions map[string]any
	// Progress receives one line per step (nil: nothing).
	Progress io.Writer
}

// SetupError is a problem with the check's inputs or environment (a probe
// that cannot be read, a reset command that fails): exit 2, never a verdict.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *SetupError) Unwrap() error { return e.Err }

func setupf(format string, a ...any) error { return &SetupError{Err: fmt.Errorf(format, a...)} }

// ProviderTimeouts are how long each provider waits for an answer before it
// counts the delivery as failed and retries (their documentation).
var ProviderTimeouts = map[string]time.Duration{
	"github":   10 * time.Second,
	"discord":  3 * time.Second,
	"slack":    3 * time.Second,
	"stripe":   30 * time.Second,
	"shopify":  30 * time.Second,
	"twilio":   15 * time.Second,
	"standard": 15 * time.Second,
	"svix":     15 * time.Second,
}

// defaultProviderTimeout is used for providers not in ProviderTimeouts.
const defaultProviderTimeout = 10 * time.Second

type runner struct {
	o        Options
	c        *report.Check
	runID    int64
	target   replay.Target
	answers  []time.Duration
	rng      *rand.Rand
	additive map[int64]*additivity
	// firstLat is the first delivery's first answer's latency.
	firstLat  time.Duration
	haveFirst bool
	// effSettle is the quiet period every reading waits for: --settle, or
	// longer once calibrate saw one event's effects take longer (effDur,
	// from sending to the last probe change).
	effSettle, effDur time.Duration
	// lastSent is when the last copy's send returned (UnixNano; copies are
	// sent from goroutines in crash).
	lastSent atomic.Int64
}

// Run performs the check and returns its report. A *SetupError (or a context
// error) means no verdict could be reached.
func Run(ctx context.Context, o Options) (*report.Check, error) {
	if len(o.Deliveries) == 0 {
		return nil, setupf("no delivery to check")
	}
	if len(o.Probes) == 0 {
		return nil, setupf("no probe given: add --probe-sql QUERY --dsn DSN, --probe-cmd CMD, --probe-http URL or --sink ADDR")
	}
	if o.N <= 0 {
		o.N = 10
	}
	if o.Burst <= 0 {
		o.Burst = 20
	}
	if o.Settle <= 0 {
		o.Settle = probe.DefaultSettle
	}
	if o.SettleMax <= 0 {
		o.SettleMax = probe.DefaultSettleMax
	}
	if err := checkSecret(o); err != nil {
		return nil, err
	}
	r := &runner{o: o, rng: rand.New(rand.NewSource(o.Seed)), additive: map[int64]*additivity{}, effSettle: o.Settle}
	r.c = &report.Check{SchemaVersion: report.SchemaVersion, Target: o.Target.String(), StartedAt: time.Now(),
		Options: o.RunOptions}
	for _, p := range o.Probes {
		r.c.Probes = append(r.c.Probes, p.Name())
	}
	r.target = replay.Target{URL: o.Target, Timeout: r.attemptTimeout(), TLS: o.TLS}
	if o.Store != nil {
		run := &store.Run{Kind: "check", StartedAt: r.c.StartedAt, Target: o.Target.String(), Seed: o.Seed, Options: o.RunOptions}
		if err := o.Store.CreateRun(ctx, run); err != nil {
			return nil, setupf("%v", err)
		}
		r.runID, r.c.RunID = run.ID, run.ID
	}
	err := r.run(ctx)
	r.c.FinishedAt = time.Now()
	if r.o.Sink != nil && err == nil {
		listed := 0
		for _, d := range r.c.Deliveries {
			for _, p := range d.Phases {
				listed += len(p.Effects)
			}
		}
		if r.c.Order != nil {
			listed += len(r.c.Order.Effects)
		}
		if total := r.o.Sink.Len(); total > listed {
			r.note("the sink received %d calls in all; %d of them (the control event's, or calls made between two phases' readings) are not listed under a phase", total, total-listed)
		}
	}
	if r.effDur > 0 {
		r.note("effective settle %s: one event's effects took up to %s from sending to the last probe change, so every reading waited until the probes had not changed for %s after the last copy sent (and for at least --settle %s)",
			roundDur(r.effSettle), roundDur(r.effDur), roundDur(r.effSettle), r.o.Settle)
	}
	if err != nil {
		if o.Store != nil {
			_ = o.Store.FinishRun(context.WithoutCancel(ctx), r.runID, r.c.FinishedAt, "error", map[string]string{"error": err.Error()})
		}
		return nil, err
	}
	r.c.Latency = r.latencySummary()
	r.c.Verdict = r.c.ComputeVerdict()
	if o.Store != nil {
		if err := r.storeVerdicts(ctx); err != nil {
			return nil, setupf("%v", err)
		}
		if err := o.Store.FinishRun(ctx, r.runID, r.c.FinishedAt, r.c.Verdict, r.c); err != nil {
			return nil, setupf("%v", err)
		}
	}
	return r.c, nil
}

func (r *runner) attemptTimeout() time.Duration {
	t := r.o.ProviderTimeout
	for _, d := range r.o.Deliveries {
		if pt := r.providerTimeout(d.Provider); pt > t {
			t = pt
		}
	}
	return t + 5*time.Second
}

func (r *runner) providerTimeout(provider string) time.Duration {
	if r.o.ProviderTimeout > 0 {
		return r.o.ProviderTimeout
	}
	if t, ok := ProviderTimeouts[provider]; ok {
		return t
	}
	return defaultProviderTimeout
}

func (r *runner) enabled(phase string) bool {
	if len(r.o.Phases) == 0 {
		return true
	}
	for _, p := range r.o.Phases {
		if p == phase {
			return true
		}
	}
	return false
}

func (r *runner) progress(format string, a ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, format+"\n", a...)
	}
}

// warn adds a run-level warning (shown next to the verdict), once.
func (r *runner) warn(w string) {
	for _, x := range r.c.Warnings {
		if x == w {
			return
		}
	}
	r.c.Warnings = append(r.c.Warnings, w)
}

// sharedKeyWarning puts the control event's warning, when it found that a
// second event changes nothing, first among ph's warnings, and into the
// message of a phase it left unjudged.
func (r *runner) sharedKeyWarning(d *Delivery, ph *report.PhaseResult) {
	ad := r.additive[d.ID]
	if ad == nil || !ad.none || ph == nil {
		return
	}
	ph.Warnings = append([]string{ad.warning}, ph.Warnings...)
	if ph.Status == report.NotJudged {
		ph.Message = "not judged: " + ad.warning
	}
}

func (r *runner) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	for _, x := range r.c.Notes {
		if x == n {
			return
		}
	}
	r.c.Notes = append(r.c.Notes, n)
}

func (r *runner) run(ctx context.Context) error {
	if r.o.Serve != nil {
		if err := r.o.Serve.Start(ctx); err != nil {
			return &SetupError{Err: err}
		}
		defer r.o.Serve.Stop()
	}
	needFirst := false
	for _, p := range []string{PhaseFirst, PhaseDups, PhaseBurst, PhaseLost, PhaseTamper, PhaseLatency, PhaseCrash} {
		needFirst = needFirst || r.enabled(p)
	}
	for _, d := range r.o.Deliveries {
		if !needFirst { // only order was asked for
			r.c.Deliveries = append(r.c.Deliveries, report.DeliveryResult{DeliveryID: d.ID, Provider: d.Provider, EventID: d.EventID, EventType: d.EventType})
			continue
		}
		dr, err := r.delivery(ctx, d)
		if err != nil {
			return err
		}
		r.c.Deliveries = append(r.c.Deliveries, *dr)
	}
	if r.enabled(PhaseOrder) {
		ph, err := r.order(ctx)
		if err != nil {
			return err
		}
		if ph != nil {
			r.c.Order = ph
		}
	}
	return nil
}

// listening reports whether a TCP connection to the target can be opened.
func (r *runner) listening(ctx context.Context) bool {
	host := r.o.Target.Host
	if r.o.Target.Port() == "" {
		port := "80"
		if r.o.Target.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(r.o.Target.Hostname(), port)
	}
	var dl net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := dl.DialContext(dctx, "tcp", host)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// checkSecret refuses a secret that a delivery's provider scheme cannot sign
// with (a Standard Webhooks secret that is not whsec_ + base64): every copy
// would keep a stale signature, so nothing could be judged.
func checkSecret(o Options) error {
	if o.Secret == "" {
		return nil
	}
	for _, d := range o.Deliveries {
		if d.Provider == "" || d.Provider == "generic" || d.Req == nil {
			continue
		}
		if _, err := verify.SchemeFor(d.Provider); err != nil {
			continue
		}
		if _, err := verify.Resign(d.Req, d.Provider, o.Secret, time.Now(), verify.Options{URL: replay.FullURL(o.Target, d.Req.Target)}); err != nil {
			return setupf("--secret cannot sign delivery %d (%s): %v", d.ID, d.Provider, err)
		}
	}
	return nil
}

func (r *runner) delivery(ctx context.Context, d Delivery) (*report.DeliveryResult, error) {
	dr := &report.DeliveryResult{DeliveryID: d.ID, Provider: d.Provider, EventID: d.EventID, EventType: d.EventType}
	phases := map[string]*report.PhaseResult{}
	skipAll := func(reason string, names ...string) {
		for _, n := range names {
			if r.enabled(n) && phases[n] == nil {
				phases[n] = &report.PhaseResult{Phase: n, Status: report.Skip, Message: reason}
			}
		}
	}
	defer func() {
		for _, n := range AllPhases {
			if p := phases[n]; p != nil {
				dr.Phases = append(dr.Phases, *p)
			}
		}
	}()

	// first (always run: every other phase is judged against its effect)
	first, err := r.first(ctx, &d)
	if err != nil {
		return nil, err
	}
	phases[PhaseFirst] = first.res
	dr.Effect = first.effect
	if r.enabled(PhaseLatency) && first.answered {
		phases[PhaseLatency] = r.latency(&d, first.att)
	}
	if !first.usable {
		skipAll("not run: "+first.why, PhaseDups, PhaseBurst, PhaseLost, PhaseTamper, PhaseCrash)
		return dr, nil
	}
	if r.enabled(PhaseDups) {
		if phases[PhaseDups], err = r.dups(ctx, &d, first); err != nil {
			return nil, err
		}
	}
	for _, ph := range []string{PhaseBurst, PhaseLost} {
		if !r.enabled(ph) {
			continue
		}
		var res *report.PhaseResult
		if ph == PhaseBurst {
			res, err = r.burst(ctx, &d, first)
		} else {
			res, err = r.lost(ctx, &d, first)
		}
		if err != nil {
			return nil, err
		}
		r.sharedKeyWarning(&d, res)
		phases[ph] = res
	}
	if r.enabled(PhaseTamper) {
		if phases[PhaseTamper], err = r.tamper(ctx, &d, first); err != nil {
			return nil, err
		}
	}
	if r.enabled(PhaseCrash) {
		if phases[PhaseCrash], err = r.crash(ctx, &d, first); err != nil {
			return nil, err
		}
		r.sharedKeyWarning(&d, phases[PhaseCrash])
	}
	return dr, nil
}
