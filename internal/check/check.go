// Package check is the plan behind `hookreplay check`: it drives the replay
// engine through the phases (first, dups, burst, lost, tamper, latency, crash,
// order), reads the side-effect probes settled before and after each, stores
// every attempt, reading and verdict, and judges whether the handler did its
// work exactly once per event.
package check

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/url"
	"sort"
	"strings"
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

// additivity records whether a second fresh event changed the probes as much
// as the first did (effects add up per event), so that zero means lost work.
type additivity struct {
	known, yes bool
	note       string
	// none: the control event changed nothing although the first delivery
	// did (warning holds what that means).
	none    bool
	warning string
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

// --- probes ---

// reading is the settled values of every probe at one point.
type reading struct {
	vals []probe.Value
	at   time.Time
	// sinkLen is the sink's call count when the reading was taken.
	sinkLen int
	// lastChange is when a probe last changed while this reading waited
	// (zero when none did).
	lastChange time.Time
}

// read settles the probes and records the values at point.
func (r *runner) read(ctx context.Context, d *Delivery, phase, point string) (reading, error) {
	return r.readUntil(ctx, d, phase, point, nil)
}

// readChanged waits (up to SettleMax) for any probe to differ from from,
// then settles: used where an effect is expected, so that an asynchronous
// handler slower than --settle is still measured after its work.
func (r *runner) readChanged(ctx context.Context, d *Delivery, phase, point string, from reading) (reading, error) {
	return r.readUntil(ctx, d, phase, point, &from)
}

func (r *runner) readUntil(ctx context.Context, d *Delivery, phase, point string, from *reading) (reading, error) {
	start := time.Now()
	var seen time.Time
	if from != nil {
		for {
			vals, err := probe.ReadAll(ctx, r.o.Probes)
			if err != nil {
				return reading{}, &SetupError{Err: err}
			}
			if !sameValues(vals, from.vals) {
				seen = time.Now()
				break
			}
			if time.Since(start) >= r.o.SettleMax {
				break
			}
			select {
			case <-ctx.Done():
				return reading{}, ctx.Err()
			case <-time.After(r.pollInterval()):
			}
			// Give up waiting for a change after one settle period plus the
			// handler's slack: a copy that changes nothing is a finding too.
			if time.Since(start) >= r.changeWait() {
				break
			}
		}
	}
	quiet := r.quiet()
	max := r.o.SettleMax - time.Since(start)
	if max < quiet {
		max = quiet
	}
	vals, last, err := probe.SettleAt(ctx, r.o.Probes, quiet, max)
	if err != nil {
		var ns *probe.NotSettledError
		if errors.As(err, &ns) {
			r.note("probes were still changing after --settle-max %s (%s); values read then were used", r.o.SettleMax, strings.Join(ns.Probes, "; "))
		} else if ctx.Err() != nil {
			return reading{}, ctx.Err()
		} else {
			return reading{}, &SetupError{Err: err}
		}
	}
	rd := reading{vals: vals, at: time.Now(), lastChange: seen}
	if last.After(seen) {
		rd.lastChange = last
	}
	if r.o.Sink != nil {
		rd.sinkLen = r.o.Sink.Len()
	}
	if r.o.Store != nil {
		for i, p := range r.o.Probes {
			pr := &store.ProbeReading{RunID: r.runID, Phase: phase, Point: point, Probe: p.Name(), Value: vals[i].Text, ReadAt: rd.at}
			if d != nil {
				pr.DeliveryID = d.ID
			}
			if vals[i].IsNum {
				n := vals[i].Num
				pr.Numeric = &n
			}
			if err := r.o.Store.InsertProbeReading(ctx, pr); err != nil {
				return reading{}, setupf("%v", err)
			}
		}
	}
	return rd, nil
}

// calibrate keeps watching the probes after rd, the settled reading after a
// copy sent at sent, for an extended window (4 × --settle, at least 1 s,
// within --settle-max): effects of one event that land further apart than
// --settle (a credit now, a receipt email from a slow API later) are still
// part of that event's effect. It learns how long the effects took (sending
// to the last change) and lengthens the settle of every later reading to
// cover it, so later copies' work is not blamed on the next copy or phase.
// It returns the final reading (rd when nothing moved).
//
// The control event (a second sample) is watched as long only when the
// first delivery's effects already took longer than --settle; for a handler
// whose effects land at once it watches 2 × --settle.
func (r *runner) calibrate(ctx context.Context, d *Delivery, phase, point string, sent time.Time, rd reading) (reading, error) {
	window := 4 * r.o.Settle
	if window < time.Second {
		window = time.Second
	}
	if phase == "control" && r.effDur < r.o.Settle {
		window = 2 * r.o.Settle
	}
	limit := sent.Add(r.o.SettleMax)
	deadline := time.Now().Add(window)
	if deadline.After(limit) {
		deadline = limit
	}
	last := rd.lastChange
	cur := rd
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return reading{}, ctx.Err()
		case <-time.After(r.pollInterval()):
		}
		vals, err := probe.ReadAll(ctx, r.o.Probes)
		if err != nil {
			return reading{}, &SetupError{Err: err}
		}
		if sameValues(vals, cur.vals) {
			continue
		}
		seen := time.Now()
		if cur, err = r.readUntil(ctx, d, phase, point+" (late effects)", nil); err != nil {
			return reading{}, err
		}
		last = seen
		if cur.lastChange.After(last) {
			last = cur.lastChange
		}
		r.progress("settle   delivery %d %s: a probe changed %s after sending, later than --settle %s", d.ID, phase, roundDur(last.Sub(sent)), r.o.Settle)
		if next := time.Now().Add(window); next.Before(limit) {
			deadline = next
		} else {
			deadline = limit
		}
	}
	if !last.IsZero() {
		if dur := last.Sub(sent); dur > r.effDur {
			r.effDur = dur
			eff := r.o.Settle + dur
			if eff > r.o.SettleMax {
				eff = r.o.SettleMax
			}
			if eff > r.effSettle {
				r.effSettle = eff
			}
		}
	}
	return cur, nil
}

