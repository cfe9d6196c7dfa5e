package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
)

// ReplayWarnings prints the warnings replay.Prepare found, one a line.
func ReplayWarnings(w io.Writer, p Painter, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintln(w, p.Paint(ToneWarn, "warning: ")+s)
	}
}

// ReplayPlan prints what a replay is about to do: which deliveries go where,
// how (order, seed, re-signing, lost answers), the edits and the retry
// timetable.
func ReplayPlan(w io.Writer, job *replay.Job, to string) {
	pl := job.Plan()
	ids := make([]string, len(pl.Deliveries))
	for i, d := range pl.Deliveries {
		ids[i] = fmt.Sprintf("%d", d.ID)
		if d.EventType != "" || d.EventID != "" {
			// A handshake has a type and no id: no space before ")".
			var what []string
			for _, s := range []string{d.Provider, d.EventType, d.EventID} {
				if s != "" {
					what = append(what, s)
				}
			}
			ids[i] += message.Printable(" (" + strings.Join(what, " ") + ")")
		}
	}
	fmt.Fprintf(w, "replaying delivery %s → %s\n", strings.Join(ids, ", "), safe(to))
	extra := ""
	if pl.Order == replay.OrderShuffle {
		extra = fmt.Sprintf(", seed %d", job.Seed)
	}
	if pl.Secret != "" {
		extra += ", re-signed"
	}
	if pl.Raw {
		extra += ", raw bytes"
	}
	if pl.LoseResponse > 0 {
		extra += fmt.Sprintf(", first %s lost", plural(pl.LoseResponse, "answer", "answers"))
	}
	fmt.Fprintf(w, "  %s%s\n", describeOrder(pl), extra)
	if e := job.EditDescription(); e != "" {
		fmt.Fprintf(w, "  edited: %s\n", e)
	}
	if s := job.Schedule(); len(s.Retries) > 0 {
		fmt.Fprintf(w, "  retries on the %s timetable (%d attempts up to %s real time, ×%g faster); source: %s\n",
			s.Name, s.Attempts(), StandsFor(s.Retries[len(s.Retries)-1]), pl.Speedup, s.Source)
	}
}

// describeOrder is the plan in a few words: "10 copies of 1 delivery, order
// seq" (with the concurrency when copies go out in parallel).
func describeOrder(pl replay.Plan) string {
	s := fmt.Sprintf("%s of %s, order %s", plural(pl.Copies, "copy", "copies"), plural(len(pl.Deliveries), "delivery", "deliveries"), pl.Order)
	if pl.Order != replay.OrderBurst && pl.Concurrency > 1 {
		s += fmt.Sprintf(", concurrency %d", pl.Concurrency)
	}
	return s
}

// AttemptLine is the live line for one attempt: copy, status, latency and
// the start of the answer (or the error, or that the answer was lost), with
// the retry it stands for. multi adds the delivery id.
func AttemptLine(p Painter, a store.Attempt, multi bool) string {
	var b strings.Builder
	if multi {
		fmt.Fprintf(&b, "  #%-4d", a.DeliveryID)
	} else {
		b.WriteString("  ")
	}
	fmt.Fprintf(&b, "copy %-3d ", a.Copy)
	label, tone := AttemptStatus(a)
	if label != "" {
		b.WriteString(p.Paint(tone, label))
	}
	switch replay.Outcome(a) {
	case "":
	case replay.OutcomeError:
		b.WriteString("  " + safe(a.Err))
	case replay.OutcomeLost:
		b.WriteString("  answer not read (connection closed after the request)")
	default:
		fmt.Fprintf(&b, "  %8s", Duration(a.Latency))
		if body := bodyLine(a.ResponseBody, 60); body != "" {
			b.WriteString("  " + body)
		}
	}
	if r, ok := a.Detail["retry"]; ok {
		fmt.Fprintf(&b, "  · retry %v stands for %s", r, StandsFor(a.StandsFor))
	}
	if v, ok := a.Detail["schedule_exhausted"]; ok {
		fmt.Fprintf(&b, "  · schedule exhausted: %v", v)
	}
	return b.String()
}

// ReplayResult prints a finished replay: a blank line, its summary, the run
// it was recorded as and, for a shuffled order, the seed that repeats it.
func ReplayResult(w io.Writer, p Painter, rec *replay.Recorded, job *replay.Job) {
	fmt.Fprintln(w)
	ReplaySummary(w, p, rec.Summary)
	fmt.Fprintf(w, "  recorded as run %d: hookreplay runs show %d\n", rec.Run.ID, rec.Run.ID)
	if job.Plan().Order == replay.OrderShuffle {
		fmt.Fprintf(w, "  repeat this order with --seed %d\n", job.Seed)
	}
}

