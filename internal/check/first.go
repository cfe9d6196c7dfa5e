package check

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

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
	// late: some of the first copy's effect landed after its answer (the
	// probes read as it was answered differ from the settled reading), so
	// each duplicate's reading waits for its own late effects.
	late bool
	// answeredVals are the probes read as the first copy was answered
	// (nil when the read failed: the settled readings report probe errors).
	answeredVals []probe.Value
	// start, clk and sentAt time the phase (firstSend to firstFinish).
	start, sentAt time.Time
	clk           report.PhaseTiming
	took          time.Duration
	timing        *report.PhaseTiming
	// deferred: sent in a group, its late-effect window left to the
	// group's (grouptest.go).
	deferred bool
	// open is first's late-effect window while the phases after it run
	// inside it (overlap.go; nil: it was watched before first was judged);
	// snap is the runner before first, to check the delivery again from
	// a fresh first; stepped: the copy's step was told when it was read.
	open    *lateWindow
	snap    runnerSnapshot
	stepped bool
	judged  bool // firstFinish judged it
	// clean: an error ended the overlap before anything moved in first's
	// window (overlapped).
	clean bool
}

// first sends the delivery once (with a fresh event id when it can be
// given one) and measures its effect E, which every later phase is judged
// against.
func (r *runner) first(ctx context.Context, d *Delivery) (*firstResult, error) {
	fr, err := r.firstSend(ctx, d, false, nil)
	if err != nil {
		return nil, err
	}
	return fr, r.firstFinish(ctx, d, fr)
}

// firstOpen is first for a delivery whose phases deliveryRest runs next:
// when they can run inside first's late-effect window (overlap.go), it
// returns with that window open (fr.open) and first not judged yet, and
// the store writes held until the overlap is decided.
func (r *runner) firstOpen(ctx context.Context, d *Delivery) (*firstResult, error) {
	snap := r.snapshot(d.ID)
	r.holding, r.holdCat, r.mayOverlap = !r.noOverlap && !r.o.alone, heldFirst, true
	fr, err := r.firstSend(ctx, d, false, nil)
	r.mayOverlap = false
	if err == nil && fr.open != nil {
		fr.snap = snap
		return fr, nil
	}
	if err == nil {
		err = r.firstFinish(ctx, d, fr)
	}
	if rerr := r.release(ctx, nil); err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	return fr, nil
}

// firstSend sends the first copy and reads its effect; firstFinish judges
// it. With grouped, the delivery is one of a group whose first copies are
// sent one after another (grouptest.go): the late-effect window is left to
// the group when the whole effect was in place as the copy was answered
// (fr.deferred), and with prev, the settled reading after the group's
// previous first copy, the reading before is prev's confirmed
// (errMovedBetween when a probe moved since, which no copy of this
// delivery can have caused).
func (r *runner) firstSend(ctx context.Context, d *Delivery, grouped bool, prev *reading) (*firstResult, error) {
	fr := &firstResult{start: time.Now(), clk: r.clk.snapshot()}
	ph := &report.PhaseResult{Phase: PhaseFirst}
	fr.res = ph
	r.phaseStarted(d, PhaseFirst)
	if err := r.reset(ctx); err != nil {
		return nil, err
	}
	req, id, ok, why := r.freshIdentity(d)
	if ok {
		fr.fresh = true
	} else {
		req, id = r.sameIdentity(d, d.Req, d.EventID), d.EventID
		if verify.Handshake(d.Scheme, d.Req) == "" { // a handshake's report says what it is instead
			r.note("delivery %d: first and dups use the captured event id %q: %s; burst, lost and crash need a fresh id and are skipped", d.ID, d.EventID, why)
		}
	}
	fr.req, fr.eventID = req, id
	var before reading
	var err error
	if prev != nil {
		before, err = r.readQuiet(ctx, d, PhaseFirst, "before")
		if err == nil && !probe.SameValues(before.vals, prev.vals) {
			return nil, errMovedBetween
		}
	} else {
		before, err = r.read(ctx, d, PhaseFirst, "before")
	}
	if err != nil {
		return nil, err
	}
	fr.sentAt = time.Now()
	a := r.send(ctx, req, replay.SendOptions{})
	if err := r.record(ctx, &a, d, PhaseFirst, 1, id); err != nil {
		return nil, err
	}
	fr.att = a
	fr.answered = a.Err == "" && a.Status != 0
	fr.answeredVals, _ = probe.ReadAll(ctx, r.o.Probes)
	if fr.answered && !r.haveFirst {
		r.firstLat, r.haveFirst = a.Latency, true
	}
	fr.before = before
	after, err := r.firstAfter(ctx, d, fr, before, grouped)
	if err != nil {
		return nil, err
	}
	fr.before, fr.after = before, after
	if fr.open != nil {
		// Its late-effect window stays open while the phases after it run
		// inside it; it is judged when that window is over (overlap.go).
		fr.effect, fr.usable, fr.stepped = deltas(r.c.Probes, before.vals, after.vals), true, true
		r.step(Step{Phase: PhaseFirst, DeliveryID: d.ID, N: 1, Attempts: []store.Attempt{a}, Effect: fr.effect, Changed: true})
		return fr, nil
	}
	// A deferred delivery's phase ends here: the group's window is no
	// one delivery's time.
	fr.took, fr.timing = time.Since(fr.start), r.clk.since(fr.clk)
	return fr, nil
}

