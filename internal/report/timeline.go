package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Timeline is a check or keycheck run's story in time, one section per
// delivery and phase (per check, for a keycheck): every copy sent, from its
// first byte to its answer, the kills and restarts, the probes' readings
// with each change attributed to the copies that can have made it, and the
// settle windows. It is built once from what the store recorded (attempts,
// readings) and the run's report (statuses, violations); the HTML report,
// the TUI and the Markdown report draw it and none recomputes it.
type Timeline struct {
	RunID    int64
	Sections []TimelineSection
}

// TimelineSection is one delivery's phase (or one keycheck check) on its
// own time axis, Start to End.
type TimelineSection struct {
	DeliveryID int64
	// Title names the delivery ("delivery 1 · stripe invoice.paid"); "" for
	// a keycheck check and the order phase.
	Title   string
	Phase   string
	Status  Status // "" when the report has no judgement of it (control)
	Message string
	Start   time.Time
	End     time.Time
	Copies  []TimelineCopy
	// Bursts are the moments a burst round's last bytes were all written
	// (the latest last byte of each round's copies).
	Bursts  []time.Time
	Marks   []TimelineMark
	Probes  []TimelineProbe
	Settles []TimelineSettle
	// Violations are what the report found wrong in this phase, each with
	// the copies it is attributed to.
	Violations []TimelineViolation
}

// Failed reports whether the section's phase failed.
func (s *TimelineSection) Failed() bool { return s.Status == Fail }

// Label is the section's heading: its title and phase.
func (s *TimelineSection) Label() string {
	if s.Title == "" {
		return s.Phase
	}
	return s.Title + " — " + s.Phase
}

// Copy outcomes in a timeline, besides the status classes "1xx" … "5xx".
const (
	OutcomeKilled  = "killed"  // the handler was killed while it had the copy
	OutcomeRefused = "refused" // the connection was refused (the handler was down)
	OutcomeLost    = replay.OutcomeLost
	OutcomeError   = replay.OutcomeError
)

// TimelineCopy is one request sent: from its first byte (Start) through its
// last byte (LastByte) to its answer (End), or to the moment it was lost,
// killed, refused or failed.
type TimelineCopy struct {
	AttemptID int64
	// DeliveryID is the delivery the copy was of (the order phase sends
	// several in one section).
	DeliveryID int64
	Copy       int
	EventID    string
	Start      time.Time
	LastByte   time.Time
	End        time.Time
	Outcome    string // "2xx" … "5xx", or an Outcome* constant
	Status     int
	// Request says what was sent ("POST /v1/payments", the event id, an edit).
	Request string
	// Note is the error or what was done to the copy (the edit).
	Note string
	// Body is the start of the answer's body, printable, at most
	// timelineBodyMax runes.
	Body string
	// Round groups the copies of one burst round (1, 2, …; 0: no burst).
	Round int
	// Violating: a violation of the phase is attributed to this copy.
	Violating bool
}

// timelineBodyMax bounds a copy's body excerpt: a big run's HTML report stays small.
const timelineBodyMax = 100

// TimelineMark is a moment drawn across a section: the handler killed, or
// back after its restart.
type TimelineMark struct {
	Kind string // "kill" or "restart"
	At   time.Time
	Copy int // the copy it concerns (the one killed)
}

// TimelineProbe is one probe's readings in a section, as a step line.
type TimelineProbe struct {
	Name    string
	Steps   []TimelineStep
	Changes []TimelineChange
	// Want is the value the report wanted after the phase ("" when none was said).
	Want string
	// wrong are the violations' changes of this probe: From → To where
	// Want was due.
	wrong []ProbeDelta
}

// TimelineStep is one reading of a probe.
type TimelineStep struct {
	At    time.Time
	Value string
	Num   *float64
	Point string
}

// TimelineChange is a probe's value changing between two readings,
// attributed to the copies sent between them.
type TimelineChange struct {
	At       time.Time
	From, To string
	Delta    *float64
	// Copies are the copies sent between the two readings: the ones that
	// can have made the change.
	Copies []int
	// Other names the phase of Copies when none of this section's copies
	// was in flight but another phase's were (the control event sent
	// between two readings of the burst phase).
	Other string
	// Extra: the change is more than the phase allows (a duplicate's
	// effect, a burst's effect past one event's), not the expected effect
	// of an event's first copy.
	Extra bool
}

// Label says what the change is and whose: "+5000 by copy 2".
func (c TimelineChange) Label() string {
	what := c.From + " → " + c.To
	if c.Delta != nil {
		what = signedNum(*c.Delta)
	}
	by := copiesLabel(c.Copies)
	if c.Other != "" {
		by = strings.Replace(by, "by ", "by "+c.Other+" ", 1)
	}
	return what + " " + by
}

