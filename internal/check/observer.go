package check

import (
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Observer follows a check run as it happens: the CLI's progress lines are
// one Observer (in cmd), the TUI another. The engine calls it from the
// goroutine that called Run, one call at a time and never concurrently, in
// the order things happen; every call returns before the run goes on, so an
// Observer that blocks stalls the check (and its readings' timing): hand
// slow work to another goroutine. An Observer cannot stop a run (cancel
// Run's context for that) and must not modify what it is given.
type Observer interface {
	// PhaseStarted is called before a phase sends anything.
	PhaseStarted(PhaseStart)
	// Attempt is called for every copy sent, once it is answered (or
	// lost, or failed) and recorded.
	Attempt(store.Attempt)
	// Reading is called for every settled reading of the probes.
	Reading(Reading)
	// Step is called when one step of a phase is done and judged: a copy
	// of first, dups or tamper, a burst round, a lost or crash trial, an
	// ordering, the control event.
	Step(Step)
	// PhaseDone is called with a phase's result, also for a phase that
	// was skipped (without PhaseStarted).
	PhaseDone(PhaseEnd)
	// Note is called for what the run learned along the way: a note or
	// warning added to the report, effects that landed late.
	Note(Note)
}

// PhaseStart says which phase starts, and for which delivery (0: a phase
// over every delivery, order).
type PhaseStart struct {
	Phase      string
	DeliveryID int64
}

// PhaseEnd is a phase's result, for one delivery (0: over every delivery).
type PhaseEnd struct {
	DeliveryID int64
	Result     *report.PhaseResult
}

// Reading is one settled reading of every probe. DeliveryID is 0 for a
// reading of the order phase taken between deliveries.
type Reading struct {
	DeliveryID int64
	Phase      string
	// Point says when in the phase it was taken ("before", "after copy 3").
	Point  string
	Probes []string
	Values []probe.Value
	At     time.Time
}

// Step is one step of a phase, done and, where the step is judged on its
// own, judged. Which fields are set depends on the phase:
//
//	first    N 1, Attempts[0], Effect
//	control  Attempts[0], Effect (the control event: a second fresh event)
//	dups     N (the copy), Attempts[0], Changed (a probe moved since the last copy)
//	burst    N (the round), Attempts (every copy), Spread, Status
//	lost     N (the trial), What, Attempts (lost copy, retry), Status
//	tamper   N (the copy), What, Attempts[0]
//	crash    N (the trial), What (what was done, answered and sent), Attempts, Status
//	order    What (the delivery ids in the order sent), Values (final readings)
type Step struct {
	Phase      string
	DeliveryID int64
	N          int
	What       string
	Attempts   []store.Attempt
	Effect     []report.ProbeDelta
	Changed    bool
	Spread     time.Duration
	Values     []string
	Status     report.Status
}

// NoteKind says what a Note is about.
type NoteKind int

// The kinds of Note.
const (
	// NoteAdded: Text was added to the report's notes.
	NoteAdded NoteKind = iota + 1
	// NoteWarning: Text was added to the report's run-level warnings.
	NoteWarning
	// NoteLateEffect: a probe changed After sending, later than Settle:
	// the effective settle grows to cover it.
	NoteLateEffect
	// NoteEstimate: the crash phase calibrated and expects to take After
	// (Text says so, with its trials and what a trial costs).
	NoteEstimate
	// NoteSchedule says how a run over several deliveries is scheduled
	// (Text), Jobs of them at once, Deliveries in all; sent before any is
	// checked.
	NoteSchedule
)

// Note is something the run learned along the way.
type Note struct {
	Kind       NoteKind
	Text       string
	DeliveryID int64
	Phase      string
	After      time.Duration
	Settle     time.Duration
	// Jobs and Deliveries: NoteSchedule's deliveries checked at once, and
	// in all.
	Jobs, Deliveries int
}

// DeliveryObserver is an Observer that also hears when every phase of a
// delivery is judged, in a run that checks several side by side: progress
// can then show each delivery's outcome as it comes, whatever the order.
type DeliveryObserver interface {
	DeliveryDone(report.DeliveryResult)
}

// NopObserver ignores everything: the Observer of a run whose Options have none.
type NopObserver struct{}

var _ Observer = NopObserver{}

// PhaseStarted does nothing.
func (NopObserver) PhaseStarted(PhaseStart) {}

// Attempt does nothing.
func (NopObserver) Attempt(store.Attempt) {}

// Reading does nothing.
func (NopObserver) Reading(Reading) {}

// Step does nothing.
func (NopObserver) Step(Step) {}

// PhaseDone does nothing.
func (NopObserver) PhaseDone(PhaseEnd) {}

// Note does nothing.
func (NopObserver) Note(Note) {}

func (r *runner) phaseStarted(d *Delivery, phase string) {
	r.obs.PhaseStarted(PhaseStart{Phase: phase, DeliveryID: deliveryID(d)})
}

func (r *runner) phaseDone(d *Delivery, res *report.PhaseResult) {
	r.obs.PhaseDone(PhaseEnd{DeliveryID: deliveryID(d), Result: res})
}

func (r *runner) step(s Step) { r.obs.Step(s) }

func deliveryID(d *Delivery) int64 {
	if d == nil {
		return 0
	}
	return d.ID
}

// name is how messages mention in: the caller's name for it (cmd: its
// flag), else plain words.
func (r *runner) name(in Input) string {
	if r.o.Name != nil {
		if s := r.o.Name(in); s != "" {
			return s
		}
	}
	return in.String()
}

// AttemptText words an attempt's outcome as reports do: its status code,
// "lost", or "error: …".
func AttemptText(a store.Attempt) string { return statusText(a) }

// EffectText describes probe changes in a few words, as reports do:
// "sql: … 0 → 5000 (+5000)", or "no probe changed".
func EffectText(ds []report.ProbeDelta) string { return effectText(ds) }

// StatusCounts counts attempts by outcome, as reports do: "200×19 409×1".
func StatusCounts(as ...store.Attempt) string { return statuses(countStatuses(nil, as...)) }

// RoundDuration keeps a duration readable, rounded as report.Duration
// prints it.
func RoundDuration(d time.Duration) time.Duration { return roundDur(d) }