// ReplaySummary prints a replay run's summary for humans: statuses, latency,
// burst spread, lost answers, non-2xx answers, answers that differ and
// errors.
func ReplaySummary(w io.Writer, p Painter, s replay.Summary) {
	fmt.Fprintf(w, "%s %s, %d reached the handler\n", p.Bold("summary"), plural(s.Attempts, "attempt", "attempts"), s.Connected)
	if classes := outcomeCounts(p, s.Classes); classes != "" {
		fmt.Fprintf(w, "  statuses      %s\n", classes)
	}
	if s.Answered > 0 {
		fmt.Fprintf(w, "  latency       p50 %s · p95 %s · max %s\n", Duration(s.LatencyP50), Duration(s.LatencyP95), Duration(s.LatencyMax))
	}
	for _, b := range s.Bursts {
		fmt.Fprintf(w, "  burst spread  %s between the first and last complete request (%d of %d copies of delivery %d)\n",
			Duration(b.Spread), b.Completed, b.Copies, b.DeliveryID)
	}
	if s.Lost > 0 {
		fmt.Fprintf(w, "  lost          %s deliberately not read\n", plural(s.Lost, "answer", "answers"))
	}
	warn := func(s string) string { return p.Paint(ToneWarn, s) }
	if s.NonSuccess > 0 {
		line := fmt.Sprintf("  ! %d of %d answered copies got a non-2xx status", s.NonSuccess, s.Answered)
		if s.DuplicatesRejected > 0 {
			line += fmt.Sprintf("; %d of them were duplicates (a real provider retries a non-2xx again, so answer duplicates with 2xx)", s.DuplicatesRejected)
		}
		fmt.Fprintln(w, warn(line))
	}
	for _, g := range groupDifferences(s.Differences) {
		fmt.Fprintln(w, warn("  ! "+g))
	}
	kinds := make([]string, 0, len(s.ErrorKinds))
	for k := range s.ErrorKinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "  %s %d× %s\n", p.Paint(ToneFail, "errors"), s.ErrorKinds[k], k)
	}
	if s.Interrupted {
		fmt.Fprintln(w, warn("  interrupted: no new copies were sent after the signal; copies in flight were completed and recorded"))
	}
}

// outcomeCounts prints outcome counts as "2xx 9 · 5xx 1 · error 2", status
// classes in their tone.
func outcomeCounts(p Painter, counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		label := k
		if strings.HasSuffix(k, "xx") {
			label = p.Status(int(k[0]-'0')*100, k)
		}
		parts = append(parts, fmt.Sprintf("%s %d", label, counts[k]))
	}
	return strings.Join(parts, " · ")
}

// groupDifferences renders differences compactly: one line per delivery,
// reference and answer.
func groupDifferences(ds []replay.Difference) []string {
	type key struct {
		id      int64
		against string
		ref     string
		got     string
	}
	var order []key
	copies := map[key][]int{}
	for _, d := range ds {
		ref := fmt.Sprintf("%d %s", d.RefStatus, d.RefBody)
		if d.Against == "first copy" {
			ref = fmt.Sprintf("copy %d answered %s", d.RefCopy, ref)
		} else {
			ref = "the capture got " + ref
		}
		k := key{d.DeliveryID, d.Against, ref, fmt.Sprintf("%d %s", d.Status, d.Body)}
		if _, ok := copies[k]; !ok {
			order = append(order, k)
		}
		copies[k] = append(copies[k], d.Copy)
	}
	var out []string
	for _, k := range order {
		out = append(out, fmt.Sprintf("delivery %d: %s, but %s answered %s", k.id, strings.TrimSpace(k.ref), copyList(copies[k]), strings.TrimSpace(k.got)))
	}
	return out
}

// copyList renders copy numbers as ranges: "copies 2-5, 8".
func copyList(cs []int) string {
	slices.Sort(cs)
	var parts []string
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1] == cs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cs[i], cs[j]))
		} else {
			parts = append(parts, fmt.Sprint(cs[i]))
		}
		i = j + 1
	}
	if len(cs) == 1 {
		return "copy " + parts[0]
	}
	return "copies " + strings.Join(parts, ", ")
}

// bodyLine is the start of an answer's body on one line: whitespace runs
// collapsed, control characters escaped, cut after max runes.
func bodyLine(body []byte, max int) string {
	s := message.Printable(strings.Join(strings.Fields(string(body)), " "))
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// ReplayDoc is the --json document of a finished replay.
type ReplayDoc struct {
	Run      replayRunDoc   `json:"run"`
	Warnings []string       `json:"warnings"`
	Attempts []AttemptJSON  `json:"attempts"`
	Summary  replay.Summary `json:"summary"`
}

type replayRunDoc struct {
	ID         int64          `json:"id"`
	Kind       string         `json:"kind"`
	Target     string         `json:"target"`
	Seed       int64          `json:"seed"`
	StartedAt  time.Time      `json:"started_at"`
	FinishedAt time.Time      `json:"finished_at"`
	Verdict    string         `json:"verdict"`
	Options    map[string]any `json:"options"`
}

// ReplayJSON writes the --json document of a finished replay: the run, the
// warnings, every attempt and the summary.
func ReplayJSON(w io.Writer, rec *replay.Recorded, warnings []string, attempts []*store.Attempt) error {
	r := rec.Run
	doc := ReplayDoc{
		Run: replayRunDoc{ID: r.ID, Kind: r.Kind, Target: r.Target, Seed: r.Seed,
			StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Verdict: r.Verdict, Options: r.Options},
		Warnings: append([]string{}, warnings...),
		Attempts: AttemptsJSON(attempts),
		Summary:  rec.Summary,
	}
	return writeJSON(w, doc, true)
}

// writeJSON writes v indented by two spaces; escapeHTML writes <, > and & as
// \u003c, \u003e and \u0026 (the run documents always did, the delivery
// documents never).
func writeJSON(w io.Writer, v any, escapeHTML bool) error {
	enc := NewJSONEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(escapeHTML)
	return enc.Encode(v)
}
