package cmd

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
)

// multiProgress is the progress of a check that runs several deliveries
// at once (check.NoteSchedule with more than one job): their step lines
// interleaved would be a flood nobody can follow. It shows one line per
// delivery in flight (its latest step) and a total; each delivery's outcome
// gets a line of its own when it is judged. On a terminal the in-flight
// lines and the total are redrawn in place (and every second, for the
// elapsed time); elsewhere, a CI log, the total follows each outcome, the
// deliveries in flight named in it.
type multiProgress struct {
	w   io.Writer
	tty bool

	mu     sync.Mutex
	active bool
	jobs   int
	total  int
	start  time.Time
	order  []int64 // in flight, by start
	now    map[int64]string
	began  map[int64]time.Time
	judged int
	counts map[string]int // outcome → deliveries
	drawn  int            // lines of the block on the terminal
	// lastTotal is the total a log was last given.
	lastTotal string
	last      time.Time
	stopT     chan struct{}
	wg        sync.WaitGroup
}

func newMultiProgress(w io.Writer, tty bool) *multiProgress {
	return &multiProgress{w: w, tty: tty, now: map[int64]string{}, began: map[int64]time.Time{}, counts: map[string]int{}}
}

// begin switches the display on for a run of total deliveries, jobs at once.
func (m *multiProgress) begin(jobs, total int) {
	if m == nil || jobs < 2 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active, m.jobs, m.total, m.start = true, jobs, total, time.Now()
	if m.tty {
		m.stopT = make(chan struct{})
		m.wg.Add(1)
		go m.tick()
	}
}

// on reports whether the display is on: step lines then go to it.
func (m *multiProgress) on() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active
}

func (m *multiProgress) tick() {
	defer m.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-m.stopT:
			return
		case <-t.C:
			m.mu.Lock()
			m.draw(nil)
			m.mu.Unlock()
		}
	}
}

// step records delivery id's latest step (its phase when text is "").
func (m *multiProgress) step(id int64, text string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.now[id]; !ok {
		m.order = append(m.order, id)
		m.began[id] = time.Now()
		if !m.tty {
			fmt.Fprintf(m.w, "… delivery %d: checking (%d in flight)\n", id, len(m.order))
		}
	}
	m.now[id] = text
	if m.tty && time.Since(m.last) >= 100*time.Millisecond {
		m.draw(nil)
	}
}

// done prints delivery d's outcome and takes it out of the in-flight lines.
func (m *multiProgress) done(d report.DeliveryResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	outcome, phases := deliveryOutcome(d)
	took := ""
	if t, ok := m.began[d.DeliveryID]; ok {
		took = " in " + report.Duration(time.Since(t).Round(10*time.Millisecond))
	}
	mark := map[string]string{"pass": "✓", "fail": "✗"}[outcome]
	if mark == "" {
		mark = "–"
	}
	line := fmt.Sprintf("%s delivery %d (%s): %s%s%s", mark, d.DeliveryID, d.EventType, outcome, phases, took)
	delete(m.now, d.DeliveryID)
	for i, id := range m.order {
		if id == d.DeliveryID {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	m.judged++
	m.counts[outcome]++
	m.draw([]string{line})
}

// stop ends the display: the terminal's block is replaced by the total.
func (m *multiProgress) stop() {
	if m == nil {
		return
	}
	m.mu.Lock()
	if !m.active {
		m.mu.Unlock()
		return
	}
	m.active = false
	stopT := m.stopT
	m.mu.Unlock()
	if stopT != nil {
		close(stopT)
		m.wg.Wait()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clear()
	if t := m.totalLine(); untimed(t) != untimed(m.lastTotal) {
		fmt.Fprintln(m.w, t)
	}
}

// draw prints lines above the block (outcomes, kept) and, on a terminal,
// redraws the block: one line per delivery in flight and the total. In a
// log the total follows each outcome.
func (m *multiProgress) draw(lines []string) {
	if !m.active {
		return
	}
	m.last = time.Now()
	var b strings.Builder
	if m.tty {
		m.clearTo(&b)
	}
	for _, l := range lines {
		b.WriteString(message.Printable(l) + "\n")
	}
	switch {
	case m.tty:
		for _, id := range m.order {
			b.WriteString(fit("  … "+m.now[id], 120) + "\n")
		}
		b.WriteString(m.totalLine() + "\n")
		m.drawn = len(m.order) + 1
	case len(lines) > 0:
		m.lastTotal = m.totalLine()
		b.WriteString(m.lastTotal + "\n")
	}
	io.WriteString(m.w, b.String())
}

// clear removes the block from the terminal.
func (m *multiProgress) clear() {
	if !m.tty {
		return
	}
	var b strings.Builder
	m.clearTo(&b)
	io.WriteString(m.w, b.String())
}

func (m *multiProgress) clearTo(b *strings.Builder) {
	if m.drawn > 0 {
		fmt.Fprintf(b, "\x1b[%dA\x1b[J", m.drawn)
		m.drawn = 0
	}
}

// totalLine is "  7 of 20 judged (6 pass, 1 fail) · 13 in flight[: 4, 9, …] · 3.2s".
func (m *multiProgress) totalLine() string {
	var parts []string
	for _, k := range []string{"pass", "fail", "inconclusive", "error"} {
		if n := m.counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	s := fmt.Sprintf("  %d of %d judged", m.judged, m.total)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if n := len(m.order); n > 0 {
		s += fmt.Sprintf(" · %d in flight", n)
		if !m.tty {
			ids := make([]string, 0, n)
			for _, id := range m.order {
				ids = append(ids, fmt.Sprint(id))
			}
			s += ": " + strings.Join(ids, ", ")
		}
	}
	return s + " · " + report.Duration(time.Since(m.start).Round(100*time.Millisecond))
}

// deliveryOutcome is a delivery's outcome (pass, fail, inconclusive,
// error) and the phases that decided it (" — dups, burst"), "" when all
// passed.
func deliveryOutcome(d report.DeliveryResult) (string, string) {
	by := map[string][]string{}
	for _, p := range d.Phases {
		switch p.Status {
		case report.Fail:
			by["fail"] = append(by["fail"], p.Phase)
		case report.Inconclusive, report.NotJudged:
			by["inconclusive"] = append(by["inconclusive"], p.Phase)
		case report.Error, report.Interrupted:
			by["error"] = append(by["error"], p.Phase)
		}
	}
	for _, k := range []string{"error", "fail", "inconclusive"} {
		if len(by[k]) > 0 {
			return k, " — " + strings.Join(by[k], ", ")
		}
	}
	return "pass", ""
}

// fit cuts s to n runes.
func fit(s string, n int) string {
	s = message.Printable(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// untimed is a total line without its elapsed time.
func untimed(total string) string {
	if i := strings.LastIndex(total, " · "); i >= 0 {
		return total[:i]
	}
	return total
}
