// Package check is the plan behind `hookreplay check`: it drives the replay
// engine through the phases (first, dups, burst, lost, order, tamper,
// latency, crash), reads the side-effect probes settled before and after
// each, stores every attempt, reading and verdict, and judges whether the
// handler did its work exactly once per event.
//
// The phases are a registry (phase.go), one file each. Progress goes to an
// Observer; the engine never prints and never names a command-line flag:
// errors are typed (errors.go) and messages name inputs through
// Options.Name, so the caller words both.
package check

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/panics"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Delivery is one captured delivery to check.
type Delivery struct {
	ID       int64
	Provider string
	// Scheme is the provider's scheme, resolved once (detected, declared
	// or named) when the delivery was loaded; nil resolves Provider when
	// the run starts. Everything below uses it, never the name again.
	Scheme  verify.Scheme
	EventID string
	// EventIDs lists every event id when the delivery carries several (a
	// WhatsApp POST batching messages), nil otherwise; EventID is the first.
	EventIDs  []string
	EventType string
	Req       *message.Request
	// Imported: the delivery came from another tool's file (HAR, curl…),
	// whose bytes may not be the ones the provider signed, so its captured
	// signature is not held against the secret.
	Imported bool
	// CapturedStatus is the answer the delivery got when it was captured (0
	// when unknown): with capture --forward, the handler's own answer to the
	// provider's request.
	CapturedStatus int
}

// FromStore converts a stored delivery.
func FromStore(d *store.Delivery) Delivery {
	return Delivery{ID: d.ID, Provider: d.Provider, Scheme: verify.Lookup(d.Provider), EventID: d.EventID, EventIDs: report.SeveralEventIDs(d.EventID, d.Identity),
		EventType: d.EventType, Req: d.Request(), Imported: d.Origin != "",
		CapturedStatus: d.ResponseStatus}
}

// Options is everything one check run needs.
type Options struct {
	Target *url.URL
	// SignedURL, when not nil, is the URL copies are signed for where the
	// provider signs the URL it posts to (Bird, Twilio, Square, HubSpot):
	// the one a handler verifies against when it is given the URL the
	// provider was configured with, as Bird's sample code is. They are
	// still sent to Target. Nil: signed for Target.
	SignedURL *url.URL
	// TLS configures https targets (nil: system roots; --insecure skips verification).
	TLS        *tls.Config
	Deliveries []Delivery
	// Probes are read before and after every phase. The sink's probe, when
	// a sink is used, is one of them.
	Probes []probe.Probe
	// ProbeDefs, when set, says what each probe is as the user gave it
	// ("balance = sql: SELECT …"), for the report's header.
	ProbeDefs []string
	// Sink, when set, is the stand-in downstream API whose calls are shown
	// per phase as effects.
	Sink *probe.Sink
	// SMTP, when set, is the stand-in mail server whose messages are shown
	// per phase as effects ("Your receipt" to alice@example.com ×3).
	SMTP *probe.SMTPSink
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
	// DedupeTTL, when set, is how long the handler remembers an event id,
	// as the user declares it (retention compares it with the provider's
	// retry horizon).
	DedupeTTL time.Duration
	// ForgetCmd, when set, makes the handler forget an event id (sh -c,
	// with HOOKREPLAY_EVENT_ID set): retention then resends the event to
	// prove whether forgetting it lets the work be done again.
	ForgetCmd string
	// ResetCmd, when set, restores the handler's state (sh -c) before the
	// phases that are judged exactly and before each ordering.
	ResetCmd string
	// Serve, when set, is the handler process (needed by crash).
	Serve *Server
	// ProviderTimeout overrides the provider's answer timeout (latency).
	ProviderTimeout time.Duration
	// Timeout, when set, bounds each request (connect, send, answer);
	// otherwise it is the longest provider timeout plus 5s.
	Timeout time.Duration
	// Settle and SettleMax tune probe.Settle.
	Settle, SettleMax time.Duration
	// LearnSettle lets the quiet period shrink below Settle once the first
	// delivery showed how long one event's effects take (Settle was not
	// given, only defaulted): readings then wait 3 × that time, at least
	// minQuiet, instead of Settle.
	LearnSettle bool
	// Seed seeds the order phase's shuffles.
	Seed int64
	// Store, when set, records the run, attempts, readings and verdicts.
	Store *store.Store
	// RunOptions are recorded with the run (never secrets).
	RunOptions map[string]any
	// Observer follows the run as it happens (nil: NopObserver).
	Observer Observer
	// Name is how messages mention an input the user gives: cmd names its
	// flags ("--secret"). nil, or "" for an input, names it in plain words.
	Name func(Input) string
	// ErrorText words the error a run ended with where it is stored with
	// the run (nil: its Error()); cmd words it as it shows it.
	ErrorText func(error) string
	// Jobs is how many deliveries are checked at once when their probes
	// are scoped (schedule.go); 0 means DefaultJobs.
	Jobs int
	// alone: every phase runs alone, first's late-effect window is never
	// overlapped (overlap.go); the tests compare both.
	alone bool
}

