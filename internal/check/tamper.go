package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// tamper sends a fresh event whose body was changed after signing, and a
// correctly signed fresh event whose timestamp is an hour old: each must be
// refused and change nothing. Refused means any answer but a 2xx: a 5xx is
// no worse than a 4xx here, since providers retry every non-2xx alike and
// never send a forged copy at all; the message names what each got.
func (r *runner) tamper(ctx context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	start := time.Now()
	ph := &report.PhaseResult{Phase: PhaseTamper, Statuses: map[string]int{}}
	copies, why := r.tamperedCopies(d, ph)
	if len(copies) == 0 {
		return skipped(ph, why), nil
	}
	prev, err := r.readQuiet(ctx, d, PhaseTamper, "before")
	if err != nil {
		return nil, err
	}
	var answers []string
	for i, t := range copies {
		a := r.send(ctx, t.req, replay.SendOptions{})
		a.Edit = t.what
		if err := r.record(ctx, &a, d, PhaseTamper, i+1, t.id); err != nil {
			return nil, err
		}
		countStatuses(ph.Statuses, a)
		ph.Attempts++
		cur, err := r.peek(ctx, d, PhaseTamper, fmt.Sprintf("after copy %d", i+1))
		if err != nil {
			return nil, err
		}
		answers = append(answers, r.judgeTampered(ph, i+1, t, a, prev, cur))
		ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseTamper, prev, cur)...)
		prev = cur
		r.step(Step{Phase: PhaseTamper, DeliveryID: d.ID, N: i + 1, What: t.what, Attempts: []store.Attempt{a}})
	}
	last, err := r.read(ctx, d, PhaseTamper, "after the last copy")
	if err != nil {
		return nil, err
	}
	r.judgeLateTampered(ph, prev, last)
	ph.Effects = append(ph.Effects, r.effects(ctx, d, PhaseTamper, prev, last)...)
	ph.Duration = time.Since(start)
	if len(ph.Violations) > 0 {
		ph.Status = report.Fail
		ph.Message = ph.Violations[0].Message
		return ph, nil
	}
	ph.Status = report.Pass
	ph.Message = "refused with no effect: " + strings.Join(answers, "; ")
	return ph, nil
}

// tamperedCopy is one forged copy tamper sends.
type tamperedCopy struct {
	what string
	req  *message.Request
	id   string
}

// tamperedCopies makes the forged copies of fresh events: one whose body
// was changed after signing, and one correctly signed an hour ago (for
// schemes whose signature has a timestamp). With none, why says why.
func (r *runner) tamperedCopies(d *Delivery, ph *report.PhaseResult) (copies []tamperedCopy, why string) {
	// 1: one body byte changed after signing, JSON kept valid.
	req, id, ok, why := r.freshIdentity(d)
	if !ok {
		return nil, why
	}
	if fg, ok := d.Scheme.(verify.Forger); ok {
		// The body is not signed: a changed body is no forgery to the
		// provider's own check, so change what the signature covers.
		t := req.Clone()
		if desc, ok := fg.Forge(t); ok {
			copies = append(copies, tamperedCopy{what: "a copy whose " + strings.TrimPrefix(desc, "the "), req: t, id: id})
		} else {
			ph.Warnings = append(ph.Warnings, "the delivery carries nothing its signature covers that could be changed; the forged copy was not sent")
		}
	} else if body, desc, ok := tamperBody(req.Body, id); ok {
		t := req.Clone()
		t.Body = body
		copies = append(copies, tamperedCopy{what: "a copy whose body was changed after signing (" + desc + ")", req: t, id: id})
	} else {
		ph.Warnings = append(ph.Warnings, "no body byte could be changed without touching the event id; the tampered-body copy was not sent")
	}
	// 2: correctly signed an hour ago, for schemes with a timestamp.
	if req2, id2, ok, _ := r.freshIdentity(d); ok {
		old, err := verify.SignWith(d.Scheme, req2, r.o.Secret, verify.Options{Now: time.Now().Add(-time.Hour), URL: r.urlFor(req2)})
		_, has := d.Scheme.SignedAt(req2)
		switch {
		case err == nil && has && d.Scheme.Tolerance() <= 0:
			// A correct handler following the provider's docs accepts it.
			r.note("tamper: %s signatures carry a timestamp but %s sets no tolerance, so the 1h-old signature copy was not sent", d.Provider, d.Scheme.Title())
		case err == nil && has:
			copies = append(copies, tamperedCopy{what: "a correctly signed copy whose signature timestamp is 1h old", req: old, id: id2})
		default:
			r.note("tamper: %s signatures carry no timestamp, so the 1h-old signature copy was not sent", d.Provider)
		}
	}
	return copies, "nothing to tamper with"
}

