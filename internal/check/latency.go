package check

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// latency judges the first copy's answer time against the provider's
// timeout; it shows nothing when the first copy was not answered.
func (r *runner) latency(_ context.Context, d *Delivery, fr *firstResult) (*report.PhaseResult, error) {
	if !fr.answered {
		return nil, nil
	}
	a := fr.att
	limit := r.providerTimeout(d.Provider)
	ph := &report.PhaseResult{Phase: PhaseLatency, Attempts: 1}
	src := d.Provider + "'s timeout"
	if r.o.ProviderTimeout > 0 {
		src = r.name(InputProviderTimeout)
	} else if _, ok := verify.ResponseTimeout(d.Provider); !ok {
		src = "the default timeout (no known timeout for provider " + orGeneric(d.Provider) + "; set " + r.name(InputProviderTimeout) + ")"
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
	return ph, nil
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
