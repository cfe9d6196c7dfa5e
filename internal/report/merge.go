package report

// Joining the reports of one check's shards (check --shard K/N in CI jobs
// side by side) into the report the whole check would have written. The
// JSON report is the input: it is the one format that holds everything
// the others are rendered from.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// MaxMergeInput bounds one report read by ReadJSON: a check report is a
// few kilobytes per delivery, and the reader holds it whole.
const MaxMergeInput = 64 << 20

// ShardRun is one part of a merged report: which shard it was and how it ended.
type ShardRun struct {
	Shard      string `json:"shard,omitempty"` // "2/4", empty for a report of no shard
	RunID      int64  `json:"run_id,omitempty"`
	Verdict    string `json:"verdict"`
	Deliveries int    `json:"deliveries"`
}

// ReadJSON reads a report JSON wrote. Anything else (JUnit XML, Markdown,
// another tool's JSON, a report of a newer schema) is refused with one line.
func ReadJSON(r io.Reader) (*Check, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxMergeInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxMergeInput {
		return nil, fmt.Errorf("larger than %d MiB, more than a check report holds", MaxMergeInput>>20)
	}
	trimmed := bytes.TrimSpace(data)
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		return nil, errors.New("not a JSON check report (merge reads the reports check writes with --report json=PATH)")
	}
	var head struct {
		SchemaVersion *int            `json:"schema_version"`
		Verdict       *string         `json:"verdict"`
		Deliveries    json.RawMessage `json:"deliveries"`
	}
	if err := json.Unmarshal(trimmed, &head); err != nil || head.SchemaVersion == nil || head.Verdict == nil || head.Deliveries == nil {
		return nil, errors.New("not a JSON check report (merge reads the reports check writes with --report json=PATH)")
	}
	if *head.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("report schema %d, and this hookreplay reads schema %d: merge with the hookreplay that wrote it", *head.SchemaVersion, SchemaVersion)
	}
	var c Check
	if err := json.Unmarshal(trimmed, &c); err != nil {
		return nil, fmt.Errorf("not a JSON check report: %v", err)
	}
	return &c, nil
}

// MergeInput is one report to merge and the name errors call it by (its file).
type MergeInput struct {
	Name  string
	Check *Check
}

// Options a shard's run records that differ between the shards of one check.
var perShardOptions = []string{"shard", "seed"}