func (r *runner) pollInterval() time.Duration {
	iv := r.o.Settle / 10
	if iv < 10*time.Millisecond {
		iv = 10 * time.Millisecond
	}
	if iv > 100*time.Millisecond {
		iv = 100 * time.Millisecond
	}
	return iv
}

// changeWait is how long readChanged waits for a first change: several
// settle periods (an asynchronous handler's queue delay), bounded by SettleMax.
func (r *runner) changeWait() time.Duration {
	w := 8 * r.o.Settle
	if w < 2*time.Second {
		w = 2 * time.Second
	}
	if w > r.o.SettleMax {
		w = r.o.SettleMax
	}
	return w
}

func sameValues(a, b []probe.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// effects returns the sink calls between two readings and stores them.
func (r *runner) effects(ctx context.Context, d *Delivery, phase string, from, to reading) []report.Effect {
	if r.o.Sink == nil {
		return nil
	}
	calls := r.o.Sink.CallsSince(from.sinkLen)
	if n := to.sinkLen - from.sinkLen; n >= 0 && n < len(calls) {
		calls = calls[:n]
	}
	var out []report.Effect
	for _, c := range calls {
		out = append(out, report.Effect{At: c.At, Method: c.Method, Path: c.Path, Body: string(c.Body)})
		if r.o.Store != nil {
			e := &store.EffectRow{RunID: r.runID, Phase: phase, At: c.At, Method: c.Method, Path: c.Path, Body: c.Body}
			if d != nil {
				e.DeliveryID = d.ID
			}
			_ = r.o.Store.InsertEffect(ctx, e)
		}
	}
	return out
}

// --- sending ---

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

// record stores an attempt and keeps its latency for the summary.
func (r *runner) record(ctx context.Context, a *store.Attempt, d *Delivery, phase string, copyN int, eventID string) error {
	a.RunID, a.Phase, a.Copy, a.EventID = r.runID, phase, copyN, eventID
	if d != nil {
		a.DeliveryID = d.ID
	}
	if a.Err == "" && !a.Lost && a.Status != 0 {
		r.answers = append(r.answers, a.Latency)
	}
	if r.o.Store != nil {
		if err := r.o.Store.InsertAttempt(ctx, a); err != nil {
			return setupf("%v", err)
		}
	}
	return nil
}

func (r *runner) send(ctx context.Context, req *message.Request, opt replay.SendOptions) store.Attempt {
	a := replay.Send(ctx, r.target, req, opt)
	r.lastSent.Store(time.Now().UnixNano())
	return a
}

// quiet is how long a reading must see no change: the effective settle
// counted from the last send (its work lands within effDur of it), and
// never less than --settle.
func (r *runner) quiet() time.Duration {
	q := r.effSettle
	if last := r.lastSent.Load(); last != 0 {
		q -= time.Since(time.Unix(0, last))
	}
	if q < r.o.Settle {
		q = r.o.Settle
	}
	return q
}

// sameIdentity returns req again for another copy of the same event: re-signed
// with a fresh timestamp when a secret is known.
func (r *runner) sameIdentity(d *Delivery, req *message.Request) *message.Request {
	if r.o.Secret == "" {
		return req
	}
	s, err := verify.Resign(req, d.Provider, r.o.Secret, time.Now(), verify.Options{URL: r.urlFor(req)})
	if err != nil {
		r.note("copies of delivery %d were sent with their captured signature: re-signing failed: %v", d.ID, err)
		return req
	}
	return s
}

// asRetry marks req as the provider's retry number n the way the provider
// really does. Only Slack marks retries (X-Slack-Retry-Num,
// X-Slack-Retry-Reason; its signature covers the timestamp and body, not
// these headers); Stripe, GitHub, Shopify, Twilio and Standard Webhooks
// resend the same event id without a retry header.
func asRetry(d *Delivery, req *message.Request, n int) *message.Request {
	if d.Provider != "slack" {
		return req
	}
	c := req.Clone()
	c.Headers = c.Headers.Set("X-Slack-Retry-Num", fmt.Sprint(n))
	c.Headers = c.Headers.Set("X-Slack-Retry-Reason", "http_timeout")
	return c
}

// urlFor is the full URL a copy of req is sent to: what a provider that
// signs the URL (Twilio) was configured with.
func (r *runner) urlFor(req *message.Request) string {
	return replay.FullURL(r.o.Target, req.Target)
}

// freshIdentity returns a copy of d's request with a new event id (re-signed
// when a secret is known), or ok false with the reason it cannot be made.
func (r *runner) freshIdentity(d *Delivery) (req *message.Request, id string, ok bool, why string) {
	if !canFresh(d, r.o.Secret) {
		return nil, "", false, freshReason(d, r.o.Secret)
	}
	id = verify.NewEventID(d.Provider)
	req, err := verify.Reidentify(d.Req, d.Provider, id, r.o.Secret, time.Now(), verify.Options{URL: r.urlFor(d.Req)})
	if err != nil {
		return nil, "", false, fmt.Sprintf("the delivery cannot be given a fresh event id: %v", err)
	}
	return req, id, true, ""
}

// identitySigned reports whether provider's event id is covered by its
// signature, so that changing it needs the secret.
func identitySigned(provider string) bool {
	switch provider {
	case "standard", "svix", "twilio":
		// Twilio: a fresh event is a new message, whose sid is in the
		// signed form.
		return true
	}
	return verify.IdentityInBody(provider)
}

func canFresh(d *Delivery, secret string) bool {
	if d.Provider == "" || d.Provider == "generic" || d.EventID == "" {
		return false
	}
	if _, err := verify.SchemeFor(d.Provider); err != nil {
		return false
	}
	return secret != "" || !identitySigned(d.Provider)
}

func freshReason(d *Delivery, secret string) string {
	if d.Provider == "" || d.Provider == "generic" || d.EventID == "" {
		return "the delivery has no event id hookreplay knows how to change (provider " + orGeneric(d.Provider) + ")"
	}
	if secret == "" && identitySigned(d.Provider) {
		return fmt.Sprintf("a fresh event id would break the %s signature: give --secret (or --secret-env) to enable it", d.Provider)
	}
	return "provider " + d.Provider + " has no event identity scheme"
}

func orGeneric(p string) string {
	if p == "" {
		return "generic"
	}
	return p
}

// reset runs --reset-cmd.
func (r *runner) reset(ctx context.Context) error {
	if r.o.ResetCmd == "" {
		return nil
	}
	if err := runShell(ctx, r.o.ResetCmd, time.Minute); err != nil {
		return setupf("--reset-cmd: %v", err)
	}
	return nil
}

// roundDur keeps durations readable: milliseconds, or microseconds under 1 ms.
func roundDur(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func is2xx(s int) bool { return s >= 200 && s < 300 }
func is4xx(s int) bool { return s >= 400 && s < 500 }

func statusText(a store.Attempt) string {
	switch {
	case a.Lost:
		return "lost"
	case a.Err != "":
		return "error: " + a.Err
	}
	return fmt.Sprint(a.Status)
}

func countStatuses(m map[string]int, as ...store.Attempt) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	for _, a := range as {
		switch {
		case a.Lost:
			m["lost"]++
		case a.Err != "":
			m["error"]++
		default:
			m[fmt.Sprint(a.Status)]++
		}
	}
	return m
}

// --- per delivery ---

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

// firstResult is what the first phase established.
type firstResult struct {
	res      *report.PhaseResult
	effect   []report.ProbeDelta
	before   reading
	after    reading
	req      *message.Request // the request sent (its identity is reused by dups)
	eventID  string
	fresh    bool
	att      store.Attempt
	answered bool
	usable   bool   // later phases can be judged against it
	why      string // when !usable
}

func (r *runner) first(ctx context.Context, d *Delivery) (*firstResult, error) {
	start := time.Now()
	fr := &firstResult{}
	ph := &report.PhaseResult{Phase: PhaseFirst}
	fr.res = ph
	if err := r.reset(ctx); err != nil {
		return nil, err
	}
	req, id, ok, why := r.freshIdentity(d)
	if ok {
		fr.fresh = true
	} else {
		req, id = r.sameIdentity(d, d.Req), d.EventID
		r.note("delivery %d: first and dups use the captured event id %q: %s; burst, lost and crash need a fresh id and are skipped", d.ID, d.EventID, why)
	}
	fr.req, fr.eventID = req, id
	before, err := r.read(ctx, d, PhaseFirst, "before")
	if err != nil {
		return nil, err
	}
	sentAt := time.Now()
	a := r.send(ctx, req, replay.SendOptions{})
	if err := r.record(ctx, &a, d, PhaseFirst, 1, id); err != nil {
		return nil, err
	}
	fr.att = a
	fr.answered = a.Err == "" && a.Status != 0
	if fr.answered && !r.haveFirst {
		r.firstLat, r.haveFirst = a.Latency, true
	}
	var after reading
	if fr.answered && !is4xx(a.Status) {
		after, err = r.readChanged(ctx, d, PhaseFirst, "after", before)
		if err == nil {
			after, err = r.calibrate(ctx, d, PhaseFirst, "after", sentAt, after)
		}
	} else {
		after, err = r.read(ctx, d, PhaseFirst, "after")
	}
	if err != nil {
		return nil, err
	}
	fr.before, fr.after = before, after
	fr.effect = deltas(r.c.Probes, before.vals, after.vals)
	ph.Attempts = 1
	ph.Statuses = countStatuses(nil, a)
	ph.Effects = r.effects(ctx, d, PhaseFirst, before, after)
	ph.Duration = time.Since(start)
	changed := anyChanged(fr.effect)
	r.progress("first    delivery %d: %s in %s, %s", d.ID, statusText(a), roundDur(a.Latency), effectText(fr.effect))

	switch {
	case !fr.answered && !r.listening(ctx):
		// No connection at all: a handler that is not running (or a wrong
		// --to) is a setup problem, not a handler that dropped a delivery.
		return nil, setupf("nothing is listening at %s (%s): start the handler, or give --serve CMD", r.o.Target, a.Err)
	case !fr.answered && strings.HasPrefix(a.Err, "tls handshake"):
		// A certificate hookreplay cannot verify is a setup problem too.
		return nil, setupf("cannot reach %s: %s", r.o.Target, a.Err)
	case !fr.answered:
		ph.Status = report.Fail
		ph.Violations = append(ph.Violations, report.Violation{Copy: 1, EventID: id,
			Message: fmt.Sprintf("the first copy got no answer: %s", a.Err)})
		ph.Message = "the handler did not answer the first copy"
		fr.why = "the first copy got no answer"
		fr.usable = changed
		return fr, nil
	case !is2xx(a.Status) && !changed && r.o.Secret == "" && d.Provider != "generic" && d.Provider != "":
		ph.Status = report.Inconclusive
		ph.Message = fmt.Sprintf("the first copy was answered %d and the probes saw no effect; without --secret it carries its captured signature, which the handler may reject as stale: give --secret so copies are re-signed", a.Status)
		if d.Provider == "twilio" {
			ph.Message = fmt.Sprintf("the first copy was answered %d and the probes saw no effect; Twilio signs the full URL it posted to, so without --secret a copy sent to %s carries a signature for the captured URL, which the handler rejects: give --secret so copies are re-signed for --to", a.Status, r.o.Target)
		}
		fr.why = "the first copy was not accepted"
		return fr, nil
	case !is2xx(a.Status):
		ph.Status = report.Fail
		ph.Violations = append(ph.Violations, report.Violation{Copy: 1, EventID: id, Status: a.Status,
			Message: fmt.Sprintf("the first copy was answered %d, not 2xx: the provider would retry it", a.Status)})
		ph.Message = fmt.Sprintf("first copy answered %d", a.Status)
		if !changed {
			fr.why = "the first copy was not accepted"
			return fr, nil
		}
		fr.usable = true
		return fr, nil
	case !changed:
		ph.Status = report.Inconclusive
		ph.Message = "the probes saw no effect of the first delivery; probe what the handler changes"
		if fr.fresh {
			ph.Message += " (it was sent with a fresh event id; when the handler's effect depends on state, e.g. it sets status=active, give --reset-cmd to restore that state first)"
		} else {
			ph.Message += " (it was sent with its captured event id, so the handler may already have processed it, e.g. when it was captured; give --secret so hookreplay sends it with a fresh event id, or --reset-cmd)"
		}
		ph.Message += fmt.Sprintf("; a handler that works asynchronously for longer than %s needs a larger --settle", r.changeWait().Round(100*time.Millisecond))
		if d.EventType != "" {
			ph.Message += fmt.Sprintf("; a handler that ignores %s events (answers 2xx and does nothing) has nothing to prove for this delivery: check a delivery of a type it acts on", d.EventType)
		}
		fr.why = "the first delivery showed no effect"
		return fr, nil
	}
	ph.Status = report.Pass
	ph.Message = fmt.Sprintf("answered %d in %s; effect: %s", a.Status, roundDur(a.Latency), effectText(fr.effect))
	if fr.fresh {
		ph.Message = fmt.Sprintf("sent with fresh event id %s, answered %d in %s; effect: %s", id, a.Status, roundDur(a.Latency), effectText(fr.effect))
	}
	fr.usable = true
	return fr, nil
}

func (r *runner) dups(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseDups, Statuses: map[string]int{}}
	if r.o.N < 2 {
		ph.Status = report.Skip
		ph.Message = "-n 1 sends no duplicate"
		return ph, nil
	}
	prev := fr.after
	changedCopies, badStatus := 0, 0
	reported := map[string]bool{}
	var changedList []string
	for i := 2; i <= r.o.N; i++ {
		req := r.sameIdentity(d, fr.req)
		a := r.send(ctx, req, replay.SendOptions{})
		if err := r.record(ctx, &a, d, PhaseDups, i, fr.eventID); err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, a)
		ph.Attempts++
		cur, err := r.read(ctx, d, PhaseDups, fmt.Sprintf("after copy %d", i))
		if err != nil {
			return nil, err
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseDups, prev, cur)...)
		// A copy "did the work again" when it moved a probe since the
		// reading before it; the violation is against the value after first.
		changed := false
		for k, name := range r.c.Probes {
			if !cur.vals[k].Equal(prev.vals[k]) {
				changed = true
			}
			if cur.vals[k].Equal(fr.after.vals[k]) {
				continue
			}
			if reported[name] {
				continue // the first copy that changed a probe is the one to show; the message counts the rest
			}
			reported[name] = true
			hint := ""
			if columnHint(fr.after.vals[k], cur.vals[k]) != "" {
				hint = "probe the business columns, not a timestamp the handler stamps on every call; if those changed too, " + report.Hint(PhaseDups)
			}
			ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID, Probe: name, Hint: hint,
				Before: prev.vals[k].String(), After: cur.vals[k].String(), Want: fr.after.vals[k].String(),
				Message: fmt.Sprintf("copy %d (same event id %s) changed %s from %s to %s (want %s, its value after the first copy)%s",
					i, fr.eventID, name, prev.vals[k], cur.vals[k], fr.after.vals[k], columnHint(fr.after.vals[k], cur.vals[k]))})
		}
		if changed {
			changedCopies++
			changedList = append(changedList, fmt.Sprint(i))
		}
		switch {
		case badStatus > 0 && (a.Err != "" || !is2xx(a.Status)):
			badStatus++ // shown once; the message counts them
		case a.Err != "":
			badStatus++
			ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID,
				Message: fmt.Sprintf("copy %d got no answer: %s", i, a.Err)})
		case !is2xx(a.Status):
			badStatus++
			ph.Violations = append(ph.Violations, report.Violation{Copy: i, EventID: fr.eventID, Status: a.Status,
				Message: fmt.Sprintf("copy %d was answered %d: a duplicate answered %d makes the provider retry again", i, a.Status, a.Status)})
		}
		prev = cur
		r.progress("dups     delivery %d copy %d: %s%s", d.ID, i, statusText(a), map[bool]string{true: ", probes changed", false: ""}[changed])
	}
	ph.Duration = time.Since(start)
	n := r.o.N - 1
	if changedCopies == 0 && badStatus == 0 && len(ph.Violations) == 0 {
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("%d duplicates (same event id) changed nothing and were answered 2xx", n)
		return ph, nil
	}
	ph.Status = report.Fail
	var parts []string
	if changedCopies > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d duplicates did the work again (copies %s)", changedCopies, n, strings.Join(changedList, ", ")))
		for k, name := range r.c.Probes {
			if !prev.vals[k].Equal(fr.after.vals[k]) {
				parts = append(parts, fmt.Sprintf("%s ended at %s (want %s)%s", name, prev.vals[k], fr.after.vals[k], columnHint(fr.after.vals[k], prev.vals[k])))
			}
		}
	}
	if badStatus > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d duplicates were not answered 2xx", badStatus, n))
	}
	ph.Message = strings.Join(parts, "; ")
	return ph, nil
}

