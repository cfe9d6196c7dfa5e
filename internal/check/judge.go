package check

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// deltas is each probe's change between two readings.
func deltas(names []string, before, after []probe.Value) []report.ProbeDelta {
	out := make([]report.ProbeDelta, len(names))
	for i, n := range names {
		pd := report.ProbeDelta{Probe: n, Before: before[i].String(), After: after[i].String(), Changed: !before[i].Equal(after[i])}
		if d, ok := probe.Delta(before[i], after[i]); ok {
			pd.Delta = &d
		}
		out[i] = pd
	}
	return out
}

func anyChanged(ds []report.ProbeDelta) bool {
	for _, d := range ds {
		if d.Changed {
			return true
		}
	}
	return false
}

func anyChangedVals(a, b []probe.Value) bool { return !probe.SameValues(a, b) }

// sameEffect reports whether two effects are the same: equal numeric deltas,
// and the same probes changed.
func sameEffect(a, b []report.ProbeDelta) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Changed != b[i].Changed {
			return false
		}
		if a[i].Delta != nil && b[i].Delta != nil && !probe.SameAmount(*a[i].Delta, *b[i].Delta, deltaTolerance(a[i], b[i])) {
			return false
		}
		if (a[i].Delta == nil) != (b[i].Delta == nil) {
			return false
		}
	}
	return true
}

