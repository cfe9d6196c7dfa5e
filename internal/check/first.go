package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
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
