package replay

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// Summary is what a replay run found, stored as the run's summary JSON.
type Summary struct {
	Attempts   int            `json:"attempts"`
	Connected  int            `json:"connected"` // attempts that reached the handler
	Answered   int            `json:"answered"`  // attempts with an HTTP status
	Lost       int            `json:"lost"`      // answers deliberately not read
	Errors     int            `json:"errors"`    // connect/write/read errors
	Classes    map[string]int `json:"classes"`   // "2xx", "4xx", "5xx", ... , "lost", "error"
	ErrorKinds map[string]int `json:"error_kinds,omitempty"`
	LatencyP50 time.Duration  `json:"latency_p50_ns"`
	LatencyP95 time.Duration  `json:"latency_p95_ns"`
	LatencyMax time.Duration  `json:"latency_max_ns"`
	Bursts     []BurstStat    `json:"bursts,omitempty"`
	// NonSuccess counts answered copies with a non-2xx status.
	NonSuccess int `json:"non_2xx"`
	// DuplicatesRejected counts answered copies after a delivery's first copy
	// (copy > 1) that got a non-2xx: a real provider would retry them again.
	DuplicatesRejected int          `json:"duplicates_rejected"`
	Differences        []Difference `json:"differences,omitempty"`
	Seed               int64        `json:"seed,omitempty"`
	Interrupted        bool         `json:"interrupted,omitempty"`
}

// Difference is a copy that answered differently from a reference answer:
// the delivery's first answered copy, or the answer captured originally.
type Difference struct {
	DeliveryID int64  `json:"delivery_id"`
	Copy       int    `json:"copy"`
	Against    string `json:"against"` // "first copy" or "capture"
	RefCopy    int    `json:"ref_copy,omitempty"`
	RefStatus  int    `json:"ref_status"`
	RefBody    string `json:"ref_body"`
	Status     int    `json:"status"`
	Body       string `json:"body"`
}

// Summarize computes the summary of attempts for deliveries (used to
// compare with the captured answers).
func Summarize(res *Result, deliveries []*store.Delivery) Summary {
	s := Summary{Classes: map[string]int{}, Bursts: res.Bursts, Seed: res.Seed, Interrupted: res.Interrupted}
	var lats []time.Duration
	byDelivery := map[int64][]store.Attempt{}
	for _, a := range res.Attempts {
		s.Attempts++
		if Connected(a) {
			s.Connected++
		}
		switch o := Outcome(a); o {
		case "":
		case OutcomeError:
			s.Errors++
			s.Classes[o]++
			if s.ErrorKinds == nil {
				s.ErrorKinds = map[string]int{}
			}
			s.ErrorKinds[a.Err]++
		case OutcomeLost:
			s.Lost++
			s.Classes[o]++
		default:
			s.Answered++
			s.Classes[o]++
			lats = append(lats, a.Latency)
			if o != "2xx" {
				s.NonSuccess++
			}
		}
		byDelivery[a.DeliveryID] = append(byDelivery[a.DeliveryID], a)
	}
	slices.Sort(lats)
	if len(lats) > 0 {
		s.LatencyP50 = percentile(lats, 0.50)
		s.LatencyP95 = percentile(lats, 0.95)
		s.LatencyMax = lats[len(lats)-1]
	}
	compareAnswers(&s, byDelivery, deliveries)
	return s
}

// compareAnswers counts, per delivery, the copies after the first that got a
// non-2xx (DuplicatesRejected) and records the answers that differ from the
// delivery's first answered copy or from the answer captured from the
// handler (Differences).
func compareAnswers(s *Summary, byDelivery map[int64][]store.Attempt, deliveries []*store.Delivery) {
	captured := map[int64]*store.Delivery{}
	for _, d := range deliveries {
		captured[d.ID] = d
	}
	ids := make([]int64, 0, len(byDelivery))
	for id := range byDelivery {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		as := byDelivery[id]
		sort.Slice(as, func(i, j int) bool { return as[i].Copy < as[j].Copy })
		var first *store.Attempt
		for i := range as {
			if as[i].Status != 0 {
				first = &as[i]
				break
			}
		}
		for _, a := range as {
			if a.Status == 0 {
				continue
			}
			if a.Copy > 1 && (a.Status < 200 || a.Status >= 300) {
				s.DuplicatesRejected++
			}
			if first != nil && a.Copy != first.Copy {
				if !sameAnswer(a.Status, a.ResponseBody, first.Status, first.ResponseBody) {
					s.Differences = append(s.Differences, Difference{DeliveryID: id, Copy: a.Copy, Against: "first copy",
						RefCopy: first.Copy, RefStatus: first.Status, RefBody: clip(first.ResponseBody),
						Status: a.Status, Body: clip(a.ResponseBody)})
				}
			}
			if d := captured[id]; d != nil && capturedFromHandler(d) &&
				!sameAnswer(a.Status, a.ResponseBody, d.ResponseStatus, d.ResponseBody) {
				s.Differences = append(s.Differences, Difference{DeliveryID: id, Copy: a.Copy, Against: "capture",
					RefStatus: d.ResponseStatus, RefBody: clip(d.ResponseBody), Status: a.Status, Body: clip(a.ResponseBody)})
			}
		}
	}
}

// capturedFromHandler reports whether d's stored answer is the handler's
// (capture ran with --forward and reached it). Without --forward capture
// answers by itself (status only, no body, Content-Type its one header), and
// a failed forward has ForwardError: neither says anything about the handler.
func capturedFromHandler(d *store.Delivery) bool {
	if d.ResponseStatus == 0 || d.ForwardError != "" {
		return false
	}
	if d.ResponseBody != nil {
		return true
	}
	own := len(d.ResponseHeaders) == 1 && strings.EqualFold(d.ResponseHeaders[0].Name, "Content-Type")
	return !own && len(d.ResponseHeaders) > 0
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// sameAnswer compares two answers: statuses equal and bodies equal (as JSON
// values when both are JSON, so key order and spacing do not count).
func sameAnswer(s1 int, b1 []byte, s2 int, b2 []byte) bool {
	if s1 != s2 {
		return false
	}
	if bytes.Equal(b1, b2) {
		return true
	}
	var v1, v2 any
	if json.Unmarshal(b1, &v1) != nil || json.Unmarshal(b2, &v2) != nil {
		return bytes.Equal(bytes.TrimSpace(b1), bytes.TrimSpace(b2))
	}
	j1, _ := json.Marshal(v1)
	j2, _ := json.Marshal(v2)
	return bytes.Equal(j1, j2)
}

func clip(b []byte) string {
	const max = 200
	b = bytes.TrimSpace(b)
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