// defaultProviderTimeout is used for providers whose answer timeout verify
// does not know (Scheme.ResponseTimeout).
const defaultProviderTimeout = 10 * time.Second

type runner struct {
	o Options
	// publicKeyOnly: the key given verifies and cannot sign (verifyOnlyKey).
	publicKeyOnly bool
	obs           Observer
	c             *report.Check
	runID         int64
	target        replay.Target
	answers       []time.Duration
	// dupsPassed: the delivery's sequential duplicates were recognised.
	dupsPassed map[int64]bool
	// answered holds each delivery's answered copies, for latency.
	answered map[int64][]store.Attempt
	rng      *rand.Rand
	additive map[int64]*additivity
	// firstLat is the first delivery's first answer's latency.
	firstLat  time.Duration
	haveFirst bool
	// effSettle is the quiet period every reading waits for: --settle, or
	// longer once calibrate saw one event's effects take longer (effDur,
	// from sending to the last probe change).
	effSettle, effDur time.Duration
	// learned: calibrate measured effDur at least once.
	learned bool
	// crashQuiet, when set, is the quiet period of the crash phase's
	// readings after its restarts (crashPhase.shortQuiet).
	crashQuiet time.Duration
	// lastSent is when the last copy's send returned (UnixNano; copies are
	// sent from goroutines in crash).
	lastSent atomic.Int64
	// gen counts what can change the probes from outside a reading: every
	// send and every reset. lastQuiet is the last settled reading and quietGen
	// the gen it was taken at: a phase that starts while gen is unchanged
	// shares that quiet wait instead of waiting again.
	gen       atomic.Int64
	lastQuiet *reading
	quietGen  int64
	// controlPhases names the phases that will run and judge fresh events
	// against the control event (controlPhasesToRun).
	controlPhases []string
	// stamps gives every copy of an event its own signature time.
	stamps signStamps
	// flight bounds the copies in flight when deliveries are checked at
	// once (nil: one at a time).
	flight    *semaphore.Weighted
	flightCap int64
	// pace admits deliveries at the handler's pace when no jobs count
	// was given (schedule_pace.go); paceSlot is this runner's delivery.
	pace     *pace
	paceSlot *paceSlot
	// clk keeps where the time went (timing.go); o.Probes are timed by it.
	clk *clock
	// ranAlone holds the deliveries a group phase judged alone after all
	// (dupsAgain), for the group's note (grouptest.go).
	ranAlone map[int64]bool
	// ov is what the readings saw while phases overlap first's late-effect
	// window (overlap.go; nil otherwise); noOverlap: first watches its
	// window before anything else runs.
	ov        *overlap
	noOverlap bool
	// mayOverlap: the first phase being sent may leave its window open
	// (firstOpen).
	mayOverlap bool
	// holding: store writes are held (held, of part holdCat) until the
	// delivery's overlap is decided (overlap.go's release).
	holding bool
	holdCat int
	held    []heldWrite
	// againWhy notes why a delivery is checked again from a fresh first.
	againWhy string
}

