package replay

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Schedule is a provider's retry timetable: after a non-2xx, a lost response
// or a connection error, retry k is sent Retries[k-1] after the first attempt
// (real time; --speedup compresses it). Providers publish the policy, rarely
// the exact intervals: where they do not, the offsets below are a geometric
// backoff fitted to what they publish (first retry after 1 minute, the last at
// the published horizon) and Source says so.
type Schedule struct {
	Name    string
	Retries []time.Duration // offsets from the first attempt, increasing
	Final   string          // what the provider does once the last retry failed
	Source  string          // where the policy is documented
}

// Attempts is the total number of deliveries the schedule makes (first + retries).
func (s Schedule) Attempts() int { return len(s.Retries) + 1 }

// schedules is the single table of retry timetables.
var schedules = map[string]Schedule{
	"stripe": {
		Name: "stripe",
		// Live mode: "attempts to deliver ... for up to three days with an
		// exponential back off"; intervals are not published. 16 attempts,
		// geometric factor 1.71, last at 72 h.
		Retries: []time.Duration{
			1 * time.Minute,
			2*time.Minute + 42*time.Second,
			5*time.Minute + 37*time.Second,
			10*time.Minute + 36*time.Second,
			19*time.Minute + 6*time.Second,
			33*time.Minute + 37*time.Second,
			58*time.Minute + 24*time.Second,
			1*time.Hour + 40*time.Minute + 43*time.Second,
			2*time.Hour + 52*time.Minute + 58*time.Second,
			4*time.Hour + 56*time.Minute + 20*time.Second,
			8*time.Hour + 26*time.Minute + 59*time.Second,
			14*time.Hour + 26*time.Minute + 40*time.Second,
			24*time.Hour + 40*time.Minute + 49*time.Second,
			42*time.Hour + 9*time.Minute + 27*time.Second,
			72 * time.Hour,
		},
		Final:  "event marked failed; no more automatic retries",
		Source: "https://docs.stripe.com/webhooks#retries (live mode: exponential backoff for up to 3 days; intervals fitted)",
	},
	"github": {
		Name: "github",
		// GitHub documents no automatic redelivery for repository and
		// organisation webhooks (failed deliveries are redelivered by hand or
		// through the REST API within 3 days). This timetable models a sender
		// that retries 8 times within ~8 hours and then gives up, the policy
		// hookreplay's issue asks for; geometric factor 2.58, last at 8 h.
		Retries: []time.Duration{
			1 * time.Minute,
			3*time.Minute + 35*time.Second,
			10*time.Minute + 14*time.Second,
			27*time.Minute + 23*time.Second,
			1*time.Hour + 11*time.Minute + 38*time.Second,
			3*time.Hour + 5*time.Minute + 44*time.Second,
			8 * time.Hour,
		},
		Final:  "delivery marked failed (redeliver manually within 3 days)",
		Source: "https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries (no automatic redelivery documented; 8 attempts in ~8 h modelled)",
	},
	"shopify": {
		Name: "shopify",
		// "retries 19 times over the next 48 hours" and removes the
		// subscription after 19 consecutive failures; exponential backoff,
		// intervals not published. Geometric factor 1.50, last at 48 h.
		// (Apps on newer API versions see 8 retries over 4 hours.)
		Retries: []time.Duration{
			1 * time.Minute,
			2*time.Minute + 30*time.Second,
			4*time.Minute + 44*time.Second,
			8*time.Minute + 6*time.Second,
			13*time.Minute + 8*time.Second,
			20*time.Minute + 39*time.Second,
			31*time.Minute + 56*time.Second,
			48*time.Minute + 49*time.Second,
			1*time.Hour + 14*time.Minute + 6*time.Second,
			1*time.Hour + 51*time.Minute + 58*time.Second,
			2*time.Hour + 48*time.Minute + 40*time.Second,
			4*time.Hour + 13*time.Minute + 35*time.Second,
			6*time.Hour + 20*time.Minute + 44*time.Second,
			9*time.Hour + 31*time.Minute + 8*time.Second,
			14*time.Hour + 16*time.Minute + 15*time.Second,
			21*time.Hour + 23*time.Minute + 13*time.Second,
			32*time.Hour + 2*time.Minute + 34*time.Second,
			48 * time.Hour,
		},
		Final:  "webhook subscription removed after 19 consecutive failures",
		Source: "https://shopify.dev/docs/apps/build/webhooks/troubleshooting-webhooks (19 attempts over 48 h, then the subscription is removed; intervals fitted)",
	},
	"slack": {
		Name: "slack",
		// Events API: "up to 3 times ... nearly immediately, after 1 minute,
		// and after 5 minutes" (a response slower than 3 s counts as failed).
		Retries: []time.Duration{1 * time.Second, 1 * time.Minute, 5 * time.Minute},
		Final:   "event dropped (and the app's events may be disabled after repeated failures)",
		Source:  "https://api.slack.com/apis/events-api#retries (3 retries: nearly immediately, 1 min, 5 min)",
	},
	"twilio": {
		Name: "twilio",
		// Connection overrides: rc (retry count) defaults to 1; retries are
		// immediate. Use --schedule twilio:3 for up to 3 retries.
		Retries: []time.Duration{0},
		Final:   "request failed (fallback URL used when configured)",
		Source:  "https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides (#rc retry count, default 1)",
	},
	"none": {
		Name:   "none",
		Final:  "no retries",
		Source: "",
	},
}

// LookupSchedule returns the timetable called name ("" means none). Twilio
// accepts a retry count: "twilio:3".
func LookupSchedule(name string) (Schedule, error) {
	if name == "" {
		name = "none"
	}
	base, count, hasCount := strings.Cut(name, ":")
	s, ok := schedules[base]
	if !ok {
		return Schedule{}, fmt.Errorf("unknown schedule %q (want one of %s)", name, strings.Join(ScheduleNames(), ", "))
	}
	if hasCount {
		if base != "twilio" {
			return Schedule{}, fmt.Errorf("schedule %q takes no retry count (only twilio:N)", base)
		}
		var n int
		if _, err := fmt.Sscanf(count, "%d", &n); err != nil || n < 0 || n > 3 {
			return Schedule{}, fmt.Errorf("twilio retry count %q must be 0 to 3", count)
		}
		s.Retries = make([]time.Duration, n)
		s.Name = name
	}
	return s, nil
}

// ScheduleNames lists the known timetables.
func ScheduleNames() []string {
	var out []string
	for k := range schedules {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