// deltaTolerance is the tolerance for comparing the deltas of these probe
// changes, from the readings they were measured on.
func deltaTolerance(ds ...report.ProbeDelta) float64 {
	var vs []probe.Value
	for _, d := range ds {
		vs = append(vs, probe.TextValue(d.Before), probe.TextValue(d.After))
	}
	return probe.Tolerance(vs...)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func signed(f float64) string {
	if f > 0 {
		return "+" + num(f)
	}
	return num(f)
}

// effectText describes an effect in a few words: "sql: … 0 → 5000 (+5000)".
func effectText(ds []report.ProbeDelta) string {
	var parts []string
	for _, d := range ds {
		switch {
		case !d.Changed:
			continue
		case d.Delta != nil:
			parts = append(parts, fmt.Sprintf("%s %s → %s (%s)", d.Probe, short(d.Before), short(d.After), signed(*d.Delta)))
		default:
			parts = append(parts, fmt.Sprintf("%s changed", d.Probe))
		}
	}
	if len(parts) == 0 {
		return "no probe changed"
	}
	return strings.Join(parts, "; ")
}

func short(s string) string {
	s = strings.ReplaceAll(s, "\n", " | ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// judgement is the verdict of a phase whose combined effect must equal the
// first delivery's effect E.
type judgement struct {
	status     report.Status
	message    string
	violations []report.Violation
	warnings   []string
}

// judgeOnce judges a phase that sent one fresh event (in however many
// copies): its combined effect must equal E. exact means the phase started
// from a known state (reset) or effects are known to add up per event,
// so that no change means the event's work was lost; without it a probe that
// did not move cannot be judged. More than E in E's direction is always a
// violation: the work was done more than once.
//
// With reset, the phase started from the same state as the first delivery
// (firstBefore), so a non-numeric probe that ends where the first delivery
// left it (firstAfter) is judged: the same final state as one delivery.
// resetName is how warnings name the reset command.
func judgeOnce(names []string, e []report.ProbeDelta, before, after []probe.Value, exact, reset bool, firstBefore, firstAfter []probe.Value, resetName string) judgement {
	o := &onceJudge{exact: exact, reset: reset, firstBefore: firstBefore, firstAfter: firstAfter,
		why: "give " + resetName + " so the state is restored before the phase"}
	if reset {
		o.why = "the state was reset before the phase"
	}
	for k, name := range names {
		b, a := before[k], after[k]
		if d, ok := probe.Delta(b, a); ok && e[k].Delta != nil {
			o.amount(k, name, b, a, d, *e[k].Delta)
			continue
		}
		o.state(k, name, b, a, e[k].Changed)
	}
	o.conclude()
	return o.j
}

// onceJudge is judgeOnce's work in progress: the judgement so far and how
// many probes were judged and not.
type onceJudge struct {
	exact, reset            bool
	firstBefore, firstAfter []probe.Value
	// why ends a warning about a probe that cannot be judged.
	why              string
	j                judgement
	judged, unjudged int
}

// amount judges probe k, name, a number that moved by d from b to a,
// against the first delivery's change ed.
func (o *onceJudge) amount(k int, name string, b, a probe.Value, d, ed float64) {
	// Amounts are compared as decimals: exactly for whole numbers, within a
	// relative tolerance for fractions (19.99 in a REAL column), so float
	// rounding is never a finding.
	edExact := new(big.Rat).SetFloat64(ed)
	tolVals := []probe.Value{b, a}
	if len(o.firstBefore) > k && len(o.firstAfter) > k {
		if x, ok := probe.ExactDelta(o.firstBefore[k], o.firstAfter[k]); ok {
			edExact = x
		}
		tolVals = append(tolVals, o.firstBefore[k], o.firstAfter[k])
	}
	tol := probe.Tolerance(tolVals...)
	bExact, _ := b.Rat()
	want := probe.FormatRat(new(big.Rat).Add(bExact, edExact))
	violation := func(msg string) {
		o.j.violations = append(o.j.violations, report.Violation{Probe: name, Before: b.String(), After: a.String(), Want: want, Message: msg})
	}
	switch {
	case probe.SameAmount(d, ed, tol):
		if ed != 0 {
			o.judged++
		}
	case ed != 0 && d*ed > 0 && math.Abs(d) > math.Abs(ed)+tol:
		times := d / ed
		extra := ""
		if rt := math.Round(times); rt >= 2 && math.Abs(times-rt) <= 1e-6*rt {
			extra = fmt.Sprintf(": the event was processed %s times (%s extra)", num(rt), pluralCopies(int(rt)-1))
		}
		violation(fmt.Sprintf("%s changed from %s to %s (want %s, one event's effect %s)%s", name, b, a, want, signed(ed), extra))
	case !o.exact:
		o.unjudged++
		o.j.warnings = append(o.j.warnings, fmt.Sprintf("%s changed by %s where the first delivery changed it by %s; not judged: the effect depends on state, %s", name, signed(d), signed(ed), o.why))
	case probe.SameAmount(d, 0, tol):
		violation(fmt.Sprintf("%s stayed at %s (want %s): the event's work was lost", name, b, want))
	default:
		violation(fmt.Sprintf("%s changed from %s to %s (want %s, one event's effect %s)", name, b, a, want, signed(ed)))
	}
}

// state judges probe k, name, whose values (b, then a) are not amounts to
// compare; eChanged says whether the first delivery changed it.
func (o *onceJudge) state(k int, name string, b, a probe.Value, eChanged bool) {
	changed := !b.Equal(a)
	sameAsFirst := o.reset && len(o.firstBefore) > k && len(o.firstAfter) > k && b.Equal(o.firstBefore[k]) && a.Equal(o.firstAfter[k])
	switch {
	case !eChanged && !changed:
	case eChanged && sameAsFirst:
		o.judged++
	case eChanged && !changed && o.exact:
		o.j.violations = append(o.j.violations, report.Violation{Probe: name, Before: b.String(), After: a.String(),
			Message: fmt.Sprintf("%s did not change, but the first delivery changed it: the event's work was lost", name)})
	case eChanged && changed:
		o.unjudged++
		o.j.warnings = append(o.j.warnings, fmt.Sprintf("%s is not a number: it changed%s, but whether once or more cannot be judged (probe a count or a sum to judge it)", name, fieldsHint(b, a)))
	case changed:
		o.unjudged++
		o.j.warnings = append(o.j.warnings, fmt.Sprintf("%s changed although the first delivery did not change it; not judged", name))
	default:
		o.unjudged++
		o.j.warnings = append(o.j.warnings, fmt.Sprintf("%s did not change; not judged: the effect may depend on state, %s", name, o.why))
	}
}

// conclude sets the judgement's status and message from its findings.
func (o *onceJudge) conclude() {
	j := &o.j
	switch {
	case len(j.violations) > 0:
		j.status = report.Fail
		var ms []string
		for _, v := range j.violations {
			ms = append(ms, v.Message)
		}
		j.message = strings.Join(ms, "; ")
	case o.judged > 0:
		j.status = report.Pass
		j.message = "combined effect equals the first delivery's"
		if o.unjudged > 0 {
			j.message += fmt.Sprintf(" (%d probe(s) not judged, see warnings)", o.unjudged)
		}
	default:
		j.status = report.NotJudged
		if len(j.warnings) > 0 {
			j.message = "not judged: " + j.warnings[0]
		} else {
			j.message = "not judged: no probe changed in the first delivery"
		}
	}
}

func pluralCopies(n int) string {
	if n == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", n)
}

// changedColumns compares two readings of a multi-column SQL probe (rows of
// "col=value, col=value" lines) and returns the columns whose values
// differ and those that held, when both readings have the same rows and
// columns; ok is false otherwise (rows added or removed, not SQL rows).
func changedColumns(before, after probe.Value) (changed, same []string, ok bool) {
	if before.IsNum || after.IsNum {
		return nil, nil, false
	}
	bl, al := strings.Split(before.Text, "\n"), strings.Split(after.Text, "\n")
	if len(bl) != len(al) {
		return nil, nil, false
	}
	seenChanged, seenSame := map[string]bool{}, map[string]bool{}
	for i := range bl {
		bp, ap := strings.Split(bl[i], ", "), strings.Split(al[i], ", ")
		if len(bp) != len(ap) {
			return nil, nil, false
		}
		for k := range bp {
			bc, _, bok := strings.Cut(bp[k], "=")
			ac, _, aok := strings.Cut(ap[k], "=")
			if !bok || !aok || bc != ac {
				return nil, nil, false
			}
			if bp[k] != ap[k] {
				seenChanged[bc] = true
			} else {
				seenSame[bc] = true
			}
		}
	}
	for _, p := range strings.Split(bl[0], ", ") {
		c, _, _ := strings.Cut(p, "=")
		switch {
		case seenChanged[c]:
			changed = appendOnce(changed, c)
		case seenSame[c]:
			same = appendOnce(same, c)
		}
	}
	return changed, same, len(changed) > 0
}

func appendOnce(s []string, x string) []string {
	if slices.Contains(s, x) {
		return s
	}
	return append(s, x)
}

// columnHint explains a multi-column probe change that touched only some
// columns: a column that changes on every call (updated_at) makes every
// copy look like new work, so the business columns are the thing to probe.
func columnHint(before, after probe.Value) string {
	changed, same, ok := changedColumns(before, after)
	if !ok || len(same) == 0 {
		return ""
	}
	return fmt.Sprintf("; only %s changed: if that changes on every call (a timestamp such as updated_at), probe the business columns instead (%s), e.g. SELECT %s FROM …",
		strings.Join(changed, ", "), strings.Join(same, ", "), strings.Join(same, ", "))
}

// fieldsHint names the fields in which two JSON readings differ, for a
// message that shows both: a reading of a few hundred characters is hard
// to compare by eye. It is "" unless both are JSON objects or arrays.
func fieldsHint(want, got probe.Value) string {
	paths, more, ok := probe.JSONDiff(want, got, 3)
	if !ok || len(paths) == 0 {
		return ""
	}
	s := " (JSON field " + strings.Join(paths, ", ")
	if len(paths)+more > 1 {
		s = " (JSON fields " + strings.Join(paths, ", ")
	}
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s + ")"
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

func orGeneric(p string) string {
	if p == "" {
		return verify.Generic
	}
	return p
}

// roundDur keeps durations readable, rounded as report.Duration prints
// them (the one duration format).
func roundDur(d time.Duration) time.Duration { return report.Round(d) }

func is2xx(s int) bool { return s >= 200 && s < 300 }

func is4xx(s int) bool { return s >= 400 && s < 500 }

// statusText words a's outcome (replay.Outcome): its status code, "lost" or
// "error: …".
func statusText(a store.Attempt) string {
	switch replay.Outcome(a) {
	case replay.OutcomeError:
		return "error: " + a.Err
	case replay.OutcomeLost:
		return "lost"
	}
	return fmt.Sprint(a.Status)
}

func countStatuses(m map[string]int, as ...store.Attempt) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	for _, a := range as {
		switch o := replay.Outcome(a); o {
		case replay.OutcomeError, replay.OutcomeLost:
			m[o]++
		default:
			m[fmt.Sprint(a.Status)]++
		}
	}
	return m
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
