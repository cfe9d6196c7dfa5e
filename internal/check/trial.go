package check

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// additivity records whether a second fresh event changed the probes as much
// as the first did (effects add up per event), so that zero means lost work.
type additivity struct {
	known, yes bool
	note       string
	// none: the control event changed nothing although the first delivery
	// did (warning holds what that means).
	none    bool
	warning string
	// state: the control event was refused (answered an error) and changed
	// nothing: the effect depends on state the first delivery left, so no
	// phase that sends a fresh event can be judged without a reset; stateWhy
	// says so, in the words of the first phase's own state message.
	state    bool
	stateWhy string
}

// exactJudgement reports whether zero effect in a fresh-identity phase can be
// judged as lost work: the state was reset before it, or a second fresh event
// (the control) changed the probes exactly as the first did.
func (r *runner) exactJudgement(ctx context.Context, d *Delivery, fr *firstResult) (bool, error) {
	if r.o.ResetCmd != "" {
		r.gen.Add(1)
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
	before, err := r.readQuiet(ctx, d, "control", "before")
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
	if !r.optControl(sentAt, after, deltas(r.c.Probes, before.vals, after.vals), fr) {
		if after, err = r.calibrate(ctx, d, "control", "after", sentAt, after); err != nil {
			return false, err
		}
	}
	ctl := deltas(r.c.Probes, before.vals, after.vals)
	r.judgeControl(ad, d, fr, id, a, ctl)
	r.step(Step{Phase: "control", DeliveryID: d.ID, N: 1, Attempts: []store.Attempt{a}, Effect: ctl, Changed: anyChanged(ctl)})
	return ad.yes, nil
}

// judgeControl records in ad what the control event (fresh event id, sent
// as a, effect ctl) showed, with the note or warning that says so.
func (r *runner) judgeControl(ad *additivity, d *Delivery, fr *firstResult, id string, a store.Attempt, ctl []report.ProbeDelta) {
	reset := r.name(InputReset)
	ad.yes = is2xx(a.Status) && sameEffect(fr.effect, ctl)
	if a.Err == "" && !a.Lost && !is2xx(a.Status) && !anyChanged(ctl) && anyChanged(fr.effect) && r.o.ResetCmd == "" {
		ad.state = true
		ad.stateWhy = r.stateMessage(id, a)
		r.warn(fmt.Sprintf("delivery %d: %s not judged: %s", d.ID, strings.Join(r.controlPhases, ", "), ad.stateWhy))
		return
	}
	if !anyChanged(ctl) && anyChanged(fr.effect) && r.o.ResetCmd == "" {
		ad.none = true
		answer := statusText(a)
		if b := answerBody(a); b != "" && !is2xx(a.Status) {
			answer += " " + b
		}
		ad.warning = fmt.Sprintf("delivery %d (%s): a second event with another fresh id (%s, answered %s) changed nothing, while the first delivery changed %s: "+
			"either the effect depends on state, e.g. the handler keys its work on the object the event is about (an invoice, an order), "+
			"which a second event about it rightly leaves alone (give %s to judge exactly), or the handler deduplicates on something other than the event id "+
			"(a hook or subscription id, the signature, a timestamp) and drops distinct events", d.ID, strings.Join(r.controlPhases, ", "), id, answer, effectText(fr.effect), reset)
		r.warn(ad.warning)
	}
	if ad.yes {
		r.note("delivery %d: a control event with another fresh id changed the probes exactly as the first did (%s), so every fresh event must have exactly that effect", d.ID, effectText(ctl))
	} else if !ad.none {
		r.note("delivery %d: a control event with another fresh id changed the probes by %s, not %s: the effect depends on state, not only on the event; give %s to judge burst, lost and crash exactly", d.ID, effectText(ctl), effectText(fr.effect), reset)
	}
}

// controlPhasesToRun names the phases that judge a fresh event against the
// control event's finding and will run (runner.controlPhases).
func (r *runner) controlPhasesToRun() []string {
	var out []string
	for _, p := range phases {
		if res, _ := r.unmet(p); p.control && r.enabled(p.name) && res == nil {
			out = append(out, p.name)
		}
	}
	return out
}

// stateDependent returns the result of phase p, which sends fresh events,
// when a fresh event was refused because of state (the control event's
// additivity.state): inconclusive, with the same reason in every such phase,
// so that one cause never fails one phase and leaves another unjudged. It
// sends the control event when it was not sent yet; nil means p can run.
func (r *runner) stateDependent(ctx context.Context, d *Delivery, fr *firstResult, p phase) (*report.PhaseResult, error) {
	if !p.control || r.o.ResetCmd != "" {
		return nil, nil
	}
	if _, err := r.exactJudgement(ctx, d, fr); err != nil {
		return nil, err
	}
	ad := r.additive[d.ID]
	if ad == nil || !ad.state {
		return nil, nil
	}
	return &report.PhaseResult{Phase: p.name, Status: report.Inconclusive, Statuses: map[string]int{},
		Message: fmt.Sprintf("not judged: a fresh event was refused without effect, the effect depends on state (see the warning); give %s to judge it", r.name(InputReset))}, nil
}

// trial is one fresh event a phase sends (in however many copies), judged
// against the first delivery's effect.
type trial struct {
	// exact: zero effect can be judged as lost work (see exactJudgement).
	exact  bool
	req    *message.Request
	id     string
	before reading
}

// startTrial prepares a fresh-event trial of phase: the exact judgement
// (resetting the state, or sending the control event once), a fresh
// identity, and the reading before it, taken at point. When the delivery
// cannot be given a fresh identity it returns nil and why.
func (r *runner) startTrial(ctx context.Context, d *Delivery, fr *firstResult, phase, point string) (t *trial, why string, err error) {
	exact, err := r.exactJudgement(ctx, d, fr)
	if err != nil {
		return nil, "", err
	}
	req, id, ok, why := r.freshIdentity(d)
	if !ok {
		return nil, why, nil
	}
	before, err := r.readQuiet(ctx, d, phase, point)
	if err != nil {
		return nil, "", err
	}
	return &trial{exact: exact, req: req, id: id, before: before}, "", nil
}

// judge judges the trial's combined effect, read after it, against the
// first delivery's.
func (r *runner) judge(fr *firstResult, t *trial, after reading) judgement {
	return judgeOnce(r.c.Probes, fr.effect, t.before.vals, after.vals, t.exact, r.o.ResetCmd != "", fr.before.vals, fr.after.vals, r.name(InputReset))
}

// skipped marks ph as not run, for why.
func skipped(ph *report.PhaseResult, why string) *report.PhaseResult {
	ph.Status, ph.Message = report.Skip, "not run: "+why
	return ph
}

// freshIdentity returns a copy of d's request with a new event id (re-signed
// when a secret is known), or ok false with the reason it cannot be made.
func (r *runner) freshIdentity(d *Delivery) (req *message.Request, id string, ok bool, why string) {
	if !canFresh(d, r.o.Secret) {
		return nil, "", false, r.freshReason(d)
	}
	id = verify.NewEventIDFor(d.Scheme, d.Req)
	req, err := verify.ReidentifyWith(d.Scheme, d.Req, id, r.o.Secret, r.stamps.at(id, time.Now(), d.Scheme.Tolerance()), verify.Options{URL: r.urlFor(d.Req)})
	if err != nil {
		return nil, "", false, fmt.Sprintf("the delivery cannot be given a fresh event id: %v", err)
	}
	return req, id, true, ""
}

// sameIdentity returns req, a copy of event id, again for another copy of
// that event: re-signed with a timestamp no earlier copy of it carried
// (signStamps) when a secret is known.
func (r *runner) sameIdentity(d *Delivery, req *message.Request, id string) *message.Request {
	if r.o.Secret == "" {
		return req
	}
	s, err := verify.ResignWith(d.Scheme, req, r.o.Secret, r.stamps.at(id, time.Now(), d.Scheme.Tolerance()), verify.Options{URL: r.urlFor(req)})
	if err != nil {
		r.note("copies of delivery %d were sent with their captured signature: re-signing failed: %v", d.ID, err)
		return req
	}
	return s
}

// asRetry marks req as the provider's retry number n the way the provider
// really does (verify's Scheme.MarkRetry: Slack adds X-Slack-Retry-Num;
// the others resend the same event id without a retry header).
func asRetry(d *Delivery, req *message.Request, n int) *message.Request {
	return verify.MarkRetry(req, d.Scheme, n)
}

// urlFor is the full URL a copy of req is signed for: what a provider that
// signs the URL (Twilio) was configured with — the one it is sent to,
// unless Options.SignedURL says another.
func (r *runner) urlFor(req *message.Request) string {
	return signedURLFor(r.o, req)
}

// signedURLOf is the URL d's copies are signed for when its provider signs
// one, "" otherwise.
func (r *runner) signedURLOf(d *Delivery) string {
	if d.Scheme == nil || !d.Scheme.SignsURL() || d.Req == nil {
		return ""
	}
	return r.urlFor(d.Req)
}

// signedURLFor is the URL a copy of req is signed for: Options.SignedURL's
// when given, else the one it is sent to.
func signedURLFor(o Options, req *message.Request) string {
	if o.SignedURL != nil {
		return replay.FullURL(o.SignedURL, req.Target)
	}
	return replay.FullURL(o.Target, req.Target)
}

func canFresh(d *Delivery, secret string) bool {
	if !verify.Known(d.Scheme) || d.EventID == "" {
		return false
	}
	return secret != "" || !d.Scheme.IdentitySigned()
}

// freshReason says why d cannot be given a fresh event id.
func (r *runner) freshReason(d *Delivery) string {
	if !verify.Known(d.Scheme) || d.EventID == "" {
		return "the delivery has no event id hookreplay knows how to change (provider " + orGeneric(d.Provider) + ")"
	}
	if r.o.Secret == "" && d.Scheme.IdentitySigned() && r.publicKeyOnly {
		return fmt.Sprintf("a fresh event id would break the %s signature, and the key given is a public key, which cannot sign", d.Provider)
	}
	if r.o.Secret == "" && d.Scheme.IdentitySigned() {
		return fmt.Sprintf("a fresh event id would break the %s signature: give %s to enable it", d.Provider, r.name(InputSecretSources))
	}
	return "provider " + d.Provider + " has no event identity scheme"
}

func (r *runner) send(ctx context.Context, req *message.Request, opt replay.SendOptions) store.Attempt {
	r.gen.Add(1)
	if r.flight != nil && r.flight.Acquire(ctx, 1) == nil {
		defer r.flight.Release(1)
	}
	r.clk.sendBegin()
	a := replay.Send(ctx, r.target, req, opt)
	r.clk.sendEnd()
	r.sent()
	if r.pace != nil {
		r.pace.answered(r.paceSlot, a)
	}
	return a
}

// signStamps hands out the times copies are signed at. A provider signs each
// attempt of an event when it makes it, so no two attempts carry the same
// timestamped signature (Stripe's t=, Slack's, Standard Webhooks'), while
// copies hookreplay sends within one second would: a handler that
// deduplicates on the signature header or on a hash of timestamp and body
// recognised them as duplicates and passed dups, burst and lost, and then
// did every real retry again. So every copy of an event gets a whole second
// none of its earlier copies got: now when it is free, else the nearest free
// one, earlier first, within maxStampSpread of now (beyond that, with more
// copies of one event than seconds in the window, seconds are reused).
type signStamps struct {
	mu   sync.Mutex
	used map[string]map[int64]bool // event id → unix seconds signed at
}

// maxStampSpread bounds how far from now a copy's signature time moves:
// well inside every provider's tolerance (5 minutes: Stripe, Slack,
// Standard Webhooks, Svix; a tamper copy 1 h old must stay the only stale one).
const maxStampSpread = 2 * time.Minute

// at returns the time a copy of event id sent now is signed at, within
// maxStampSpread of now and within half of tol, the scheme's tolerance when
// it has one: Paddle refuses a signature over 5 s old, so the sixth copy of
// an event signed 5 s before now was refused by a correct handler.
func (s *signStamps) at(id string, now time.Time, tol time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used == nil {
		s.used = map[string]map[int64]bool{}
	}
	used := s.used[id]
	if used == nil {
		used = map[int64]bool{}
		s.used[id] = used
	}
	spread := maxStampSpread
	if tol > 0 && tol/2 < spread {
		spread = tol / 2
	}
	sec := now.Unix()
	for k := int64(0); k <= int64(spread/time.Second); k++ {
		for _, c := range []int64{sec - k, sec + k} {
			if !used[c] {
				used[c] = true
				return time.Unix(c, 0)
			}
		}
	}
	return now
}
