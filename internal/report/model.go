// Package report owns hookreplay's rendering: check reports (text, JSON,
// JUnit XML, Markdown), the delivery list and detail and capture's live line,
// replay plans, attempt lines and summaries, run views and the progress bar.
// Everything is painted with one palette (palette.go, which the TUI reads
// too) and prints durations one way (Duration). It reads the engines'
// results and the store's records; it never sends, and the engines never
// print (TestEnginesNeverPrint).
package report

import "time"

// SchemaVersion is the version of the JSON report schema. Bump it when a field
// changes meaning or disappears; adding fields does not bump it.
const SchemaVersion = 1

// Status of a judged phase.
type Status string

// Phase statuses.
const (
	Pass         Status = "pass"
	Fail         Status = "fail"
	Warn         Status = "warn"         // passed with a warning (e.g. latency over half the timeout)
	Skip         Status = "skip"         // not run: inputs do not allow it (reason in Message)
	Inconclusive Status = "inconclusive" // probes saw no effect of the first delivery
	NotJudged    Status = "notjudged"    // ran, but a probe's value could not be judged
	Error        Status = "error"        // the run stopped in this phase (a probe failed, the time ran out)
	Interrupted  Status = "interrupted"  // the run was stopped in this phase by a signal (Ctrl-C, SIGTERM, SIGHUP)
)

// Verdicts of a whole run, with their exit codes: pass 0, fail 1, inconclusive 3.
const (
	VerdictPass         = "pass"
	VerdictFail         = "fail"
	VerdictInconclusive = "inconclusive"
	// VerdictError is a run that stopped before it finished (exit 2): its
	// report holds what was judged until then.
	VerdictError = "error"
	// VerdictInterrupted is a run stopped by a signal (exit 128 + its
	// number, Check.Interrupted names it): its report holds what was judged
	// until then.
	VerdictInterrupted = "interrupted"
)

// Check is one `hookreplay check` run as the reports see it.
type Check struct {
	SchemaVersion int       `json:"schema_version"`
	RunID         int64     `json:"run_id"`
	Target        string    `json:"target"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	Verdict       string    `json:"verdict"` // pass | fail | inconclusive | error | interrupted
	// Interrupted names the signal that stopped the run (SIGINT, SIGTERM,
	// SIGHUP) when Verdict is interrupted.
	Interrupted string         `json:"interrupted,omitempty"`
	Options     map[string]any `json:"options,omitempty"`
	Probes      []string       `json:"probes"` // probe names, e.g. "sql: SELECT balance FROM wallets" or a name given, "balance"
	// ProbeDefs, when set, says what each probe is, as given: "balance =
	// sql: SELECT …" for a named probe. The header shows it once; every
	// other line uses the name.
	ProbeDefs  []string         `json:"probe_definitions,omitempty"`
	Deliveries []DeliveryResult `json:"deliveries"`
	Order      *PhaseResult     `json:"order,omitempty"` // the order phase spans deliveries
	Notes      []string         `json:"notes,omitempty"`
	// Warnings are run-level findings that left phases unjudged and that
	// the user must read next to the verdict (e.g. a handler that may drop
	// distinct events).
	Warnings []string          `json:"warnings,omitempty"`
	Latency  *LatencySummary   `json:"latency,omitempty"`
	Extra    map[string]string `json:"extra,omitempty"`
	// Shards, in a report 'hookreplay report merge' wrote, are the runs it
	// joined (merge.go).
	Shards []ShardRun `json:"shards,omitempty"`
	// Timeline, when set, is the run's timeline (NewTimeline), drawn by
	// the HTML and Markdown reports; it is built from the store's
	// records, not stored in the report.
	Timeline *Timeline `json:"-"`
}

// DeliveryResult is every phase run for one delivery.
type DeliveryResult struct {
	DeliveryID int64  `json:"delivery_id"`
	Provider   string `json:"provider"`
	EventID    string `json:"event_id"`
	// EventIDs lists every event id when the delivery carries several
	// (a WhatsApp POST batching messages); EventID is the first.
	EventIDs  []string      `json:"event_ids,omitempty"`
	EventType string        `json:"event_type"`
	Effect    []ProbeDelta  `json:"effect"` // E: what the first delivery changed
	Phases    []PhaseResult `json:"phases"`
}

// PhaseResult is the judgement of one phase for one delivery.
type PhaseResult struct {
	Phase      string      `json:"phase"` // first|dups|burst|lost|order|tamper|latency|crash
	Status     Status      `json:"status"`
	Message    string      `json:"message"` // one line: what was done and found
	Violations []Violation `json:"violations,omitempty"`
	Warnings   []string    `json:"warnings,omitempty"`
	Attempts   int         `json:"attempts"`
	// Statuses counts answers by status code ("200": 9, "409": 1, "error": 0).
	Statuses map[string]int `json:"statuses,omitempty"`
	// BurstSpread is the spread of request completion times in a burst.
	BurstSpread time.Duration `json:"burst_spread_ns,omitempty"`
	Effects     []Effect      `json:"effects,omitempty"` // sink calls and emails seen during the phase
	Duration    time.Duration `json:"duration_ns"`
	// Timing says where the phase's time went (nil in reports of runs
	// before it was recorded).
	Timing *PhaseTiming `json:"timing,omitempty"`
}

// PhaseTiming is where a phase's time went: sending copies and waiting
// for their answers, waiting for the probes to settle (the polls
// included), and reading the probes (every reading, settling's polls and
// the peeks after single copies; Reads of them).
type PhaseTiming struct {
	Sending    time.Duration `json:"sending_ns"`
	Settling   time.Duration `json:"settling_ns"`
	ProbeReads time.Duration `json:"probe_reads_ns"`
	Reads      int           `json:"reads"`
}

// Violation is one thing the handler did wrong, precisely located.
type Violation struct {
	Copy    int    `json:"copy,omitempty"`     // which copy did it (1 = first), 0 when not one copy
	EventID string `json:"event_id,omitempty"` // identity the copy carried
	Probe   string `json:"probe,omitempty"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
	Want    string `json:"want,omitempty"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Detail says what the probe's change was made of, e.g. the emails
	// the phase sent: `dups sent "Your receipt" to alice@example.com ×3`.
	Detail string `json:"detail,omitempty"`
}

// ProbeDelta is a probe's value before and after, with the numeric delta when both are numbers.
type ProbeDelta struct {
	Probe   string   `json:"probe"`
	Before  string   `json:"before"`
	After   string   `json:"after"`
	Delta   *float64 `json:"delta,omitempty"`
	Changed bool     `json:"changed"`
}

// Effect is one call the built-in sink received, or (Kind EffectEmail) one
// message the SMTP sink accepted.
type Effect struct {
	Kind   string    `json:"kind,omitempty"` // "" a sink call, "email"
	At     time.Time `json:"at"`
	Method string    `json:"method,omitempty"`
	Path   string    `json:"path,omitempty"`
	Body   string    `json:"body,omitempty"`
	// From, To and Subject describe an email.
	From    string   `json:"from,omitempty"`
	To      []string `json:"to,omitempty"`
	Subject string   `json:"subject,omitempty"`
}

// EffectEmail is the Kind of an Effect that is an email.
const EffectEmail = "email"

// LatencySummary summarises all answers' latency against the provider's timeout.
type LatencySummary struct {
	First           time.Duration `json:"first_ns"`
	P50             time.Duration `json:"p50_ns"`
	Max             time.Duration `json:"max_ns"`
	ProviderTimeout time.Duration `json:"provider_timeout_ns"`
}