// Run performs the check and returns its report. A *SetupError (or a context
// error) means no verdict could be reached; when the run had started judging,
// the report of what it judged comes with it (verdict error, the phase it
// stopped in marked error), else the report is nil. A run whose ctx is
// cancelled (Ctrl-C, SIGTERM, SIGHUP) always comes with its report, verdict
// interrupted, the phase in progress marked interrupted, and is stored so.
func Run(ctx context.Context, o Options) (*report.Check, error) {
	if len(o.Deliveries) == 0 {
		return nil, setupf("no delivery to check")
	}
	if len(o.Probes) == 0 {
		return nil, &SetupError{Err: &MissingInput{Need: InputProbe}}
	}
	o = withDefaults(o)
	o.Observer = &syncObserver{o: o.Observer}
	if err := checkSecret(o); err != nil {
		return nil, err
	}
	o, verifyOnly := verifyOnlyKey(o)
	r := newRunner(o)
	if verifyOnly != "" {
		r.publicKeyOnly = true
		r.note("%s", verifyOnly)
	}
	r.controlPhases = r.controlPhasesToRun()
	r.routeWarnings()
	if err := r.startRun(ctx); err != nil {
		return nil, err
	}
	err := r.runCaught(ctx)
	r.c.FinishedAt = time.Now()
	if err == nil {
		r.sinkNote()
		r.mailRepeatsNote()
	}
	r.settleNote()
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return r.interrupted(ctx), err
	}
	if err != nil {
		r.failRun(ctx, err)
		if len(r.c.Deliveries) == 0 && r.c.Order == nil {
			return nil, err
		}
		// The run stopped part way: its report holds what was judged, the
		// phase it stopped in marked error, for the caller to write out.
		r.c.Latency = r.latencySummary()
		r.c.Verdict = report.VerdictError
		return r.c, err
	}
	r.c.Latency = r.latencySummary()
	r.c.Verdict = r.c.ComputeVerdict()
	if err := r.finishRun(ctx); err != nil {
		return nil, err
	}
	return r.c, nil
}

// withDefaults fills in the counts and settle times o leaves at zero.
func withDefaults(o Options) Options {
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
	if o.Observer == nil {
		o.Observer = NopObserver{}
	}
	ds := make([]Delivery, len(o.Deliveries))
	for i, d := range o.Deliveries {
		if d.Scheme == nil {
			d.Scheme = verify.Lookup(d.Provider)
		}
		ds[i] = d
	}
	o.Deliveries = ds
	return o
}

func newRunner(o Options) *runner {
	r := &runner{o: o, obs: o.Observer, rng: rand.New(rand.NewSource(o.Seed)), additive: map[int64]*additivity{}, answered: map[int64][]store.Attempt{}, dupsPassed: map[int64]bool{}, ranAlone: map[int64]bool{}, effSettle: o.Settle}
	r.c = &report.Check{SchemaVersion: report.SchemaVersion, Target: o.Target.String(), StartedAt: time.Now(),
		Options: o.RunOptions}
	for _, p := range o.Probes {
		r.c.Probes = append(r.c.Probes, p.Name())
	}
	if len(o.ProbeDefs) == len(o.Probes) {
		r.c.ProbeDefs = o.ProbeDefs
	}
	r.target = replay.Target{URL: o.Target, Timeout: r.attemptTimeout(), TLS: o.TLS}
	r.clk = &clock{}
	r.o.Probes = r.clk.retimed(o.Probes)
	return r
}

