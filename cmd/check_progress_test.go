package cmd

import (
	"bytes"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// The progress lines are the CLI's Observer: their text is what check
// printed itself before it had an Observer.
func TestCheckProgressLines(t *testing.T) {
	ok := store.Attempt{Status: 200, Latency: 12300 * time.Microsecond}
	d := 5.0
	effect := []report.ProbeDelta{{Probe: "sql: q", Before: "0", After: "5", Changed: true, Delta: &d}}
	var b bytes.Buffer
	p := checkProgress{w: &b}
	p.Step(check.Step{Phase: check.PhaseFirst, DeliveryID: 1, N: 1, Attempts: []store.Attempt{ok}, Effect: effect})
	p.Step(check.Step{Phase: check.PhaseDups, DeliveryID: 1, N: 2, Attempts: []store.Attempt{ok}, Changed: true})
	p.Step(check.Step{Phase: "control", DeliveryID: 1, Attempts: []store.Attempt{ok}, Effect: effect})
	p.Step(check.Step{Phase: check.PhaseBurst, DeliveryID: 1, N: 1, Attempts: []store.Attempt{ok, ok, {Status: 409}}, Spread: time.Millisecond, Status: report.Fail})
	p.Step(check.Step{Phase: check.PhaseLost, DeliveryID: 1, N: 2, What: "sender gave up before the answer", Attempts: []store.Attempt{{Lost: true}, ok}, Status: report.Pass})
	p.Step(check.Step{Phase: check.PhaseTamper, DeliveryID: 1, N: 1, Attempts: []store.Attempt{{Status: 400}}})
	p.Step(check.Step{Phase: check.PhaseCrash, DeliveryID: 1, N: 3, What: "killed 9ms after sending", Status: report.NotJudged})
	p.Step(check.Step{Phase: check.PhaseOrder, What: "2,1", Values: []string{"5", "x"}})
	p.Note(check.Note{Kind: check.NoteLateEffect, DeliveryID: 1, Phase: "first", After: 1234567 * time.Microsecond, Settle: 250 * time.Millisecond})
	p.Note(check.Note{Kind: check.NoteAdded, Text: "not a progress line"})
	want := `first    delivery 1: 200 in 12ms, sql: q 0 → 5 (+5)
dups     delivery 1 copy 2: 200, probes changed
control  delivery 1: 200, sql: q 0 → 5 (+5)
burst    delivery 1 round 1: 3 copies (spread 1ms), 200×2 409×1 → fail
lost     delivery 1 trial 2 (sender gave up before the answer): retry 200 → pass
tamper   delivery 1 copy 1: 400
crash    delivery 1 trial 3: killed 9ms after sending → notjudged
order    2,1 → 5; x
settle   delivery 1 first: a probe changed 1.23s after sending, later than --settle 250ms
`
	if b.String() != want {
		t.Errorf("progress lines:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestCheckErrWording(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:1/hook")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&check.MissingInput{Need: check.InputProbe}, "no probe given: add --probe-sql QUERY --dsn DSN, --probe-cmd CMD, --probe-http URL, --probe-redis 'URL COMMAND', --sink ADDR or --smtp-sink ADDR"},
		{&check.SecretError{DeliveryID: 3, Provider: "standard", Err: errors.New("bad key")}, "--secret cannot sign delivery 3 (standard): bad key"},
		{&check.ResetError{Err: errors.New(`"x" failed`)}, `--reset-cmd: "x" failed`},
		{&check.NotListeningError{Target: u, Err: "connection refused"}, "nothing is listening at http://127.0.0.1:1/hook (connection refused): start the handler, or give --serve CMD"},
		{&check.ServeError{Problem: check.ServeAddrInUse, Addr: "a:1"}, "--serve: a:1 already accepts connections before the handler was started: stop whatever listens there, or drop --serve"},
		{&check.ServeError{Problem: check.ServeNoStart, Cmd: "x", Err: errors.New("no sh")}, `--serve "x": no sh`},
		{&check.ServeError{Problem: check.ServeExited, Cmd: "x", Addr: "a:1", State: "exit status 1", Output: "  boom", Restart: true},
			"crash phase: restart: --serve \"x\" exited (exit status 1) before a:1 accepted connections; its output:\n  boom"},
		{&check.ServeError{Problem: check.ServeNotReady, Cmd: "x", Addr: "a:1", Timeout: time.Second, Output: "  (no output)"},
			"--serve \"x\": nothing accepted connections on a:1 within 1s; its output:\n  (no output)"},
		{errors.New("other"), "other"},
	} {
		_, msg := exitCode(checkErr(&check.SetupError{Err: tc.err}))
		if msg != tc.want || checkErrText(tc.err) != tc.want {
			t.Errorf("%T worded %q, want %q", tc.err, msg, tc.want)
		}
	}
}