// TimelineSettle is one settle window: the reading At waited from From for
// the probes to hold still; a probe last moved at Changed (zero: none did).
type TimelineSettle struct {
	From, Changed, At time.Time
	Point             string
}

// TimelineViolation is one violation of a section's phase and the copies
// it is attributed to (none: the phase as a whole).
type TimelineViolation struct {
	Copies  []int
	Message string
	Hint    string // the fix
	Why     string // a keycheck's finding: the likely bug class
}

// TimelineRecords is what the store recorded of a run, for NewTimeline.
type TimelineRecords struct {
	Run      *store.Run
	Attempts []*store.Attempt
	Readings []*store.ProbeReading
}

// GroupReadings titles a timeline section of readings that deliveries
// checked as a group shared (check's group testing): they are charged to
// no delivery.
const GroupReadings = "group readings (deliveries checked together)"

// NewTimeline builds check run c's timeline from the store's records of it.
func NewTimeline(c *Check, rec TimelineRecords) *Timeline {
	tl := newTimeline(rec)
	titles := map[int64]string{}
	for i := range c.Deliveries {
		titles[c.Deliveries[i].DeliveryID] = deliveryTitle(&c.Deliveries[i])
	}
	for i := range tl.Sections {
		s := &tl.Sections[i]
		s.Title = titles[s.DeliveryID]
		if s.DeliveryID == 0 && s.Phase != "order" {
			// Readings deliveries checked as a group shared: no one
			// delivery's, so no delivery's result either.
			s.Title = GroupReadings
		}
		if ph := c.phase(s.DeliveryID, s.Phase); ph != nil {
			s.Status, s.Message = ph.Status, ph.Message
			for _, v := range ph.Violations {
				v.Hint = HintFor(ph.Phase, v)
				s.addViolation(v)
			}
		}
		s.finish()
	}
	tl.finishChanges()
	return tl
}

// phase returns the result of phase for delivery id (0: the order phase).
func (c *Check) phase(id int64, phase string) *PhaseResult {
	if id == 0 && c.Order != nil && c.Order.Phase == phase {
		return c.Order
	}
	for i := range c.Deliveries {
		if c.Deliveries[i].DeliveryID != id {
			continue
		}
		for j := range c.Deliveries[i].Phases {
			if c.Deliveries[i].Phases[j].Phase == phase {
				return &c.Deliveries[i].Phases[j]
			}
		}
	}
	return nil
}

type sectionKey struct {
	delivery int64
	phase    string
}

// newTimeline groups the records into sections, in the order they began.
func newTimeline(rec TimelineRecords) *Timeline {
	tl := &Timeline{}
	if rec.Run != nil {
		tl.RunID = rec.Run.ID
	}
	index := map[sectionKey]int{}
	section := func(id int64, phase string) *TimelineSection {
		if phase == "order" {
			// The order phase spans deliveries: one section, as the report has one result.
			id = 0
		}
		k := sectionKey{id, phase}
		i, ok := index[k]
		if !ok {
			i = len(tl.Sections)
			index[k] = i
			tl.Sections = append(tl.Sections, TimelineSection{DeliveryID: id, Phase: safe(phase)})
		}
		return &tl.Sections[i]
	}
	for _, a := range rec.Attempts {
		s := section(a.DeliveryID, a.Phase)
		s.Copies = append(s.Copies, timelineCopy(a))
		if at, ok := detailTime(a, store.DetailKilledAt); ok {
			s.Marks = append(s.Marks, TimelineMark{Kind: "kill", At: at, Copy: a.Copy})
		}
		if at, ok := detailTime(a, store.DetailRestartedAt); ok {
			s.Marks = append(s.Marks, TimelineMark{Kind: "restart", At: at, Copy: a.Copy})
		}
	}
	for _, r := range rec.Readings {
		s := section(r.DeliveryID, r.Phase)
		s.addReading(r)
	}
	return tl
}