// settleNote says what quiet period the readings waited for, once
// calibrate learned how long one event's effects take.
func (r *runner) settleNote() {
	switch {
	case !r.learned:
	case r.effSettle < r.o.Settle:
		r.note("effective settle %s: one event's effects took up to %s from sending to the last probe change, so readings waited until the probes had not changed for %s (3 × that, at least %s; give %s to wait longer)",
			report.Duration(r.effSettle), report.Duration(r.effDur), report.Duration(r.effSettle), report.Duration(minQuiet), r.name(InputSettle))
	case r.effDur > 0:
		r.note("effective settle %s: one event's effects took up to %s from sending to the last probe change, so every reading waited until the probes had not changed for %s after the last copy sent (and for at least %s %s)",
			report.Duration(r.effSettle), report.Duration(r.effDur), report.Duration(r.effSettle), r.name(InputSettle), report.Duration(r.o.Settle))
	}
}

// sinkNote says how many of the sink's calls no phase lists.
func (r *runner) sinkNote() {
	if r.o.Sink == nil {
		return
	}
	listed := 0
	for _, d := range r.c.Deliveries {
		for _, p := range d.Phases {
			listed += sinkCalls(p.Effects)
		}
	}
	if r.c.Order != nil {
		listed += sinkCalls(r.c.Order.Effects)
	}
	if total := r.o.Sink.Counted(); total > listed {
		r.note("the sink received %d calls in all; %d of them (the control event's, or calls made between two phases' readings) are not listed under a phase", total, total-listed)
	}
	r.unmatchedNote()
}