// exactJudgement reports whether zero effect in a fresh-identity phase can be
// judged as lost work: the state was reset before it, or a second fresh event
// (the control) changed the probes exactly as the first did.
func (r *runner) exactJudgement(ctx context.Context, d *Delivery, fr *firstResult) (bool, error) {
	if r.o.ResetCmd != "" {
		return true, r.reset(ctx)
	}
	ad := r.additive[d.ID]
	if ad == nil {
		ad = &additivity{}
		r.additive[d.ID] = ad
	}
	if ad.known {
		return ad.yes, nil
	}
	ad.known = true
	req, id, ok, _ := r.freshIdentity(d)
	if !ok {
		return false, nil
	}
	before, err := r.read(ctx, d, "control", "before")
	if err != nil {
		return false, err
	}
	sentAt := time.Now()
	a := r.send(ctx, req, replay.SendOptions{})
	if err := r.record(ctx, &a, d, "control", 1, id); err != nil {
		return false, err
	}
	after, err := r.readChanged(ctx, d, "control", "after", before)
	if err != nil {
		return false, err
	}
	if after, err = r.calibrate(ctx, d, "control", "after", sentAt, after); err != nil {
		return false, err
	}
	ctl := deltas(r.c.Probes, before.vals, after.vals)
	ad.yes = is2xx(a.Status) && sameEffect(fr.effect, ctl)
	if !anyChanged(ctl) && anyChanged(fr.effect) && r.o.ResetCmd == "" {
		ad.none = true
		ad.warning = fmt.Sprintf("delivery %d: a second event with another fresh id (%s, answered %s) changed nothing, while the first delivery changed %s: "+
			"either the effect depends on state (give --reset-cmd to judge exactly), or the handler deduplicates on something other than the event id "+
			"(a hook or subscription id, the signature, a timestamp) and drops distinct events", d.ID, id, statusText(a), effectText(fr.effect))
		r.warn(ad.warning)
	}
	if ad.yes {
		r.note("delivery %d: a control event with another fresh id changed the probes exactly as the first did (%s), so every fresh event must have exactly that effect", d.ID, effectText(ctl))
	} else if !ad.none {
		r.note("delivery %d: a control event with another fresh id changed the probes by %s, not %s: the effect depends on state, not only on the event; give --reset-cmd to judge burst, lost and crash exactly", d.ID, effectText(ctl), effectText(fr.effect))
	}
	r.progress("control  delivery %d: %s, %s", d.ID, statusText(a), effectText(ctl))
	return ad.yes, nil
}

