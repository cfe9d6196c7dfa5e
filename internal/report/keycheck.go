package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Info is a keycheck status: the check observed and reports something the
// profile leaves open (whether a 4xx is kept); it never fails a run.
const Info Status = "info"

// KeyCheck is one `hookreplay keycheck` run as the reports see it: every
// check of the Idempotency-Key contract, judged against a profile.
type KeyCheck struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // always "keycheck"
	RunID         int64     `json:"run_id"`
	Target        string    `json:"target"`
	Method        string    `json:"method"`
	KeyHeader     string    `json:"key_header"`
	Profile       string    `json:"profile"`
	Rules         []string  `json:"rules"` // the profile's values as judged, "reuse → 409"
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	Verdict       string    `json:"verdict"` // pass | fail | inconclusive | error
	Probes        []string  `json:"probes"`
	// ProbeDefs says what each probe is, as given ("count = http: URL").
	ProbeDefs []string `json:"probe_definitions,omitempty"`
	// Effect is E, what one accepted operation changed: one line per probe.
	Effect  []string         `json:"effect"`
	Checks  []KeyCheckResult `json:"checks"`
	Notes   []string         `json:"notes,omitempty"`
	Options map[string]any   `json:"options,omitempty"`
	// Timeline, when set, is the run's timeline (NewKeyCheckTimeline),
	// drawn by the HTML report; it is built from the store, not stored
	// in the report.
	Timeline *Timeline `json:"-"`
}

// KeyCheckResult is the judgement of one check: what was sent, what the API
// answered and what the probes saw, against what the profile expects.
type KeyCheckResult struct {
	Name     string `json:"name"`
	Status   Status `json:"status"`
	Sent     string `json:"sent"`
	Observed string `json:"observed"`
	Expected string `json:"expected"`
	// Effect is what the probes saw during the check, in multiples of E
	// ("+0", "+E", "+2E") with the raw deltas.
	Effect string `json:"effect"`
	// Why names the finding: for a fail, the likely bug class.
	Why      string        `json:"why,omitempty"`
	Attempts int           `json:"attempts"`
	Duration time.Duration `json:"duration_ns"`
}

// ComputeVerdict derives the run's verdict from its checks: an error stops
// the run (error), any fail fails it, else an inconclusive check makes it
// inconclusive; warn, info and skip pass.
func (k *KeyCheck) ComputeVerdict() string {
	v := VerdictPass
	for _, c := range k.Checks {
		switch c.Status {
		case Error:
			return VerdictError
		case Fail:
			v = VerdictFail
		case Inconclusive:
			if v == VerdictPass {
				v = VerdictInconclusive
			}
		}
	}
	return v
}

// keyExitMeaning says in a few words what a keycheck verdict's exit code means.
func keyExitMeaning(verdict string) string {
	switch verdict {
	case VerdictPass:
		return "the API honoured the Idempotency-Key contract in every judged check"
	case VerdictFail:
		return "the API broke the Idempotency-Key contract"
	case VerdictInconclusive:
		return "nothing was proven in at least one check (see its why)"
	}
	return "the keycheck did not finish"
}