// unmatchedNote lists the sink calls not counted: the reads, or those no
// call pattern selects (a token exchange): recorded, never effects.
func (r *runner) unmatchedNote() {
	var order []string
	count := map[string]int{}
	n := 0
	var repeats []probe.Call
	for _, c := range r.o.Sink.Calls() {
		if c.Repeat {
			repeats = append(repeats, c)
			continue
		}
		if r.o.Sink.Counts(c) {
			continue
		}
		n++
		p, _, _ := strings.Cut(c.Path, "?")
		k := c.Method + " " + p
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	r.repeatsNote(repeats)
	if n == 0 {
		return
	}
	var parts []string
	for i, k := range order {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", k, count[k]))
	}
	if !r.o.Sink.Patterns() {
		r.note("the sink received %d reads (GET, HEAD, OPTIONS, TRACE), not counted as effects: a read changes nothing downstream, so only the other methods count (%s 'GET /path' counts a read that does work): %s",
			n, r.name(InputSinkMatch), strings.Join(parts, ", "))
		return
	}
	r.note("the sink received %d calls that match no %s, not counted as effects: %s", n, r.name(InputSinkMatch), strings.Join(parts, ", "))
}

// mailRepeatsNote says how many messages the SMTP sink did not count for
// repeating an X-Bird-Idempotency-Key: sent again, safely, since Bird sends
// one email per key.
func (r *runner) mailRepeatsNote() {
	if r.o.SMTP == nil {
		return
	}
	var order []string
	count := map[string]int{}
	n := 0
	for _, m := range r.o.SMTP.Mails() {
		if !m.Repeat {
			continue
		}
		n++
		k := fmt.Sprintf("%q to %s", m.Subject, strings.Join(m.To, ", "))
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	if n == 0 {
		return
	}
	parts := make([]string, 0, len(order))
	for i, k := range order {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", k, count[k]))
	}
	r.note("the SMTP sink received %d messages repeating an %s it had already seen, not counted as effects (Bird sends one email per key): %s",
		n, probe.MailIdempotencyHeader, strings.Join(parts, ", "))
}

// repeatsNote lists the sink calls that repeated an idempotency key: the
// handler called again, safely — the real API does the work once per key.
func (r *runner) repeatsNote(calls []probe.Call) {
	if len(calls) == 0 {
		return
	}
	var order []string
	count := map[string]int{}
	for _, c := range calls {
		p, _, _ := strings.Cut(c.Path, "?")
		k := c.Method + " " + p
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s ×%d", k, count[k])
	}
	r.note("the sink received %d calls repeating an Idempotency-Key it had already seen, not counted as effects (a real API answers them with the first call's result and does the work once): %s",
		len(calls), strings.Join(parts, ", "))
}

func (r *runner) attemptTimeout() time.Duration {
	if r.o.Timeout > 0 {
		return r.o.Timeout
	}
	t := r.o.ProviderTimeout
	for _, d := range r.o.Deliveries {
		if pt := r.providerTimeout(d); pt > t {
			t = pt
		}
	}
	return t + 5*time.Second
}

func (r *runner) providerTimeout(d Delivery) time.Duration {
	if r.o.ProviderTimeout > 0 {
		return r.o.ProviderTimeout
	}
	if t, ok := verify.ResponseTimeout(d.Scheme); ok {
		return t
	}
	return defaultProviderTimeout
}

func (r *runner) enabled(phase string) bool {
	return len(r.o.Phases) == 0 || slices.Contains(r.o.Phases, phase)
}

// warn adds a run-level warning (shown next to the verdict), once.
func (r *runner) warn(w string) {
	for _, x := range r.c.Warnings {
		if x == w {
			return
		}
	}
	r.c.Warnings = append(r.c.Warnings, w)
	r.obs.Note(Note{Kind: NoteWarning, Text: w})
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
		// The warning itself is long and the run's: each phase it leaves
		// unjudged points at it rather than repeating it.
		ph.Message = "not judged: a second event with another fresh id changed nothing (see the warning: the effect depends on state, or distinct events are dropped)"
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
	r.obs.Note(Note{Kind: NoteAdded, Text: n})
}

// runCaught runs the check; a panic (a library's, or a bug of
// hookreplay's) ends the run as an error in one line naming where it
// happened, so the report of what was judged is still written and stored.
func (r *runner) runCaught(ctx context.Context) (err error) {
	defer panics.Catch(&err)
	return r.run(ctx)
}

func (r *runner) run(ctx context.Context) error {
	if r.o.Serve != nil {
		if err := r.o.Serve.Start(ctx); err != nil {
			return &SetupError{Err: err}
		}
		defer func() {
			r.o.Serve.Stop()
			if r.o.Serve.Cmd != "" && r.o.Serve.KillCmd == "" && canDial(r.o.Serve.Addr) {
				r.note("%s still accepts connections after the handler's process group was stopped: what the serve command started left the group (setsid, a daemon, docker run -d) and holds the port until it is stopped; give %s and it is stopped at the end",
					r.o.Serve.Addr, r.name(InputKill))
			}
		}()
	}
	needFirst := r.perDelivery()
	if needFirst {
		s, err := r.plan()
		if err != nil {
			return err
		}
		if s != nil {
			if err := r.runScheduled(ctx, s); err != nil {
				return err
			}
			return r.all(ctx)
		}
		why := r.groupWhy()
		if why == "" {
			return r.runGrouped(ctx)
		}
		r.unscopedNote(why)
	}
	for _, d := range r.o.Deliveries {
		if !needFirst { // only order was asked for
			r.c.Deliveries = append(r.c.Deliveries, report.DeliveryResult{DeliveryID: d.ID, Provider: d.Provider, EventID: d.EventID, EventIDs: d.EventIDs, EventType: d.EventType})
			continue
		}
		dr, err := r.delivery(ctx, d)
		if dr != nil {
			r.c.Deliveries = append(r.c.Deliveries, *dr)
		}
		if err != nil {
			return err
		}
	}
	return r.all(ctx)
}

// listening reports whether a TCP connection to the target can be opened.
func (r *runner) listening(ctx context.Context) bool {
	host := replay.DialAddr(r.o.Target)
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
		if !verify.Known(d.Scheme) || d.Req == nil {
			continue
		}
		_, err := verify.ResignWith(d.Scheme, d.Req, o.Secret, time.Now(), verify.Options{URL: signedURLFor(o, d.Req)})
		if err != nil && !errors.Is(err, verify.ErrPublicKeyOnly) {
			return &SetupError{Err: &SecretError{DeliveryID: d.ID, Provider: d.Provider, Err: err}}
		}
		if err := capturedSignature(d, o.Secret); err != nil {
			if cs := (*CapturedSignatureError)(nil); errors.As(err, &cs) {
				cs.Providers = providersOf(o.Deliveries)
			}
			return &SetupError{Err: err}
		}
	}
	return nil
}

// verifyOnlyKey drops a key that verifies but cannot sign (the public key
// of a key-pair scheme such as Discord's) from the run's signing secret:
// checkSecret has verified the captured signatures with it, and the run goes
// on as a run without a secret (copies keep their captured signature, the
// phases needing a fresh one are skipped), saying so in one line.
func verifyOnlyKey(o Options) (Options, string) {
	if o.Secret == "" {
		return o, ""
	}
	for _, d := range o.Deliveries {
		if verify.Known(d.Scheme) && !verify.CanSign(d.Scheme, o.Secret) {
			o.Secret = ""
			return o, fmt.Sprintf("%s signs with a private key and the key given is a public key: it verified the captured signature, "+
				"but copies keep that signature and the phases needing a fresh one are skipped "+
				"(to run them, configure the handler with the public key of a test key pair and give its private key)", d.Scheme.Title())
		}
	}
	return o, ""
}

// providersOf names, sorted, the providers of ds when there are several
// (generic requests aside); nil for one.
func providersOf(ds []Delivery) []string {
	var names []string
	for _, d := range ds {
		if verify.Known(d.Scheme) && !slices.Contains(names, d.Provider) {
			names = append(names, d.Provider)
		}
	}
	if len(names) < 2 {
		return nil
	}
	slices.Sort(names)
	return names
}

// capturedSignature verifies d's own captured signature with secret, its
// age aside: a mismatch that no usual re-encoding of the body explains
// (verify.Reencoded) means the secret is not the provider's. Deliveries
// without a signature header, imported ones (their bytes may not be the
// signed ones) and schemes that sign the URL the provider posted to
// (unknown here, behind a proxy) are not judged.
func capturedSignature(d Delivery, secret string) error {
	s := d.Scheme
	if s.SignsURL() || d.Imported {
		return nil
	}
	signed := false
	for _, h := range s.SignatureHeaders() {
		if d.Req.Headers.Get(h) != "" {
			signed = true
		}
	}
	if !signed {
		return nil
	}
	opt := verify.Options{Tolerance: -1}
	res, err := verify.VerifyWith(s, d.Req, secret, opt)
	if err != nil || res.Valid {
		return nil // a secret the scheme cannot use is SecretError's
	}
	if verify.Reencoded(s, d.Req, secret, opt) != "" {
		// The secret is right: a forwarder re-encoded the body before
		// capture. Copies are signed over the bytes sent, so they verify.
		return nil
	}
	return &CapturedSignatureError{DeliveryID: d.ID, Provider: d.Provider, Reason: res.Reason}
}

// routeWarnings warns about a delivery whose provider is not the one the
// target's route evidently serves (/webhooks/stripe and a request with no
// Stripe signature): a stray request through capture, checked against a
// Stripe handler, proves nothing about it.
func (r *runner) routeWarnings() {
	route := strings.ToLower(r.o.Target.Path)
	for _, s := range verify.Schemes() {
		name := s.Name()
		if !verify.Recognised(name) || name == "standard" || !strings.Contains(route, name) {
			continue
		}
		for _, d := range r.o.Deliveries {
			if d.Scheme.Name() == name {
				continue
			}
			what := "a " + orGeneric(d.Provider) + " delivery"
			if !verify.Known(d.Scheme) {
				what = "a request with no signature header of any known provider"
			}
			r.warn(fmt.Sprintf("delivery %d is %s, but %s looks like a %s webhook route: check a %s delivery (%s %s picks the newest)",
				d.ID, what, r.o.Target.Path, s.Title(), s.Title(), r.name(InputProviderFilter), name))
		}
	}
}