func (r *runner) burst(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseBurst, Statuses: map[string]int{}}
	if !fr.fresh {
		ph.Status, ph.Message = report.Skip, "not run: "+freshReason(d, r.o.Secret)
		return ph, nil
	}
	// A race shows only when the copies overlap inside the handler; one
	// burst can miss it (a cold connection pool serialises the copies), so a
	// passing burst is repeated with another fresh event, up to BurstRounds.
	rounds := r.o.BurstRounds
	if rounds <= 0 {
		rounds = 3
	}
	bad, sent := 0, 0
	var j judgement
	var id string
	round := 0
	for round < rounds {
		round++
		exact, err := r.exactJudgement(ctx, d, fr)
		if err != nil {
			return nil, err
		}
		req, rid, ok, why := r.freshIdentity(d)
		if !ok {
			ph.Status, ph.Message = report.Skip, "not run: "+why
			return ph, nil
		}
		id = rid
		before, err := r.read(ctx, d, PhaseBurst, fmt.Sprintf("round %d before", round))
		if err != nil {
			return nil, err
		}
		reqs := make([]*message.Request, r.o.Burst)
		for i := range reqs {
			reqs[i] = req
		}
		as := replay.Burst(ctx, r.target, reqs, replay.SendOptions{})
		r.lastSent.Store(time.Now().UnixNano())
		for i := range as {
			if err := r.record(ctx, &as[i], d, PhaseBurst, sent+i+1, id); err != nil {
				return nil, err
			}
			if as[i].Err != "" || !is2xx(as[i].Status) {
				bad++
			}
		}
		sent += len(as)
		after, err := r.readChanged(ctx, d, PhaseBurst, fmt.Sprintf("round %d after", round), before)
		if err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, as...)
		if sp := replay.Spread(as); sp > ph.BurstSpread {
			ph.BurstSpread = sp
		}
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseBurst, before, after)...)
		j = judgeOnce(r.c.Probes, fr.effect, before.vals, after.vals, exact, r.o.ResetCmd != "", fr.before.vals, fr.after.vals)
		r.progress("burst    delivery %d round %d: %d copies (spread %s), %s → %s", d.ID, round, len(as), replay.Spread(as), statuses(countStatuses(nil, as...)), j.status)
		if j.status != report.Pass {
			break // a violation is proven, or the effect cannot be judged: more rounds add nothing
		}
	}
	ph.Attempts = sent
	what := fmt.Sprintf("%d concurrent copies of a fresh event", r.o.Burst)
	if round > 1 {
		what = fmt.Sprintf("%d bursts of %d concurrent copies of a fresh event each", round, r.o.Burst)
	}
	if j.status == report.Fail {
		what = fmt.Sprintf("burst %d: %d concurrent copies of fresh event %s", round, r.o.Burst, id)
	}
	ph.Status, ph.Message, ph.Warnings = j.status, what+": "+j.message, j.warnings
	for _, v := range j.violations {
		v.EventID = id
		ph.Violations = append(ph.Violations, v)
	}
	if bad > 0 {
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("%d of %d concurrent copies were not answered 2xx (%s); the provider retries those", bad, sent, statuses(ph.Statuses)))
	}
	ph.Duration = time.Since(start)
	return ph, nil
}