func detailTime(a *store.Attempt, key string) (time.Time, bool) {
	s, ok := a.Detail[key].(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

func timelineCopy(a *store.Attempt) TimelineCopy {
	c := TimelineCopy{AttemptID: a.ID, DeliveryID: a.DeliveryID, Copy: a.Copy, EventID: safe(a.EventID), Start: a.SentAt, LastByte: a.CompletedAt,
		Status: a.Status, Outcome: replay.Outcome(*a)}
	if c.LastByte.IsZero() {
		c.LastByte = c.Start
	}
	c.End = c.LastByte.Add(a.Latency)
	if _, killed := a.Detail[store.DetailKilledAt]; killed && a.Status == 0 {
		c.Outcome = OutcomeKilled
		if at, ok := detailTime(a, store.DetailKilledAt); ok && at.After(c.LastByte) {
			c.End = at
		}
	} else if c.Outcome == OutcomeError && strings.Contains(a.Err, "refused") {
		c.Outcome = OutcomeRefused
	}
	if c.Outcome == "" {
		c.Outcome = OutcomeError
	}
	var req []string
	if r, ok := a.Detail["request"].(string); ok && r != "" {
		req = append(req, r)
	}
	if a.EventID != "" {
		req = append(req, "event "+a.EventID)
	}
	c.Request = safe(strings.Join(req, " · "))
	var note []string
	if a.Err != "" {
		note = append(note, a.Err)
	}
	if a.Edit != "" {
		note = append(note, a.Edit)
	}
	c.Note = safe(strings.Join(note, " · "))
	if len(a.ResponseBody) > 0 {
		c.Body = bodyLine(a.ResponseBody, timelineBodyMax)
	}
	return c
}

func (s *TimelineSection) addReading(r *store.ProbeReading) {
	var p *TimelineProbe
	for i := range s.Probes {
		if s.Probes[i].Name == safe(r.Probe) {
			p = &s.Probes[i]
		}
	}
	if p == nil {
		s.Probes = append(s.Probes, TimelineProbe{Name: safe(r.Probe)})
		p = &s.Probes[len(s.Probes)-1]
	}
	p.Steps = append(p.Steps, TimelineStep{At: r.ReadAt, Value: truncate(safe(r.Value), 60), Num: r.Numeric, Point: safe(r.Point)})
	if r.SettleFrom.IsZero() {
		return
	}
	// Every probe of one reading shares its window: keep it once.
	for _, w := range s.Settles {
		if w.At.Equal(r.ReadAt) && w.From.Equal(r.SettleFrom) {
			return
		}
	}
	s.Settles = append(s.Settles, TimelineSettle{From: r.SettleFrom, Changed: r.ChangedAt, At: r.ReadAt, Point: safe(r.Point)})
}

func (s *TimelineSection) addViolation(v Violation) {
	tv := TimelineViolation{Message: safe(v.Message), Hint: safe(v.Hint)}
	for _, c := range s.Copies {
		if (v.Copy != 0 && c.Copy == v.Copy) || (v.Copy == 0 && v.EventID != "" && c.EventID == safe(v.EventID)) {
			tv.Copies = append(tv.Copies, c.Copy)
		}
	}
	s.Violations = append(s.Violations, tv)
	if v.Probe == "" || v.Want == "" {
		return
	}
	for i := range s.Probes {
		if s.Probes[i].Name != safe(v.Probe) {
			continue
		}
		if s.Probes[i].Want == "" {
			s.Probes[i].Want = safe(v.Want)
		}
		if v.After != v.Want {
			s.Probes[i].wrong = append(s.Probes[i].wrong, ProbeDelta{Before: safe(v.Before), After: safe(v.After)})
		}
	}
}

// finish orders the section, finds its span, burst rounds and the copies
// its violations name.
func (s *TimelineSection) finish() {
	sort.SliceStable(s.Copies, func(i, j int) bool { return s.Copies[i].Copy < s.Copies[j].Copy })
	for i := range s.Probes {
		sort.SliceStable(s.Probes[i].Steps, func(a, b int) bool { return s.Probes[i].Steps[a].At.Before(s.Probes[i].Steps[b].At) })
	}
	sort.SliceStable(s.Marks, func(i, j int) bool { return s.Marks[i].At.Before(s.Marks[j].At) })
	s.rounds()
	violating := map[int]bool{}
	for _, v := range s.Violations {
		for _, c := range v.Copies {
			violating[c] = true
		}
	}
	for i := range s.Copies {
		s.Copies[i].Violating = violating[s.Copies[i].Copy]
	}
	s.span()
}

// finishChanges puts the sections in the order they began and finds every
// section's probe changes, once all sections are finished (a change may be
// another section's copy's).
func (tl *Timeline) finishChanges() {
	sort.SliceStable(tl.Sections, func(i, j int) bool { return tl.Sections[i].Start.Before(tl.Sections[j].Start) })
	var all []copyRef
	for i := range tl.Sections {
		s := &tl.Sections[i]
		for _, c := range s.Copies {
			all = append(all, copyRef{section: s, phase: s.Phase, copy: c.Copy, event: c.EventID, start: c.Start})
		}
	}
	for i := range tl.Sections {
		for j := range tl.Sections[i].Probes {
			tl.Sections[i].changes(&tl.Sections[i].Probes[j], all)
		}
	}
}

// rounds numbers the burst rounds: in a burst phase, the copies that
// carried one event id were sent together.
func (s *TimelineSection) rounds() {
	if s.Phase != "burst" {
		return
	}
	round := map[string]int{}
	last := map[int]time.Time{}
	for i := range s.Copies {
		c := &s.Copies[i]
		n, ok := round[c.EventID]
		if !ok {
			n = len(round) + 1
			round[c.EventID] = n
		}
		c.Round = n
		if c.LastByte.After(last[n]) {
			last[n] = c.LastByte
		}
	}
	for n := 1; n <= len(round); n++ {
		s.Bursts = append(s.Bursts, last[n])
	}
}

// changes finds where p's value moved and which copies can have moved it:
// those sent after the reading before the change and before the reading
// that saw it (in this phase, or else in another of the same delivery: the
// control event sent between two of this phase's readings). A change is extra in a phase where
// no copy may have an effect (dups, tamper); when every copy that can have
// made it carried an event whose effect was already seen; or when the
// violation's want says the value should have stopped short of it.
func (s *TimelineSection) changes(p *TimelineProbe, all []copyRef) {
	expectNone := s.Phase == "dups" || s.Phase == "tamper"
	seen := map[string]bool{}
	p.Changes = nil
	for i := 1; i < len(p.Steps); i++ {
		prev, cur := p.Steps[i-1], p.Steps[i]
		if prev.Value == cur.Value {
			continue
		}
		ch := TimelineChange{At: cur.At, From: prev.Value, To: cur.Value}
		if prev.Num != nil && cur.Num != nil {
			d := *cur.Num - *prev.Num
			ch.Delta = &d
		}
		var mine, others []copyRef
		for _, c := range all {
			if c.start.Before(prev.At) || !c.start.Before(cur.At) {
				continue
			}
			switch {
			case c.section == s:
				mine = append(mine, c)
				ch.Copies = append(ch.Copies, c.copy)
			case c.section.DeliveryID == s.DeliveryID:
				// Only the same delivery's: deliveries checked side by
				// side have probes of their own.
				others = append(others, c)
			}
		}
		if len(mine) == 0 && len(others) > 0 {
			ch.Other = others[0].phase
			for _, c := range others {
				if c.phase == ch.Other {
					ch.Copies = append(ch.Copies, c.copy)
				}
			}
		}
		fresh := false
		for _, c := range mine {
			if !seen[c.event] {
				fresh = true
			}
			seen[c.event] = true
		}
		ch.Extra = len(mine) > 0 && (expectNone || !fresh || p.beyondWant(ch))
		p.Changes = append(p.Changes, ch)
	}
}

// beyondWant reports whether ch ends a violation whose value is not the
// want (a burst's 10000 → 110000 where 15000 was due).
func (p *TimelineProbe) beyondWant(ch TimelineChange) bool {
	for _, w := range p.wrong {
		if w.After == ch.To && (w.Before == "" || w.Before == ch.From) {
			return true
		}
	}
	return false
}

// copyRef is one copy of a run, for attributing changes across sections.
type copyRef struct {
	section *TimelineSection
	phase   string
	copy    int
	event   string
	start   time.Time
}

// span sets Start and End to cover everything in the section.
func (s *TimelineSection) span() {
	var ts []time.Time
	for _, c := range s.Copies {
		ts = append(ts, c.Start, c.End)
	}
	for _, m := range s.Marks {
		ts = append(ts, m.At)
	}
	for _, p := range s.Probes {
		for _, st := range p.Steps {
			ts = append(ts, st.At)
		}
	}
	for _, w := range s.Settles {
		ts = append(ts, w.From, w.At)
	}
	ts = slices.DeleteFunc(ts, time.Time.IsZero)
	if len(ts) == 0 {
		return
	}
	s.Start, s.End = slices.MinFunc(ts, time.Time.Compare), slices.MaxFunc(ts, time.Time.Compare)
}

// Who names the copies v is attributed to ("copies 1–20"), "" when none
// or when its message already starts by naming them.
func (v TimelineViolation) Who() string {
	if len(v.Copies) == 0 {
		return ""
	}
	who := strings.TrimPrefix(copiesLabel(v.Copies), "by ")
	if strings.HasPrefix(v.Message, who+" ") || strings.HasPrefix(v.Message, who+":") {
		return ""
	}
	return who
}

// copiesLabel names copies: "copy 2", "copies 1–20", "copies 2, 5",
// "no copy" (work that landed between copies, late).
func copiesLabel(cs []int) string {
	switch len(cs) {
	case 0:
		return "with no copy in flight"
	case 1:
		return "by copy " + strconv.Itoa(cs[0])
	}
	contiguous := true
	for i := 1; i < len(cs); i++ {
		if cs[i] != cs[i-1]+1 {
			contiguous = false
		}
	}
	if contiguous {
		return fmt.Sprintf("by copies %d–%d", cs[0], cs[len(cs)-1])
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = strconv.Itoa(c)
	}
	return "by copies " + strings.Join(parts, ", ")
}

// signedNum words a numeric change: "+5000", "-1", "+0.5".
func signedNum(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if f >= 0 {
		s = "+" + s
	}
	return s
}
