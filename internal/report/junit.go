package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// The JUnit XML schema as CI systems (GitHub test reporters, GitLab, Jenkins)
// read it: testsuites > testsuite > testcase with failure or skipped.
type junitSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	// No skipped attribute here: strict JUnit schemas (Jenkins xunit's
	// junit-10.xsd) allow it on testsuite only.
	Skipped int          `xml:"-"`
	Time    string       `xml:"time,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// JUnit writes c as JUnit XML: a testsuite per delivery (and one for the
// order phase) with a testcase per phase, classname
// "hookreplay.<provider>.<event type>" and the phase as name. A failed phase
// is a <failure> carrying every violation and its fix hint; skipped, not
// judged and inconclusive phases are <skipped/>; warnings go to system-out.
func JUnit(w io.Writer, c *Check) error {
	c = normalized(c)
	root := junitSuites{Name: "hookreplay check", Time: seconds(c.FinishedAt.Sub(c.StartedAt))}
	stamp := ""
	if !c.StartedAt.IsZero() {
		stamp = c.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	props := func(extra ...junitProperty) []junitProperty {
		ps := []junitProperty{{"verdict", c.Verdict}}
		if c.Target != "" {
			ps = append(ps, junitProperty{"target", safe(c.Target)})
		}
		if c.RunID != 0 {
			ps = append(ps, junitProperty{"run_id", fmt.Sprint(c.RunID)})
		}
		for _, p := range c.Probes {
			ps = append(ps, junitProperty{"probe", safe(p)})
		}
		return append(ps, extra...)
	}
	for i := range c.Deliveries {
		d := &c.Deliveries[i]
		s := junitSuite{Name: deliveryTitle(d), Timestamp: stamp,
			Properties: props(junitProperty{"delivery_id", fmt.Sprint(d.DeliveryID)},
				junitProperty{"provider", safe(d.Provider)}, junitProperty{"event_type", safe(d.EventType)},
				junitProperty{"event_id", safe(d.EventID)})}
		if len(d.EventIDs) > 1 {
			s.Properties = append(s.Properties, junitProperty{"event_ids", safe(strings.Join(d.EventIDs, " "))})
		}
		var out []string
		for _, e := range d.Effect {
			out = append(out, fmt.Sprintf("effect of the first copy: %s: %s", safe(e.Probe), deltaText(e)))
		}
		s.SystemOut = strings.Join(out, "\n")
		class := classname(d)
		var total time.Duration
		for j := range d.Phases {
			s.add(junitPhase(class, &d.Phases[j]))
			total += d.Phases[j].Duration
		}
		s.Time = seconds(total)
		root.add(s)
	}
	if c.Order != nil {
		s := junitSuite{Name: "order of deliveries", Timestamp: stamp, Properties: props(), Time: seconds(c.Order.Duration)}
		s.add(junitPhase("hookreplay.order", c.Order))
		root.add(s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func (s *junitSuite) add(tc junitCase) {
	s.Cases = append(s.Cases, tc)
	s.Tests++
	if tc.Failure != nil {
		s.Failures++
	}
	if tc.Error != nil {
		s.Errors++
	}
	if tc.Skipped != nil {
		s.Skipped++
	}
}

func (r *junitSuites) add(s junitSuite) {
	r.Suites = append(r.Suites, s)
	r.Tests += s.Tests
	r.Failures += s.Failures
	r.Errors += s.Errors
	r.Skipped += s.Skipped
}

// classname is "hookreplay.<provider>.<event type>", which CI systems show as
// a package path.
func classname(d *DeliveryResult) string {
	parts := []string{"hookreplay"}
	if d.Provider != "" {
		parts = append(parts, d.Provider)
	}
	if d.EventType != "" {
		parts = append(parts, d.EventType)
	} else {
		parts = append(parts, fmt.Sprintf("delivery%d", d.DeliveryID))
	}
	return safe(strings.Join(parts, "."))
}

func junitPhase(class string, ph *PhaseResult) junitCase {
	tc := junitCase{Classname: class, Name: safe(ph.Phase), Time: seconds(ph.Duration)}
	var out []string
	if ph.Message != "" {
		out = append(out, safe(ph.Message))
	}
	if f := phaseFacts(ph); f != "" {
		out = append(out, f)
	}
	for _, wn := range ph.Warnings {
		out = append(out, "warning: "+safe(wn))
	}
	if h := warnHint(ph); h != "" {
		out = append(out, "fix: "+h)
	}
	switch ph.Status {
	case Fail:
		msg := ph.Message
		if len(ph.Violations) > 0 {
			msg = ph.Violations[0].Message
			if n := len(ph.Violations); n > 1 {
				msg += fmt.Sprintf(" (and %d more)", n-1)
			}
		}
		var body []string
		for i, v := range ph.Violations {
			line := safe(v.Message)
			if where := violationWhere(v); where != "" {
				line = where + ": " + line
			}
			body = append(body, line)
			if vals := violationValues(v); vals != "" {
				body = append(body, "  "+vals)
			}
			if v.Status != 0 {
				body = append(body, fmt.Sprintf("  answered %d", v.Status))
			}
			if showHint(ph.Violations, i) {
				body = append(body, "  fix: "+v.Hint)
			}
		}
		if len(body) == 0 {
			body = append(body, safe(ph.Message))
		}
		tc.Failure = &junitFailure{Message: safe(msg), Type: "hookreplay." + safe(ph.Phase), Text: strings.Join(body, "\n")}
	case Error:
		tc.Error = &junitFailure{Message: safe(ph.Message), Type: "hookreplay.error", Text: safe(ph.Message)}
	case Interrupted:
		tc.Error = &junitFailure{Message: safe(ph.Message), Type: "hookreplay.interrupted", Text: safe(ph.Message)}
	case Skip, NotJudged, Inconclusive:
		msg := ph.Message
		switch ph.Status {
		case NotJudged:
			msg = "not judged: " + msg
		case Inconclusive:
			msg = "inconclusive: " + msg
		}
		tc.Skipped = &junitSkipped{Message: safe(strings.TrimSuffix(msg, ": "))}
	}
	tc.SystemOut = strings.Join(out, "\n")
	return tc
}

// seconds is a JUnit time attribute: seconds with millisecond precision.
func seconds(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("%.3f", d.Seconds())
}
