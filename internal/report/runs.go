package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// RunJSON is a run as `runs --json` and `runs show --json` print it.
type RunJSON struct {
	ID         int64           `json:"id"`
	Kind       string          `json:"kind"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
	Target     string          `json:"target"`
	Seed       int64           `json:"seed"`
	Options    map[string]any  `json:"options"`
	Verdict    string          `json:"verdict"`
	Attempts   int             `json:"attempts"`
	Summary    json.RawMessage `json:"summary"`
}

// NewRunJSON is r's JSON view; attempts is how many attempts it recorded.
func NewRunJSON(r *store.Run, attempts int) RunJSON {
	j := RunJSON{ID: r.ID, Kind: r.Kind, StartedAt: r.StartedAt, Target: r.Target, Seed: r.Seed,
		Options: r.Options, Verdict: r.Verdict, Attempts: attempts, Summary: r.Summary}
	if !r.FinishedAt.IsZero() {
		t := r.FinishedAt
		j.FinishedAt = &t
	}
	if len(j.Summary) == 0 || !json.Valid(j.Summary) {
		j.Summary = json.RawMessage("{}")
	}
	if j.Options == nil {
		j.Options = map[string]any{}
	}
	return j
}

// AttemptJSON is an attempt as --json prints it: the stored fields plus the
// response body as text when it is UTF-8 (response_body stays base64).
type AttemptJSON struct {
	store.Attempt
	ResponseText *string `json:"response_text,omitempty"`
}

// AttemptsJSON is the JSON view of as (an empty list when none).
func AttemptsJSON(as []*store.Attempt) []AttemptJSON {
	out := make([]AttemptJSON, 0, len(as))
	for _, a := range as {
		j := AttemptJSON{Attempt: *a}
		if len(a.ResponseBody) > 0 && utf8.Valid(a.ResponseBody) {
			s := string(a.ResponseBody)
			j.ResponseText = &s
		}
		out = append(out, j)
	}
	return out
}

// RunsJSON writes runs as a JSON array; counts[i] is how many attempts
// runs[i] recorded.
func RunsJSON(w io.Writer, runs []*store.Run, counts []int) error {
	out := []RunJSON{}
	for i, r := range runs {
		out = append(out, NewRunJSON(r, counts[i]))
	}
	return writeJSON(w, out, true)
}

// RunDoc is the JSON document of one run and its attempts.
type RunDoc struct {
	Run      RunJSON       `json:"run"`
	Attempts []AttemptJSON `json:"attempts"`
}

// RunJSONDoc writes one run and its attempts as JSON ({"run":…,"attempts":[…]}).
func RunJSONDoc(w io.Writer, r *store.Run, as []*store.Attempt) error {
	return writeJSON(w, RunDoc{NewRunJSON(r, len(as)), AttemptsJSON(as)}, true)
}

// Runs writes the runs table, newest first as given; counts[i] is how many
// attempts runs[i] recorded. kind ("replay", "check" or "") words the line
// shown when there are none.
func Runs(w io.Writer, p Painter, runs []*store.Run, counts []int, kind string) error {
	if len(runs) == 0 {
		what := "runs"
		if kind != "" {
			what = kind + " runs"
		}
		_, err := fmt.Fprintf(w, "no %s yet (start one with 'hookreplay replay' or 'hookreplay check')\n", what)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tKIND\tSTARTED\tTOOK\tATTEMPTS\tVERDICT\tTARGET")
	for i, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, safe(r.Kind), r.StartedAt.Local().Format("2006-01-02 15:04:05"),
			runTook(r), counts[i], runVerdict(p, r), safe(r.Target))
	}
	return tw.Flush()
}

func runTook(r *store.Run) string {
	if r.FinishedAt.IsZero() {
		return "unfinished"
	}
	return Duration(r.FinishedAt.Sub(r.StartedAt))
}

func runVerdict(p Painter, r *store.Run) string {
	v := r.Verdict
	if v == "" {
		v = "-"
	}
	if t := VerdictTone(v); t != "" {
		return p.Paint(t, v)
	}
	return v
}

// Run writes one run: its head (kind, target, start, duration, verdict, seed,
// options), a table of its attempts and, for a replay, its summary.
func Run(w io.Writer, p Painter, r *store.Run, as []*store.Attempt) error {
	writeRunHead(w, p, r)
	if len(as) == 0 {
		_, err := fmt.Fprintln(w, "  no attempts recorded")
		return err
	}
	fmt.Fprintln(w)
	if err := writeRunAttempts(w, p, r, as); err != nil {
		return err
	}
	if r.Kind == "replay" && len(r.Summary) > 2 {
		var s replay.Summary
		if json.Unmarshal(r.Summary, &s) == nil && s.Attempts > 0 {
			fmt.Fprintln(w)
			ReplaySummary(w, p, s)
		}
	}
	return nil
}

func writeRunHead(w io.Writer, p Painter, r *store.Run) {
	fmt.Fprintf(w, "%s %d  %s → %s\n", p.Bold("run"), r.ID, safe(r.Kind), safe(r.Target))
	fmt.Fprintf(w, "  started   %s", r.StartedAt.Local().Format("2006-01-02 15:04:05.000"))
	if !r.FinishedAt.IsZero() {
		fmt.Fprintf(w, ", took %s", runTook(r))
	} else {
		fmt.Fprint(w, ", never finished (interrupted or still running)")
	}
	fmt.Fprintf(w, "\n  verdict   %s\n", runVerdict(p, r))
	if r.Seed != 0 {
		fmt.Fprintf(w, "  seed      %d\n", r.Seed)
	}
	if len(r.Options) > 0 {
		keys := make([]string, 0, len(r.Options))
		for k := range r.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			v, _ := json.Marshal(r.Options[k])
			parts = append(parts, safe(k+"="+string(v)))
		}
		fmt.Fprintf(w, "  options   %s\n", strings.Join(parts, " "))
	}
}

func writeRunAttempts(w io.Writer, p Painter, r *store.Run, as []*store.Attempt) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTEMPT\tPHASE\tDELIVERY\tCOPY\tCONN\tSENT\tSTATUS\tLATENCY\tNOTE")
	for _, a := range as {
		sent := "-"
		if !a.SentAt.IsZero() {
			sent = "+" + Duration(a.SentAt.Sub(r.StartedAt))
		}
		status := "-"
		if label, tone := AttemptStatus(*a); label != "" {
			status = p.Paint(tone, label)
		}
		conn := "-"
		if a.ConnID != 0 {
			conn = fmt.Sprint(a.ConnID)
		}
		lat := "-"
		if a.Latency > 0 {
			lat = Duration(a.Latency)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", a.ID, safe(a.Phase), a.DeliveryID, a.Copy, conn, sent, status, lat, safe(attemptNote(a)))
	}
	return tw.Flush()
}

// attemptNote is the NOTE column: the error, the retry it stands for, the
// edit and the start of the answer.
func attemptNote(a *store.Attempt) string {
	var note []string
	if a.Err != "" {
		note = append(note, a.Err)
	}
	if a.StandsFor > 0 || a.Detail["retry"] != nil {
		note = append(note, "stands for "+StandsFor(a.StandsFor))
	}
	if a.Edit != "" {
		note = append(note, a.Edit)
	}
	if len(a.ResponseBody) > 0 {
		note = append(note, bodyLine(a.ResponseBody, 50))
	}
	return strings.Join(note, " · ")
}