// KeyCheckText writes k as the terminal report: the target and profile,
// one line per check, then the why, expected and observed of every check
// that did not simply pass, and the verdict with its exit code.
func KeyCheckText(w io.Writer, k *KeyCheck, colorOn bool) error {
	p := Colors(colorOn)
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "%s %s %s  profile %s\n", p.Bold("keycheck"), safe(k.Method), safe(k.Target), safe(k.Profile))
	if len(k.Rules) > 0 {
		fmt.Fprintf(b, "  %s %s\n", p.Faint("rules:"), safe(strings.Join(k.Rules, "; ")))
	}
	defs := k.ProbeDefs
	if len(defs) != len(k.Probes) {
		defs = k.Probes
	}
	for _, d := range defs {
		fmt.Fprintf(b, "  %s %s\n", p.Faint("probe:"), safe(d))
	}
	if len(k.Effect) > 0 {
		fmt.Fprintf(b, "  %s %s\n", p.Faint("effect E of one operation:"), safe(strings.Join(k.Effect, ", ")))
	}
	b.WriteString("\n")
	width := 0
	for _, c := range k.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range k.Checks {
		line := c.Observed
		if c.Status == Skip || line == "" {
			line = c.Why
		}
		fmt.Fprintf(b, "%s %-*s  %s\n", phaseStatus(p, c.Status, symbol(c.Status)+" "+fmt.Sprintf("%-5s", c.Status)), width, c.Name, safe(safe(line)))
		if c.Status == Pass || c.Status == Skip {
			continue
		}
		if c.Why != "" && c.Why != line {
			fmt.Fprintf(b, "        %s %s\n", phaseStatus(p, c.Status, "why:"), safe(safe(c.Why)))
		}
		if c.Sent != "" {
			fmt.Fprintf(b, "        %s %s\n", p.Faint("sent:"), safe(safe(c.Sent)))
		}
		if c.Expected != "" {
			fmt.Fprintf(b, "        %s %s\n", p.Faint("expected:"), safe(safe(c.Expected)))
		}
		if c.Effect != "" {
			fmt.Fprintf(b, "        %s %s\n", p.Faint("effect:"), safe(safe(c.Effect)))
		}
	}
	for _, n := range k.Notes {
		fmt.Fprintf(b, "\n%s %s", p.Faint("note:"), safe(safe(n)))
	}
	if len(k.Notes) > 0 {
		b.WriteString("\n")
	}
	counts := map[Status]int{}
	var failed []string
	for _, c := range k.Checks {
		counts[c.Status]++
		if c.Status == Fail {
			failed = append(failed, c.Name)
		}
	}
	tally := fmt.Sprintf("%d checks: %d pass, %d fail, %d warn, %d info, %d skip", len(k.Checks), counts[Pass], counts[Fail], counts[Warn], counts[Info], counts[Skip])
	if n := counts[Inconclusive]; n > 0 {
		tally += fmt.Sprintf(", %d inconclusive", n)
	}
	verdict := strings.ToUpper(k.Verdict)
	fmt.Fprintf(b, "\n%s %s (exit %d): %s\n  %s", p.Bold("verdict:"), p.Emphasis(VerdictTone(k.Verdict), verdict), ExitCode(k.Verdict), keyExitMeaning(k.Verdict), tally)
	if len(failed) > 0 {
		fmt.Fprintf(b, "; failed: %s", strings.Join(failed, ", "))
	}
	b.WriteString("\n")
	if k.RunID != 0 {
		fmt.Fprintf(b, "  %s\n", p.Faint(fmt.Sprintf("run %d (hookreplay runs show %d)", k.RunID, k.RunID)))
	}
	return b.Flush()
}