// judgeTampered adds the violations of forged copy n (t, answered a, read
// cur after prev) to ph, and says what the copy got, for the message of a
// phase that passed.
func (r *runner) judgeTampered(ph *report.PhaseResult, n int, t tamperedCopy, a store.Attempt, prev, cur reading) string {
	for k, name := range r.c.Probes {
		if !cur.vals[k].Equal(prev.vals[k]) {
			why := "the handler does not verify signatures before acting"
			if is4xx(a.Status) {
				// Rejected, yet something moved: acting before the check, or
				// work from an earlier phase landing later than learned.
				why = fmt.Sprintf("it was answered %d, so the handler acts before it rejects (or this is late work of an earlier phase: raise %s)", a.Status, r.name(InputSettle))
			}
			ph.Violations = append(ph.Violations, report.Violation{Copy: n, EventID: t.id, Probe: name, Status: a.Status,
				Before: prev.vals[k].String(), After: cur.vals[k].String(), Want: prev.vals[k].String(),
				Message: fmt.Sprintf("%s was acted on: %s changed from %s to %s%s; %s", t.what, name, prev.vals[k], cur.vals[k], fieldsHint(prev.vals[k], cur.vals[k]), why)})
		}
	}
	switch {
	case a.Err != "":
		return fmt.Sprintf("%s got no answer (%s)", t.what, a.Err)
	case is2xx(a.Status):
		ph.Violations = append(ph.Violations, report.Violation{Copy: n, EventID: t.id, Status: a.Status,
			Message: fmt.Sprintf("%s was accepted with %d; the handler does not verify signatures before acting (want a refusal, e.g. 401)", t.what, a.Status)})
	case !is4xx(a.Status):
		return fmt.Sprintf("%s was answered %d (a 4xx says 'refused' more plainly in logs, but providers retry every non-2xx alike)", t.what, a.Status)
	}
	return fmt.Sprintf("%s was answered %d", t.what, a.Status)
}

// judgeLateTampered adds a violation for every probe that changed after the
// last forged copy's peek (prev) until the settled reading (last): work
// the handler did after answering a forged copy.
func (r *runner) judgeLateTampered(ph *report.PhaseResult, prev, last reading) {
	for k, name := range r.c.Probes {
		if last.vals[k].Equal(prev.vals[k]) {
			continue
		}
		ph.Violations = append(ph.Violations, report.Violation{Probe: name, Before: prev.vals[k].String(), After: last.vals[k].String(), Want: prev.vals[k].String(),
			Message: fmt.Sprintf("after the forged copies were answered, %s changed from %s to %s%s: the handler acted on a forged copy after answering it (its signature check does not guard the work it queues)", name, prev.vals[k], last.vals[k], fieldsHint(prev.vals[k], last.vals[k]))})
	}
}