// Merge joins the reports of one check's shards into one: the deliveries in
// shard order, the run's span, and the worst verdict (interrupted, error,
// fail, inconclusive, pass). It refuses, with one line naming the files,
// reports that are not the shards of one check: a different handler,
// probes, options or selection, a shard missing or given twice, a delivery
// judged twice. Reports of no shard merge when they agree on all of that
// and judged different deliveries.
func Merge(in []MergeInput) (*Check, error) {
	if len(in) == 0 {
		return nil, errors.New("no reports to merge")
	}
	if err := checkShards(in); err != nil {
		return nil, err
	}
	parts := slices.Clone(in)
	sort.SliceStable(parts, func(i, j int) bool { return shardK(parts[i].Check) < shardK(parts[j].Check) })
	ref := parts[0]
	for _, p := range parts[1:] {
		if p.Check.Target != ref.Check.Target {
			return nil, fmt.Errorf("%s checked %s and %s checked %s: merge the shards of one check", ref.Name, ref.Check.Target, p.Name, p.Check.Target)
		}
		if k, a, b, ok := optionsDiffer(ref.Check.Options, p.Check.Options); ok {
			return nil, fmt.Errorf("%s and %s ran with different %s (%s, %s): merge the shards of one check", ref.Name, p.Name, k, a, b)
		}
	}
	// Probes are compared between reports that judged something: a shard
	// no delivery fell to read none.
	var probed *MergeInput
	seen := map[string]string{}
	for i, p := range parts {
		if len(p.Check.Deliveries) == 0 && p.Check.Order == nil {
			continue
		}
		if probed == nil {
			probed = &parts[i]
		} else if !slices.Equal(probed.Check.Probes, p.Check.Probes) {
			return nil, fmt.Errorf("%s read probes %s and %s read %s: merge the shards of one check", probed.Name, strings.Join(probed.Check.Probes, ", "), p.Name, strings.Join(p.Check.Probes, ", "))
		}
		for _, d := range p.Check.Deliveries {
			key := strconv.FormatInt(d.DeliveryID, 10) + "\x00" + d.Provider + "\x00" + d.EventID
			if other, dup := seen[key]; dup {
				return nil, fmt.Errorf("%s and %s both judged delivery %d (%s): one report given twice, or runs that overlap", other, p.Name, d.DeliveryID, d.EventID)
			}
			seen[key] = p.Name
		}
	}

	m := &Check{SchemaVersion: SchemaVersion, Target: ref.Check.Target, Options: maps.Clone(ref.Check.Options),
		Probes: []string{}, Deliveries: []DeliveryResult{}}
	for _, k := range perShardOptions {
		delete(m.Options, k)
	}
	if probed != nil {
		m.Probes, m.ProbeDefs = probed.Check.Probes, probed.Check.ProbeDefs
	}
	var orders []*PhaseResult
	var orderShards []string
	var notes shardNotes
	for _, p := range parts {
		c := p.Check
		shard := shardOf(c)
		m.Shards = append(m.Shards, ShardRun{Shard: shard, RunID: c.RunID, Verdict: c.Verdict, Deliveries: len(c.Deliveries)})
		if m.StartedAt.IsZero() || c.StartedAt.Before(m.StartedAt) {
			m.StartedAt = c.StartedAt
		}
		if c.FinishedAt.After(m.FinishedAt) {
			m.FinishedAt = c.FinishedAt
		}
		m.Deliveries = append(m.Deliveries, c.Deliveries...)
		if c.Order != nil {
			orders = append(orders, c.Order)
			orderShards = append(orderShards, cmp.Or(shard, p.Name))
		}
		prefix := ""
		if shard != "" && len(parts) > 1 {
			prefix = "shard " + shard + ": "
		}
		for _, n := range c.Notes {
			notes.add(shard, prefix, n)
		}
		for _, w := range c.Warnings {
			m.Warnings = append(m.Warnings, prefix+w)
		}
		for k, v := range c.Extra {
			if m.Extra == nil {
				m.Extra = map[string]string{}
			}
			if _, ok := m.Extra[k]; !ok {
				m.Extra[k] = v
			}
		}
		if c.Interrupted != "" && m.Interrupted == "" {
			m.Interrupted = c.Interrupted
		}
		m.Latency = mergeLatency(m.Latency, c.Latency)
	}
	m.Notes = notes.list()
	if len(orders) > 0 {
		m.Order = mergeOrder(orders, orderShards)
	}
	if m.Latency != nil && len(parts) > 1 {
		m.Notes = append(m.Notes, "latency: the first answer is the first shard's, p50 the highest of the shards' own, max the highest of all")
	}
	if len(parts) > 1 {
		var runs []string
		for _, s := range m.Shards {
			r := "a report"
			if s.Shard != "" {
				r = "shard " + s.Shard
			}
			if s.RunID != 0 {
				r += fmt.Sprintf(" (run %d)", s.RunID)
			}
			runs = append(runs, r)
		}
		m.Notes = append([]string{fmt.Sprintf("merged from %d reports: %s", len(parts), strings.Join(runs, ", "))}, m.Notes...)
	}
	m.Verdict = worstVerdict(parts)
	if m.Verdict != VerdictInterrupted {
		m.Interrupted = ""
	}
	return m, nil
}

// checkShards refuses shards that cannot be one check's: mixed with
// reports of no shard, of different counts or selections, one given twice
// or one missing.
func checkShards(in []MergeInput) error {
	var ref *MergeInput
	got := map[int]string{}
	n := 0
	for i, p := range in {
		s := shardOf(p.Check)
		if s == "" {
			continue
		}
		k, total, ok := parseShardOption(s)
		if !ok {
			return fmt.Errorf("%s: its shard %q is not K/N", p.Name, s)
		}
		if ref == nil {
			ref, n = &in[i], total
		}
		if total != n {
			return fmt.Errorf("%s is shard %s and %s shard %s: merge the shards of one split", ref.Name, shardOf(ref.Check), p.Name, s)
		}
		if other, dup := got[k]; dup {
			return fmt.Errorf("%s and %s are both shard %s", other, p.Name, s)
		}
		got[k] = p.Name
		a, b := ref.Check.Options, p.Check.Options
		if fmt.Sprint(a["selection"]) != fmt.Sprint(b["selection"]) || fmt.Sprint(a["selected"]) != fmt.Sprint(b["selected"]) {
			return fmt.Errorf("%s selected %v deliveries and %s selected %v others (set %v, %v): the shards did not see the same deliveries (a capture arrived between the jobs? check an export, or one --since window)",
				ref.Name, a["selected"], p.Name, b["selected"], a["selection"], b["selection"])
		}
	}
	if ref == nil {
		return nil
	}
	if len(got) != len(in) {
		for _, p := range in {
			if shardOf(p.Check) == "" {
				return fmt.Errorf("%s is not a shard's report and %s is shard %s: merge the reports of one split", p.Name, ref.Name, shardOf(ref.Check))
			}
		}
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := got[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard %s missing: merge needs the reports of all %d shards", strings.Join(missing, ", "), n)
	}
	return nil
}

// shardOf is the shard a run recorded in its options ("2/4"), "" for none.
func shardOf(c *Check) string {
	s, _ := c.Options["shard"].(string)
	return s
}

// shardK orders reports by shard; reports of no shard keep their order.
func shardK(c *Check) int {
	k, _, _ := parseShardOption(shardOf(c))
	return k
}

func parseShardOption(s string) (k, n int, ok bool) {
	a, b, cut := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	return k, n, cut && err1 == nil && err2 == nil && k >= 1 && k <= n
}

// optionsDiffer finds an option (other than the per-shard ones) two runs
// disagree on, with both values as JSON.
func optionsDiffer(a, b map[string]any) (key, va, vb string, differ bool) {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if slices.Contains(perShardOptions, k) {
			continue
		}
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if !bytes.Equal(x, y) {
			return strings.ReplaceAll(k, "_", " "), string(x), string(y), true
		}
	}
	return "", "", "", false
}

