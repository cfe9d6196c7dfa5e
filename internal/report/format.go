package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// normalized returns a copy of c ready to render: schema version and verdict
// filled in when the engine left them empty, every violation carrying its fix
// hint, and empty lists instead of nil ones so the JSON schema is stable.
// c itself is not modified.
func normalized(c *Check) *Check {
	n := *c
	if n.SchemaVersion == 0 {
		n.SchemaVersion = SchemaVersion
	}
	if n.Verdict == "" {
		n.Verdict = c.ComputeVerdict()
	}
	n.Probes = append([]string{}, c.Probes...)
	n.Deliveries = make([]DeliveryResult, len(c.Deliveries))
	for i, d := range c.Deliveries {
		d.Effect = append([]ProbeDelta{}, d.Effect...)
		phases := make([]PhaseResult, len(d.Phases))
		for j, p := range d.Phases {
			phases[j] = normalizedPhase(p)
		}
		d.Phases = phases
		n.Deliveries[i] = d
	}
	if c.Order != nil {
		o := normalizedPhase(*c.Order)
		n.Order = &o
	}
	return &n
}

func normalizedPhase(p PhaseResult) PhaseResult {
	if len(p.Violations) > 0 {
		vs := make([]Violation, len(p.Violations))
		for i, v := range p.Violations {
			v.Hint = HintFor(p.Phase, v)
			vs[i] = v
		}
		p.Violations = vs
	}
	return p
}

// safe makes text from outside (the sender, the handler, an import, the
// store) safe to print on one line: message.Printable, the one escape for
// terminal output. Every renderer here passes such text through it.
func safe(s string) string { return message.Printable(s) }

// truncate shortens s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// statuses prints an answer count map as "200×9, 500×1", status codes in
// numeric order and "error" last.
func statuses(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k, n := range m {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sortStatusKeys(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func sortStatusKeys(keys []string) {
	slices.SortFunc(keys, func(a, b string) int {
		na, ea := strconv.Atoi(a)
		nb, eb := strconv.Atoi(b)
		switch {
		case ea == nil && eb == nil:
			return na - nb
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
}

// SeveralEventIDs returns every event id of a delivery that carries more
// than one (a WhatsApp POST batching messages), nil for one or none.
func SeveralEventIDs(eventID string, identity map[string]string) []string {
	if ids := verify.EventIDs(eventID, identity); len(ids) > 1 {
		return ids
	}
	return nil
}

// EventIDLabel is a delivery's event id as one line or cell shows it, cut
// to width runes when width > 0: the id and, when the delivery carries n
// more, " (+n)", which is kept whole.
func EventIDLabel(eventID string, several []string, width int) string {
	id := safe(eventID)
	suffix := ""
	if len(several) > 1 {
		suffix = fmt.Sprintf(" (+%d)", len(several)-1)
	}
	if width > 0 {
		id = truncate(id, max(1, width-len(suffix)))
	}
	return id + suffix
}

// maxListedEventIDs is how many of a delivery's event ids a report line
// lists before it says how many more there are (Meta batches up to 1000).
const maxListedEventIDs = 10

// EventIDList lists several event ids on one line: "a, b, c", cut after
// maxListedEventIDs with "and N more".
func EventIDList(ids []string) string {
	shown := ids
	if len(shown) > maxListedEventIDs {
		shown = shown[:maxListedEventIDs]
	}
	parts := make([]string, len(shown))
	for i, id := range shown {
		parts[i] = safe(id)
	}
	s := strings.Join(parts, ", ")
	if n := len(ids) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// deliveryTitle names a delivery: "delivery 3 · stripe invoice.paid · evt_1".
func deliveryTitle(d *DeliveryResult) string {
	parts := []string{fmt.Sprintf("delivery %d", d.DeliveryID)}
	kind := strings.TrimSpace(d.Provider + " " + d.EventType)
	if kind != "" {
		parts = append(parts, kind)
	}
	if d.EventID != "" {
		parts = append(parts, EventIDLabel(d.EventID, d.EventIDs, 0))
	}
	return safe(strings.Join(parts, " · "))
}

// deltaText prints a probe's change: "0 → 5000 (+5000)" or "unchanged (3)".
func deltaText(p ProbeDelta) string {
	if !p.Changed {
		return fmt.Sprintf("unchanged (%s)", valueText(p.After))
	}
	s := fmt.Sprintf("%s → %s", valueText(p.Before), valueText(p.After))
	if p.Delta != nil {
		s += fmt.Sprintf(" (%+g)", *p.Delta)
	}
	return s
}

// valueText prints a probe value on one line, shortened when long, "" as "(empty)".
func valueText(v string) string {
	if v == "" {
		return "(empty)"
	}
	return truncate(safe(v), 120)
}

// violationWhere says which copy did it: "copy 2 (event evt_1)", leaving out
// what the message already says.
func violationWhere(v Violation) string {
	msg := strings.ToLower(v.Message)
	var s string
	if v.Copy > 0 && !strings.HasPrefix(msg, fmt.Sprintf("copy %d", v.Copy)) {
		s = fmt.Sprintf("copy %d", v.Copy)
	}
	if v.EventID != "" && !strings.Contains(v.Message, v.EventID) {
		if s != "" {
			return s + " (event " + safe(v.EventID) + ")"
		}
		return "event " + safe(v.EventID)
	}
	return s
}

// violationValues prints the probe values of v: "probe X: before 1, after 2, want 1".
func violationValues(v Violation) string {
	if v.Probe == "" && v.Before == "" && v.After == "" && v.Want == "" {
		return ""
	}
	var parts []string
	if v.Before != "" {
		parts = append(parts, "before "+valueText(v.Before))
	}
	if v.After != "" {
		parts = append(parts, "after "+valueText(v.After))
	}
	if v.Want != "" {
		parts = append(parts, "want "+valueText(v.Want))
	}
	s := strings.Join(parts, ", ")
	if v.Probe != "" {
		if s != "" {
			s = "probe " + safe(v.Probe) + ": " + s
		} else {
			s = "probe " + safe(v.Probe)
		}
	}
	if v.Detail != "" {
		s += " — " + truncate(safe(v.Detail), 200)
	}
	return s
}

// EmailSummary says what emails effects holds, grouped by subject and
// recipients in the order first sent: `"Your receipt" to
// alice@example.com ×3, "Welcome" to bob@example.com`; "" when none.
func EmailSummary(effects []Effect) string {
	type group struct {
		key string
		n   int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, e := range effects {
		if e.Kind != EffectEmail {
			continue
		}
		k := fmt.Sprintf("%q to %s", e.Subject, safe(strings.Join(e.To, ", ")))
		if len(e.To) == 0 {
			k = fmt.Sprintf("%q", e.Subject)
		}
		g := byKey[k]
		if g == nil {
			g = &group{key: k}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.n++
	}
	parts := make([]string, 0, len(groups))
	for i, g := range groups {
		if i == maxEffectsShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(groups)-i))
			break
		}
		if g.n > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", g.key, g.n))
		} else {
			parts = append(parts, g.key)
		}
	}
	return strings.Join(parts, ", ")
}