// KeyCheckJSON writes k as pretty-printed JSON: schema_version, verdict,
// profile and checks [{name, status, sent, observed, expected, effect, why}].
func KeyCheckJSON(w io.Writer, k *KeyCheck) error {
	c := *k
	if c.Checks == nil {
		c.Checks = []KeyCheckResult{}
	}
	if c.Probes == nil {
		c.Probes = []string{}
	}
	if c.Effect == nil {
		c.Effect = []string{}
	}
	if c.Rules == nil {
		c.Rules = []string{}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode json report: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// KeyCheckJUnit writes k as JUnit XML: one testsuite, one testcase per
// check (classname hookreplay.keycheck.PROFILE). A fail is a <failure>,
// an error an <error>; skip and inconclusive are <skipped/>; warn and info
// pass with their why in system-out.
func KeyCheckJUnit(w io.Writer, k *KeyCheck) error {
	s := junitSuite{Name: safe("keycheck " + k.Method + " " + k.Target), Properties: []junitProperty{{"verdict", k.Verdict}, {"profile", safe(k.Profile)}, {"target", safe(k.Target)}}}
	if !k.StartedAt.IsZero() {
		s.Timestamp = k.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	if k.RunID != 0 {
		s.Properties = append(s.Properties, junitProperty{"run_id", fmt.Sprint(k.RunID)})
	}
	class := "hookreplay.keycheck." + k.Profile
	var total time.Duration
	for _, c := range k.Checks {
		tc := junitCase{Classname: class, Name: c.Name, Time: seconds(c.Duration)}
		// The API's answers are text from outside, escaped as in the text
		// report (and the check's JUnit): a report printed with junit=- on a
		// terminal, or shown by a CI page, must not carry C1 or bidi controls.
		why := safe(c.Why)
		detail := fmt.Sprintf("sent: %s\nobserved: %s\nexpected: %s\neffect: %s", safe(c.Sent), safe(c.Observed), safe(c.Expected), safe(c.Effect))
		switch c.Status {
		case Fail:
			tc.Failure = &junitFailure{Message: why, Type: "violation", Text: detail}
		case Error:
			tc.Error = &junitFailure{Message: why, Type: "error", Text: detail}
		case Skip, Inconclusive:
			tc.Skipped = &junitSkipped{Message: string(c.Status) + ": " + why}
		case Warn, Info:
			tc.SystemOut = string(c.Status) + ": " + why + "\n" + detail
		}
		s.add(tc)
		total += c.Duration
	}
	s.Time = seconds(total)
	root := junitSuites{Name: "hookreplay keycheck", Time: seconds(k.FinishedAt.Sub(k.StartedAt))}
	root.add(s)
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	buf.WriteString("\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// KeyCheckMarkdown writes k for a pull-request comment or
// $GITHUB_STEP_SUMMARY: the verdict, a table of checks, then each finding.
func KeyCheckMarkdown(w io.Writer, k *KeyCheck) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "## hookreplay keycheck: %s\n\n", mdVerdict(k.Verdict))
	fmt.Fprintf(b, "%s (exit %d). `%s %s`, profile **%s**", capitalize(keyExitMeaning(k.Verdict)), ExitCode(k.Verdict), mdCode(k.Method), mdCode(k.Target), mdText(k.Profile))
	if k.RunID != 0 {
		fmt.Fprintf(b, ", run %d", k.RunID)
	}
	b.WriteString(".\n\n| check | status | observed | expected | effect |\n|---|---|---|---|---|\n")
	for _, c := range k.Checks {
		obs := c.Observed
		if c.Status == Skip {
			obs = c.Why
		}
		fmt.Fprintf(b, "| %s | %s %s | %s | %s | %s |\n", c.Name, mdMark(keyMdStatus(c.Status)), c.Status, mdText(safe(obs)), mdText(safe(c.Expected)), mdText(c.Effect))
	}
	b.WriteString("\n")
	for _, c := range k.Checks {
		if c.Status == Pass || c.Status == Skip || c.Why == "" {
			continue
		}
		fmt.Fprintf(b, "- **%s** (%s): %s\n", c.Name, c.Status, mdText(safe(c.Why)))
	}
	for _, n := range k.Notes {
		fmt.Fprintf(b, "\n> %s\n", mdText(safe(n)))
	}
	for _, c := range k.Checks {
		if c.Status != Fail {
			continue
		}
		if m := k.Timeline.Section(0, c.Name).Mermaid(); m != "" {
			fmt.Fprintf(b, "\n#### ❌ %s, in time\n\n%s", mdText(c.Name), m)
		}
	}
	return b.Flush()
}

func keyMdStatus(s Status) Status {
	if s == Info {
		return Skip
	}
	return s
}

// WriteKeyCheck renders k in format to w; colour applies to text only.
func WriteKeyCheck(w io.Writer, format Format, k *KeyCheck, colorOn bool) error {
	switch format {
	case FormatText:
		return KeyCheckText(w, k, colorOn)
	case FormatJSON:
		return KeyCheckJSON(w, k)
	case FormatJUnit:
		return KeyCheckJUnit(w, k)
	case FormatMarkdown:
		return KeyCheckMarkdown(w, k)
	case FormatHTML:
		return KeyCheckHTML(w, k, k.Timeline)
	}
	return fmt.Errorf("unknown report format %q", format)
}

// WriteKeyCheck renders k to the target, as Target.Write does a check's.
func (t Target) WriteKeyCheck(stdout io.Writer, k *KeyCheck) error {
	var buf bytes.Buffer
	if err := WriteKeyCheck(&buf, t.Format, k, false); err != nil {
		return err
	}
	if t.Path == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return writeOut(t.Format, t.Path, buf.Bytes())
}