// lost sends a fresh event whose answer the sender never sees, then the
// provider's retry of it, twice: once with the answer lost on its way back
// (the handler finished), once with the sender giving up before the answer
// (a provider timeout: a Go handler sees its request context cancelled).
// Each time the combined effect must be E once.
func (r *runner) lost(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseLost, Statuses: map[string]int{}}
	if !fr.fresh {
		ph.Status, ph.Message = report.Skip, "not run: "+freshReason(d, r.o.Secret)
		return ph, nil
	}
	trials := []struct {
		what string
		opt  replay.SendOptions
	}{
		{"answer lost on its way back", replay.SendOptions{Lose: true}},
		{"sender gave up before the answer", replay.SendOptions{Lose: true, LoseEarly: true}},
	}
	var passed, notJudged []string
	for ti, tr := range trials {
		exact, err := r.exactJudgement(ctx, d, fr)
		if err != nil {
			return nil, err
		}
		req, id, ok, why := r.freshIdentity(d)
		if !ok {
			ph.Status, ph.Message = report.Skip, "not run: "+why
			return ph, nil
		}
		before, err := r.read(ctx, d, PhaseLost, fmt.Sprintf("trial %d before", ti+1))
		if err != nil {
			return nil, err
		}
		a1 := r.send(ctx, req, tr.opt)
		a1.Edit = tr.what
		if err := r.record(ctx, &a1, d, PhaseLost, 2*ti+1, id); err != nil {
			return nil, err
		}
		mid, err := r.readChanged(ctx, d, PhaseLost, fmt.Sprintf("trial %d after the lost copy", ti+1), before)
		if err != nil {
			return nil, err
		}
		a2 := r.send(ctx, asRetry(d, r.sameIdentity(d, req), 1), replay.SendOptions{})
		a2.Edit = "provider's retry"
		if err := r.record(ctx, &a2, d, PhaseLost, 2*ti+2, id); err != nil {
			return nil, err
		}
		after, err := r.read(ctx, d, PhaseLost, fmt.Sprintf("trial %d after the retry", ti+1))
		if err != nil {
			return nil, err
		}
		ph.Attempts += 2
		countStatuses(ph.Statuses, a1, a2)
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseLost, before, after)...)
		j := judgeOnce(r.c.Probes, fr.effect, before.vals, after.vals, exact, r.o.ResetCmd != "", fr.before.vals, fr.after.vals)
		label := fmt.Sprintf("fresh event %s, %s, then the provider's retry", id, tr.what)
		for _, v := range j.violations {
			v.EventID = id
			v.Copy = 2*ti + 2
			v.Message = label + ": " + v.Message
			if anyChangedVals(before.vals, mid.vals) && !sameValues(mid.vals, after.vals) {
				v.Message += " (the retry did the work again after the lost copy had done it)"
			}
			ph.Violations = append(ph.Violations, v)
		}
		for _, w := range j.warnings {
			ph.Warnings = append(ph.Warnings, label+": "+w)
		}
		switch {
		case a2.Err != "":
			ph.Violations = append(ph.Violations, report.Violation{Copy: 2*ti + 2, EventID: id, Message: label + ": the retry got no answer: " + a2.Err})
		case !is2xx(a2.Status):
			ph.Violations = append(ph.Violations, report.Violation{Copy: 2*ti + 2, EventID: id, Status: a2.Status,
				Message: fmt.Sprintf("%s: the retry was answered %d: a duplicate answered %d makes the provider retry again", label, a2.Status, a2.Status)})
		}
		r.progress("lost     delivery %d trial %d (%s): retry %s → %s", d.ID, ti+1, tr.what, statusText(a2), j.status)
		if len(ph.Violations) > 0 {
			break
		}
		switch j.status {
		case report.Pass:
			passed = append(passed, tr.what)
		default:
			notJudged = append(notJudged, tr.what)
		}
	}
	ph.Duration = time.Since(start)
	switch {
	case len(ph.Violations) > 0:
		ph.Status = report.Fail
		ph.Message = ph.Violations[0].Message
	case len(notJudged) == 0:
		ph.Status = report.Pass
		ph.Message = "a fresh event whose answer never reached the sender (" + strings.Join(passed, "; ") + "), then the provider's retry: effect equals the first delivery's each time"
		if len(ph.Warnings) > 0 {
			ph.Message += " (some probes not judged, see warnings)"
		}
	case len(passed) > 0:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("passed (%s); not judged (%s), see warnings", strings.Join(passed, "; "), strings.Join(notJudged, "; "))
	default:
		ph.Status = report.NotJudged
		ph.Message = "not judged: " + firstOr(ph.Warnings, "no probe moved")
	}
	return ph, nil
}