// firstFinish judges the first copy firstSend sent and measured.
func (r *runner) firstFinish(ctx context.Context, d *Delivery, fr *firstResult) error {
	ph, a := fr.res, fr.att
	fr.effect = deltas(r.c.Probes, fr.before.vals, fr.after.vals)
	r.lateEffectNote(d, fr, fr.sentAt)
	fr.late = fr.answeredVals != nil && !probe.SameValues(fr.answeredVals, fr.after.vals)
	ph.Attempts = 1
	ph.Statuses = countStatuses(nil, a)
	ph.Effects = r.effects(ctx, d, PhaseFirst, fr.before, fr.after)
	ph.Duration, ph.Timing = fr.took, fr.timing
	if !fr.stepped {
		r.step(Step{Phase: PhaseFirst, DeliveryID: d.ID, N: 1, Attempts: []store.Attempt{a}, Effect: fr.effect, Changed: anyChanged(fr.effect)})
	}
	if err := r.judgeFirst(ctx, d, fr); err != nil {
		return err
	}
	fr.judged = true
	r.phaseDone(d, ph)
	return nil
}

// firstAfter reads the probes after the first copy: waiting for a change
// and calibrating the settle when the copy was accepted, at once otherwise.
// grouped leaves the late-effect window to the group (fr.deferred) when the
// probes read as the copy was answered already showed the settled effect.
func (r *runner) firstAfter(ctx context.Context, d *Delivery, fr *firstResult, before reading, grouped bool) (reading, error) {
	if !fr.answered || is4xx(fr.att.Status) || verify.Handshake(d.Scheme, d.Req) != "" {
		// A provider's handshake (Meta's GET hub.challenge) is no event:
		// no effect is due, so none is waited for (seconds, then "no
		// effect"), only the settled reading after it.
		return r.read(ctx, d, PhaseFirst, "after")
	}
	after, err := r.readChanged(ctx, d, PhaseFirst, "after", before)
	if err != nil {
		return reading{}, err
	}
	if grouped && fr.answeredVals != nil && probe.SameValues(fr.answeredVals, after.vals) && len(after.unsettled) == 0 {
		fr.deferred = true
		if !after.lastChange.IsZero() {
			r.learn(after.lastChange.Sub(fr.sentAt))
		}
		return after, nil
	}
	if w := r.overlapWindow(d, fr, after, grouped); w != nil {
		fr.open = w
		return after, nil
	}
	return r.calibrate(ctx, d, PhaseFirst, "after", fr.sentAt, after)
}

