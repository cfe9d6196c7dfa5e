package replay

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// Schedule is a provider's retry timetable: after a non-2xx, a lost response
// or a connection error, retry k is sent Retries[k-1] after the first attempt
// (real time; --speedup compresses it). The timetables are provider facts:
// each lives with its provider's scheme in verify (Scheme.Retries), which
// says where it is documented and what was fitted.
type Schedule struct {
	Name    string
	Retries []time.Duration // offsets from the first attempt, increasing
	Final   string          // what the provider does once the last retry failed
	Source  string          // where the policy is documented
}

// Attempts is the total number of deliveries the schedule makes (first + retries).
func (s Schedule) Attempts() int { return len(s.Retries) + 1 }

// noSchedule is the timetable of a sender that never retries.
var noSchedule = Schedule{Name: "none", Final: "no retries"}

// providerSchedule returns the timetable of the provider called name, when
// it publishes one.
func providerSchedule(name string) (verify.Schedule, bool) {
	s, err := verify.SchemeFor(name)
	if err != nil || s.Name() != name {
		return verify.Schedule{}, false
	}
	r := s.Retries()
	return r, len(r.Retries) > 0
}

// LookupSchedule returns the timetable called name ("" means none). A
// provider that lets its users set the retry count accepts one: "twilio:3".
func LookupSchedule(name string) (Schedule, error) {
	if name == "" || name == noSchedule.Name {
		return noSchedule, nil
	}
	base, count, hasCount := strings.Cut(name, ":")
	ps, ok := providerSchedule(base)
	if !ok {
		return Schedule{}, fmt.Errorf("unknown schedule %q (want one of %s)", name, strings.Join(ScheduleNames(), ", "))
	}
	s := Schedule{Name: base, Retries: ps.Retries, Final: ps.Final, Source: ps.Source}
	if hasCount {
		if ps.MaxRetries == 0 {
			var only []string
			for _, n := range CountedSchedules() {
				only = append(only, n+":N")
			}
			return Schedule{}, fmt.Errorf("schedule %q takes no retry count (only %s)", base, strings.Join(only, ", "))
		}
		var n int
		if _, err := fmt.Sscanf(count, "%d", &n); err != nil || n < 0 || n > ps.MaxRetries {
			return Schedule{}, fmt.Errorf("%s retry count %q must be 0 to %d", base, count, ps.MaxRetries)
		}
		s.Retries = make([]time.Duration, n)
		s.Name = name
	}
	return s, nil
}

// ScheduleNames lists the known timetables, sorted: every provider that
// publishes one, and none.
func ScheduleNames() []string {
	out := []string{noSchedule.Name}
	for _, p := range verify.Names() {
		if _, ok := providerSchedule(p); ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// CountedSchedules lists the timetables that accept a retry count (NAME:N).
func CountedSchedules() []string {
	var out []string
	for _, p := range verify.Names() {
		if s, ok := providerSchedule(p); ok && s.MaxRetries > 0 {
			out = append(out, p)
		}
	}
	return out
}
