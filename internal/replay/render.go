package replay

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fatih/color"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// FormatLatency renders a duration for one-line output: "41µs", "3.2ms", "1.25s".
func FormatLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(10 * time.Millisecond).String()
}

// FormatStandsFor renders a schedule offset: "+0s", "+1m0s", "+2d0h".
func FormatStandsFor(d time.Duration) string {
	short := func(d time.Duration) string {
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
	if d >= 48*time.Hour {
		days := d / (24 * time.Hour)
		rest := (d - days*24*time.Hour).Round(time.Minute)
		if rest == 0 {
			return fmt.Sprintf("+%dd", days)
		}
		return fmt.Sprintf("+%dd%s", days, short(rest))
	}
	return "+" + short(d.Round(time.Second))
}

// Plural renders "1 copy", "3 copies", "2 answers".
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// AttemptLine is the live line for one attempt. multi adds the delivery id.
func AttemptLine(ios *iostreams.IO, a store.Attempt, multi bool) string {
	var b strings.Builder
	if multi {
		fmt.Fprintf(&b, "  #%-4d", a.DeliveryID)
	} else {
		b.WriteString("  ")
	}
	fmt.Fprintf(&b, "copy %-3d ", a.Copy)
	switch {
	case a.Status != 0:
		b.WriteString(ios.StatusColor(a.Status, fmt.Sprintf("%d", a.Status)))
		fmt.Fprintf(&b, "  %8s", FormatLatency(a.Latency))
		if body := oneLine(a.ResponseBody, 60); body != "" {
			b.WriteString("  " + body)
		}
	case a.Err != "":
		b.WriteString(ios.Color(color.FgRed)("ERR") + "  " + a.Err)
	case a.Lost:
		b.WriteString(ios.Color(color.FgMagenta)("lost"))
		b.WriteString("  answer not read (connection closed after the request)")
	}
	if r, ok := a.Detail["retry"]; ok {
		fmt.Fprintf(&b, "  · retry %v stands for %s", r, FormatStandsFor(a.StandsFor))
	}
	if v, ok := a.Detail["schedule_exhausted"]; ok {
		fmt.Fprintf(&b, "  · schedule exhausted: %v", v)
	}
	return b.String()
}

func oneLine(body []byte, max int) string {
	s := message.Printable(strings.Join(strings.Fields(string(body)), " "))
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// WriteSummary prints a run's summary for humans.
func WriteSummary(w io.Writer, ios *iostreams.IO, s Summary) {
	bold := ios.Color(color.Bold)
	warn := ios.Color(color.FgYellow)
	var classes []string
	keys := make([]string, 0, len(s.Classes))
	for k := range s.Classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		label := k
		if strings.HasSuffix(k, "xx") {
			label = ios.StatusColor(int(k[0]-'0')*100, k)
		}
		classes = append(classes, fmt.Sprintf("%s %d", label, s.Classes[k]))
	}
	fmt.Fprintf(w, "%s %s, %d reached the handler\n", bold("summary"), Plural(s.Attempts, "attempt"), s.Connected)
	if len(classes) > 0 {
		fmt.Fprintf(w, "  statuses      %s\n", strings.Join(classes, " · "))
	}
	if s.Answered > 0 {
		fmt.Fprintf(w, "  latency       p50 %s · p95 %s · max %s\n", FormatLatency(s.LatencyP50), FormatLatency(s.LatencyP95), FormatLatency(s.LatencyMax))
	}
	for _, b := range s.Bursts {
		fmt.Fprintf(w, "  burst spread  %s between the first and last complete request (%d of %d copies of delivery %d)\n",
			FormatLatency(b.Spread), b.Completed, b.Copies, b.DeliveryID)
	}
	if s.Lost > 0 {
		fmt.Fprintf(w, "  lost          %s deliberately not read\n", Plural(s.Lost, "answer"))
	}
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
	if len(s.ErrorKinds) > 0 {
		var ks []string
		for k := range s.ErrorKinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			fmt.Fprintf(w, "  %s %d× %s\n", ios.Color(color.FgRed)("errors"), s.ErrorKinds[k], k)
		}
	}
	if s.Interrupted {
		fmt.Fprintln(w, warn("  interrupted: no new copies were sent after the signal; copies in flight were completed and recorded"))
	}
}

// groupDifferences renders differences compactly: one line per delivery,
// reference and answer.
func groupDifferences(ds []Difference) []string {
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
	sort.Ints(cs)
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