// judgeFirst sets the first phase's status and message, and whether later
// phases can be judged against it (fr.usable, or fr.why they cannot). A
// handler that cannot be reached at all is a setup error.
func (r *runner) judgeFirst(ctx context.Context, d *Delivery, fr *firstResult) error {
	ph, a, id := fr.res, fr.att, fr.eventID
	changed := anyChanged(fr.effect)
	switch {
	case !fr.answered && !r.listening(ctx):
		// No connection at all: a handler that is not running (or a wrong
		// target) is a setup problem, not a handler that dropped a delivery.
		return &SetupError{Err: &NotListeningError{Target: r.o.Target, Err: a.Err}}
	case !fr.answered && strings.HasPrefix(a.Err, "tls handshake"):
		// A certificate hookreplay cannot verify is a setup problem too.
		return setupf("cannot reach %s: %s", r.o.Target, a.Err)
	case !fr.answered:
		ph.Status = report.Fail
		ph.Violations = append(ph.Violations, report.Violation{Copy: 1, EventID: id,
			Message: fmt.Sprintf("the first copy got no answer: %s", a.Err)})
		ph.Message = "the handler did not answer the first copy"
		fr.why = "the first copy got no answer"
		fr.usable = changed
	case (a.Status == http.StatusNotFound || a.Status == http.StatusMethodNotAllowed) && !changed:
		// No route there: a wrong --to, not a handler that refused an event.
		return &SetupError{Err: &RouteError{DeliveryID: d.ID, Status: a.Status, Body: answerBody(a), Method: d.Req.Method,
			Path: pathOf(replay.RequestTarget(r.o.Target, d.Req.Target)), CapturedPath: pathOf(d.Req.Target)}}
	case rejectsSignature(a.Status) && !changed && r.o.Secret != "" && verify.Known(d.Scheme):
		// Re-signed with the secret given, and refused without effect: the
		// secret or the route is wrong, not the handler.
		return &SetupError{Err: &RejectedError{DeliveryID: d.ID, Status: a.Status, Body: answerBody(a), CapturedStatus: d.CapturedStatus,
			Refusal: verify.LibraryRefusal(d.Scheme, d.Req), Provider: d.Provider, SignedURL: r.signedURLOf(d)}}
	case !is2xx(a.Status) && !changed && r.o.Secret == "" && verify.Known(d.Scheme):
		ph.Status = report.Inconclusive
		ph.Message = r.staleSignatureMessage(d, a.Status)
		fr.why = "the first copy was not accepted"
	case a.Status >= 500 && !changed && fr.fresh && r.o.ResetCmd == "":
		// A fresh event made of the captured one's data, refused with an
		// error and no effect: the data collides with state the captured
		// event left (a unique email, "already exists"), which is not a
		// bug the check can prove.
		ph.Status = report.Inconclusive
		ph.Message = r.stateMessage(id, a)
		fr.why = "the first copy was answered " + fmt.Sprint(a.Status) + " without effect: the effect depends on state"
	case !is2xx(a.Status):
		ph.Status = report.Fail
		ph.Violations = append(ph.Violations, report.Violation{Copy: 1, EventID: id, Status: a.Status,
			Message: fmt.Sprintf("the first copy was answered %d, not 2xx: the provider would retry it", a.Status)})
		ph.Message = fmt.Sprintf("first copy answered %d", a.Status)
		fr.usable = changed
		if !changed {
			fr.why = "the first copy was not accepted"
		}
	case !changed:
		ph.Status = report.Inconclusive
		ph.Message = r.noEffectMessage(d, fr.fresh)
		if b := answerBody(a); b != "" && fr.fresh {
			ph.Message += "; the handler answered " + b
		}
		if a.Latency >= slowNoEffect {
			// Seen with express.json() before @octokit/webhooks' middleware:
			// it waits for a body already read, and its own timeout answers
			// 202 "still processing" 9 s later.
			ph.Message += fmt.Sprintf("; it took %s to answer and did nothing: it may have waited for a request body that a body parser had already read "+
				"(express.json() or express.urlencoded() before a middleware that reads the raw body, such as @octokit/webhooks' createNodeMiddleware)", roundDur(a.Latency))
		}
		fr.why = "the first delivery showed no effect"
	default:
		ph.Status = report.Pass
		ph.Message = fmt.Sprintf("answered %d in %s; effect: %s", a.Status, roundDur(a.Latency), effectText(fr.effect))
		if fr.fresh {
			ph.Message = fmt.Sprintf("sent with fresh event id %s, answered %d in %s; effect: %s", id, a.Status, roundDur(a.Latency), effectText(fr.effect))
		}
		fr.usable = true
	}
	return nil
}