// tamperBody changes one byte of body, keeping JSON valid and the event id
// intact: the last digit of the first number value, else a letter of the
// first string value that is not the id. desc says what changed.
func tamperBody(body []byte, id string) (out []byte, desc string, ok bool) {
	if len(body) == 0 {
		return nil, "", false
	}
	isJSON := json.Valid(body)
	try := func(pos int) ([]byte, bool) {
		c := body[pos]
		var n byte
		switch {
		case c >= '0' && c <= '8':
			n = c + 1
		case c == '9':
			n = '8'
		case c >= 'a' && c < 'z', c >= 'A' && c < 'Z':
			n = c + 1
		case c == 'z' || c == 'Z':
			n = c - 1
		default:
			return nil, false
		}
		b := append([]byte(nil), body...)
		b[pos] = n
		if isJSON && !json.Valid(b) {
			return nil, false
		}
		if id != "" && !bytes.Contains(b, []byte(id)) && bytes.Contains(body, []byte(id)) {
			return nil, false // touched the id
		}
		return b, true
	}
	if isJSON {
		for _, cand := range jsonCandidates(body, id) {
			if b, ok := try(cand.pos); ok {
				return b, fmt.Sprintf("%s %q → %q at byte %d", cand.kind, body[cand.pos], b[cand.pos], cand.pos), true
			}
		}
		return nil, "", false
	}
	// A form (GitHub's default application/x-www-form-urlencoded, with the
	// JSON in payload=; Twilio's parameters): change a value, never a name —
	// a handler that does not verify would still reject payload renamed to
	// qayload, and look as if it did.
	for _, cand := range formCandidates(body) {
		if b, ok := try(cand.pos); ok {
			return b, fmt.Sprintf("%s %q → %q at byte %d", cand.kind, body[cand.pos], b[cand.pos], cand.pos), true
		}
	}
	for i := range body {
		if b, ok := try(i); ok {
			return b, fmt.Sprintf("byte %d %q → %q", i, body[i], b[i]), true
		}
	}
	return nil, "", false
}

// formCandidates lists byte positions inside the values of a form body
// (name=value&…), none when body is not one: the last digit of each run of
// digits first, then the first letter of each value, never inside a %XX
// escape.
func formCandidates(body []byte) []candidate {
	if bytes.ContainsAny(body, " \t\r\n{}\"") || !bytes.Contains(body, []byte("=")) {
		return nil
	}
	if _, err := url.ParseQuery(string(body)); err != nil {
		return nil
	}
	var digits, letters []candidate
	start := 0
	for _, pair := range bytes.Split(body, []byte("&")) {
		eq := bytes.IndexByte(pair, '=')
		if eq < 0 {
			start += len(pair) + 1
			continue
		}
		name, _ := url.QueryUnescape(string(pair[:eq]))
		kind := "form value " + name
		letter := false
		for i := eq + 1; i < len(pair); i++ {
			c := pair[i]
			switch {
			case c == '%':
				i += 2 // an escape: its hex digits are not the value's
			case c >= '0' && c <= '9':
				if i+1 == len(pair) || pair[i+1] < '0' || pair[i+1] > '9' {
					digits = append(digits, candidate{pos: start + i, kind: "a digit in " + kind})
				}
			case !letter && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
				letters = append(letters, candidate{pos: start + i, kind: "a letter in " + kind})
				letter = true
			}
		}
		start += len(pair) + 1
	}
	return append(digits, letters...)
}

type candidate struct {
	pos  int
	kind string
}

// jsonCandidates lists byte positions inside JSON values that can be changed:
// the last digit of each number value first, then letters of string values
// (not keys, not the id, not escapes).
func jsonCandidates(body []byte, id string) []candidate {
	var nums, strs []candidate
	var stack []byte // '{' or '['
	expectKey := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '{':
			stack = append(stack, c)
			expectKey = true
		case c == '[':
			stack = append(stack, c)
			expectKey = false
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case c == ':':
			expectKey = false
		case c == ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case c == '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(body) {
				return append(nums, strs...)
			}
			content := string(body[i+1 : j])
			if !expectKey && content != id && !strings.Contains(content, "\\") {
				for k := i + 1; k < j; k++ {
					ch := body[k]
					if (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') {
						strs = append(strs, candidate{pos: k, kind: "a letter in a string value"})
						break
					}
				}
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(body) && (body[j] >= '0' && body[j] <= '9' || body[j] == '-') {
				j++
			}
			if j-1 >= i && body[j-1] >= '0' && body[j-1] <= '9' && string(body[i:j]) != id {
				nums = append(nums, candidate{pos: j - 1, kind: "a digit in a number"})
			}
			for j < len(body) && strings.IndexByte("0123456789.eE+-", body[j]) >= 0 {
				j++
			}
			i = j - 1
		}
	}
	return append(nums, strs...)
}
