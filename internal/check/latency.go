package check

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// latency judges the answer times of every copy of d answered so far
// against the provider's timeout: any answer over it is a violation (the
// provider gave up and retries), a 95th percentile over half of it a
// warning. It shows nothing when no copy was answered.
func (r *runner) latency(_ context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	as := r.answered[d.ID]
	if len(as) == 0 {
		return nil, nil
	}
	limit := r.providerTimeout(*d)
	ph := &report.PhaseResult{Phase: PhaseLatency, Attempts: len(as)}
	src, unknown := d.Provider+"'s timeout", ""
	if r.o.ProviderTimeout > 0 {
		src = r.name(InputProviderTimeout)
	} else if _, ok := verify.ResponseTimeout(d.Scheme); !ok {
		src = "the default timeout"
		unknown = "no timeout is known for provider " + orGeneric(d.Provider) + ": set " + r.name(InputProviderTimeout) + " to its own"
	}
	lats := make([]time.Duration, len(as))
	for i, a := range as {
		lats[i] = a.Latency
		if a.Latency > limit {
			ph.Violations = append(ph.Violations, report.Violation{Copy: a.Copy, Status: a.Status,
				Message: fmt.Sprintf("%s copy %d was answered after %s; %s is %s: the provider gives up and retries it%s", a.Phase, a.Copy, report.Duration(a.Latency), src, report.Duration(limit), bracketed(unknown))})
		}
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	p95 := lats[(len(lats)*95+99)/100-1]
	what := fmt.Sprintf("%d answers: first %s, p95 %s, max %s", len(lats), report.Duration(as[0].Latency), report.Duration(p95), report.Duration(lats[len(lats)-1]))
	if len(lats) == 1 {
		what = "the first answer took " + report.Duration(as[0].Latency)
	}
	switch {
	case len(ph.Violations) > 0:
		ph.Status = report.Fail
		ph.Message = fmt.Sprintf("%d of %d answers took longer than %s %s (%s): the provider gives up and retries them%s", len(ph.Violations), len(lats), src, report.Duration(limit), what, bracketed(unknown))
	case p95 > limit/2:
		ph.Status = report.Warn
		ph.Message = fmt.Sprintf("%s, over half of %s %s%s", what, src, report.Duration(limit), bracketed(unknown))
		ph.Warnings = []string{ph.Message}
	default:
		ph.Status = report.Pass
		if unknown != "" {
			unknown = "; " + unknown
		}
		ph.Message = fmt.Sprintf("%s (%s %s%s)", what, src, report.Duration(limit), unknown)
	}
	return ph, nil
}

// bracketed is " (s)", or "" for none.
func bracketed(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
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
		t := r.providerTimeout(d)
		if i > 0 && t != ls.ProviderTimeout {
			ls.ProviderTimeout = 0
			break
		}
		ls.ProviderTimeout = t
	}
	return ls
}