// staleSignatureMessage explains a first copy that was refused without
// effect while it carried its captured signature.
func (r *runner) staleSignatureMessage(d *Delivery, status int) string {
	secret := r.name(InputSecret)
	if s := d.Scheme; s.SignsURL() {
		return fmt.Sprintf("the first copy was answered %d and the probes saw no effect; %s signs the full URL it posted to, so without %s a copy sent to %s carries a signature for the captured URL, which the handler rejects: give %s so copies are re-signed for %s",
			status, s.Title(), secret, r.o.Target, secret, r.name(InputTarget))
	}
	return fmt.Sprintf("the first copy was answered %d and the probes saw no effect; without %s it carries its captured signature, which the handler may reject as stale: give %s so copies are re-signed", status, secret, secret)
}

// stateMessage explains a fresh first copy (event id) answered a (an
// error) without effect: the handler's effect depends on state.
func (r *runner) stateMessage(id string, a store.Attempt) string {
	m := fmt.Sprintf("a fresh event (id %s, the captured event's data) was answered %d and changed nothing: the handler's effect depends on state the captured event left (a unique key such as an email, an \"already exists\" check), not only on the event id; give %s to restore that state before the check",
		id, a.Status, r.name(InputReset))
	if b := answerBody(a); b != "" {
		m += "; the handler answered " + b
	}
	return m
}

// noEffectMessage explains a first delivery the probes saw no effect of.
func (r *runner) noEffectMessage(d *Delivery, fresh bool) string {
	if h := verify.Handshake(d.Scheme, d.Req); h != "" {
		// Not an event: saying "probe what the handler changes" would send
		// the user after a probe that is fine.
		return fmt.Sprintf("the probes saw no effect of the first delivery, and none is due: delivery %d is %s, not an event, so there is no work to do exactly once; "+
			"check a delivery of an event the handler acts on (hookreplay list --provider %s)", d.ID, h, d.Provider)
	}
	reset := r.name(InputReset)
	m := "the probes saw no effect of the first delivery; probe what the handler changes"
	if fresh {
		m += fmt.Sprintf(" (it was sent with a fresh event id; when the handler's effect depends on state, e.g. it sets status=active, give %s to restore that state first; "+
			"a handler that deduplicates on something distinct events share — a hook or installation id, a timestamp — instead of the event id takes every event after the first it saw for a duplicate and drops it)", reset)
	} else {
		m += fmt.Sprintf(" (it was sent with its captured event id, so the handler may already have processed it, e.g. when it was captured; give %s so hookreplay sends it with a fresh event id, or %s)", r.name(InputSecret), reset)
	}
	m += fmt.Sprintf("; a handler that works asynchronously for longer than %s needs a larger %s", report.Duration(r.changeWait()), r.name(InputSettle))
	if d.EventType != "" {
		m += fmt.Sprintf("; a handler that ignores %s events (answers 2xx and does nothing) has nothing to prove for this delivery: check a delivery of a type it acts on", d.EventType)
	}
	return m
}

// slowNoEffect is how long a first answer without effect must take to be
// worth a word about a handler stuck reading its body.
const slowNoEffect = 2 * time.Second

// pathOf is the path of a request target (its query cut off).
func pathOf(target string) string {
	p, _, _ := strings.Cut(target, "?")
	return p
}

// rejectsSignature reports whether status is how handlers refuse a request
// they do not trust: 400, 401 or 403.
func rejectsSignature(status int) bool {
	return status == 400 || status == 401 || status == 403
}

// maxBodyShown bounds the answer body quoted in a message.
const maxBodyShown = 200

// answerBody is the start of a's answer body, on one line and escaped
// (control bytes and invalid UTF-8 quoted), "" when it has none.
func answerBody(a store.Attempt) string {
	b := a.ResponseBody
	if len(b) == 0 {
		return ""
	}
	more := ""
	if len(b) > maxBodyShown {
		b, more = b[:maxBodyShown], fmt.Sprintf("… (%d bytes)", len(a.ResponseBody))
	}
	q := strconv.Quote(strings.TrimSpace(string(b)))
	return q + more
}