// verdictRank orders verdicts from best to worst.
var verdictRank = []string{VerdictPass, VerdictInconclusive, VerdictFail, VerdictError, VerdictInterrupted}

func worstVerdict(parts []MergeInput) string {
	worst := 0
	for _, p := range parts {
		r := slices.Index(verdictRank, p.Check.Verdict)
		if r < 0 {
			r = slices.Index(verdictRank, VerdictError)
		}
		worst = max(worst, r)
	}
	return verdictRank[worst]
}

// mergeLatency joins two shards' latency summaries: the first answer of
// the earlier, the higher p50 and max (a shard's p50 cannot be recomputed
// across shards from the summaries; the higher one bounds it).
func mergeLatency(a, b *LatencySummary) *LatencySummary {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	out := *a
	out.P50 = max(a.P50, b.P50)
	out.Max = max(a.Max, b.Max)
	out.ProviderTimeout = max(a.ProviderTimeout, b.ProviderTimeout)
	return &out
}

// statusRank orders phase statuses from best to worst, for an order phase
// that ran in several shards.
var statusRank = []Status{Skip, Pass, Warn, NotJudged, Inconclusive, Fail, Error, Interrupted}

// mergeOrder joins the order phases of several shards (each ordered its
// own deliveries): the worst status, every violation, the sums; each
// shard's message, or the one they all gave.
func mergeOrder(os []*PhaseResult, names []string) *PhaseResult {
	if len(os) == 1 {
		return os[0]
	}
	out := PhaseResult{Phase: os[0].Phase, Statuses: map[string]int{}}
	var msgs []string
	worst := 0
	for i, o := range os {
		worst = max(worst, slices.Index(statusRank, o.Status))
		msgs = append(msgs, names[i]+": "+o.Message)
		out.Violations = append(out.Violations, o.Violations...)
		out.Warnings = append(out.Warnings, o.Warnings...)
		out.Effects = append(out.Effects, o.Effects...)
		out.Attempts += o.Attempts
		out.Duration += o.Duration
		for k, v := range o.Statuses {
			out.Statuses[k] += v
		}
	}
	out.Status = statusRank[max(worst, 0)]
	out.Message = strings.Join(msgs, "; ")
	if same := func() bool {
		for _, o := range os[1:] {
			if o.Status != os[0].Status || o.Message != os[0].Message {
				return false
			}
		}
		return true
	}(); same {
		// Every shard said the same (not run, and why): say it once.
		out.Message = os[0].Message
	}
	return &out
}

// shardNotes gathers the shards' notes, each text once: a note every shard
// makes alike (the selection's, a scheme's "no timestamp") is one line
// naming the shards, not one line per shard.
type shardNotes struct {
	order  []string            // texts in the order first seen
	shards map[string][]string // text → the shards that noted it
	prefix map[string]string   // text → its first shard's prefix
}

func (n *shardNotes) add(shard, prefix, text string) {
	if prefix != "" && strings.HasPrefix(text, prefix) {
		// An empty shard's own note names it already.
		shard, prefix = "", ""
	}
	if n.shards == nil {
		n.shards, n.prefix = map[string][]string{}, map[string]string{}
	}
	if _, ok := n.prefix[text]; !ok {
		n.order, n.prefix[text] = append(n.order, text), prefix
	}
	if shard != "" && !slices.Contains(n.shards[text], shard) {
		n.shards[text] = append(n.shards[text], shard)
	}
}

func (n *shardNotes) list() []string {
	out := make([]string, 0, len(n.order))
	for _, t := range n.order {
		switch sh := n.shards[t]; {
		case n.prefix[t] == "":
			out = append(out, t)
		case len(sh) > 1:
			out = append(out, "shards "+strings.Join(sh, ", ")+": "+t)
		default:
			out = append(out, n.prefix[t]+t)
		}
	}
	return out
}