func (r *runner) latency(d *Delivery, a store.Attempt) *report.PhaseResult {
	limit := r.providerTimeout(d.Provider)
	ph := &report.PhaseResult{Phase: PhaseLatency, Attempts: 1}
	src := d.Provider + "'s timeout"
	if r.o.ProviderTimeout > 0 {
		src = "--provider-timeout"
	} else if _, ok := ProviderTimeouts[d.Provider]; !ok {
		src = "the default timeout (no known timeout for provider " + orGeneric(d.Provider) + "; set --provider-timeout)"
	}
	lat := roundDur(a.Latency)
	switch {
	case a.Latency > limit:
		ph.Status = report.Fail
		ph.Message = fmt.Sprintf("the first answer took %s, over %s %s: the provider gives up and retries", lat, src, limit)
		ph.Violations = []report.Violation{{Copy: 1, Message: fmt.Sprintf("answered after %s; %s is %s", lat, src, limit)}}
	case a.Latency > limit/2:
		ph.Status = report.Warn
		ph.Message = fmt.Sprintf("the first answer took %s, over half of %s %s", lat, src, limit)
		ph.Warnings = []string{ph.Message}
	default:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("the first answer took %s (%s %s)", lat, src, limit)
	}
	return ph
}

func (r *runner) latencySummary() *report.LatencySummary {
	if len(r.answers) == 0 {
		return nil
	}
	s := append([]time.Duration(nil), r.answers...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ls := &report.LatencySummary{First: r.firstLat, P50: s[(len(s)-1)/2], Max: s[len(s)-1]}
	// One provider timeout only when every delivery shares it (each
	// delivery's latency phase names its own).
	for i, d := range r.o.Deliveries {
		t := r.providerTimeout(d.Provider)
		if i > 0 && t != ls.ProviderTimeout {
			ls.ProviderTimeout = 0
			break
		}
		ls.ProviderTimeout = t
	}
	return ls
}

func statuses(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func (r *runner) storeVerdicts(ctx context.Context) error {
	add := func(did int64, p report.PhaseResult) error {
		detail, _ := json.Marshal(p)
		return r.o.Store.InsertVerdict(ctx, &store.VerdictRow{RunID: r.runID, DeliveryID: did, Phase: p.Phase,
			Status: string(p.Status), Message: p.Message, Detail: detail})
	}
	for _, d := range r.c.Deliveries {
		for _, p := range d.Phases {
			if err := add(d.DeliveryID, p); err != nil {
				return err
			}
		}
	}
	if r.c.Order != nil {
		return add(0, *r.c.Order)
	}
	return nil
}

// Load returns the report of a finished check run from the store (its
// summary is the full report), so it can be re-rendered without re-running.
func Load(ctx context.Context, st *store.Store, runID int64) (*report.Check, error) {
	run, err := st.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if run.Kind != "check" {
		return nil, fmt.Errorf("run %d is a %s run, not a check", runID, run.Kind)
	}
	if run.FinishedAt.IsZero() || run.Verdict == "error" || run.Verdict == "" {
		return nil, fmt.Errorf("check run %d did not finish (verdict %q)", runID, run.Verdict)
	}
	var c report.Check
	if err := json.Unmarshal(run.Summary, &c); err != nil {
		return nil, fmt.Errorf("check run %d: read its report: %w", runID, err)
	}
	return &c, nil
}
