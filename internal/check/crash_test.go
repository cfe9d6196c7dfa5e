package check

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// The crash phase kills and restarts a real process: the test binary
// itself, started with CHECK_TEST_HANDLER set, serves a handler that keeps
// its claimed event ids in a file (one line each), so its effect survives a
// restart exactly as far as the handler made it durable.

func TestMain(m *testing.M) {
	if mode := os.Getenv("CHECK_TEST_HANDLER"); mode != "" {
		serveFileHandler(mode, os.Getenv("CHECK_TEST_ADDR"), os.Getenv("CHECK_TEST_STATE"))
		return
	}
	// Every goroutine a check starts has an owner that stops it.
	goleak.VerifyTestMain(m)
}

// serveFileHandler is the handler process. "durable" claims an event by
// writing it before answering 2xx; "ackfirst" answers 2xx first and does
// the work 50 ms later, from memory; "startup" is durable and also writes a
// line of its own each time it starts (a cache warm-up); "queue" enqueues
// the event durably (a second file), answers 2xx and works 10 ms later,
// and a restarted process takes up the jobs left unworked only after
// queueRecovery, as BullMQ does with a dead worker's job once its lock
// expires.
func serveFileHandler(mode, addr, state string) {
	if mode == "queue" {
		serveQueueHandler(addr, state)
		return
	}
	if mode == "startup" {
		f, err := os.OpenFile(state, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(f, "started %d\n", os.Getpid())
		f.Close()
	}
	var mu sync.Mutex
	claim := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		if b, _ := os.ReadFile(state); strings.Contains(string(b), id+"\n") {
			return
		}
		f, err := os.OpenFile(state, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		f.WriteString(id + "\n")
		f.Close()
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			ID string `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &ev)
		if mode == "ackfirst" {
			w.WriteHeader(http.StatusOK)
			go func() { time.Sleep(50 * time.Millisecond); claim(ev.ID) }()
			return
		}
		time.Sleep(30 * time.Millisecond) // the work
		claim(ev.ID)
		w.WriteHeader(http.StatusOK)
	})
	_ = http.ListenAndServe(addr, h)
}

// lines is the fake probe of the handler process: how many events it claimed.
type lines struct{ path string }

func (l lines) Name() string { return "claimed" }

func (l lines) Read(context.Context) (probe.Value, error) {
	f, err := os.Open(l.path)
	if os.IsNotExist(err) {
		return probe.NumValue(0), nil
	}
	if err != nil {
		return probe.Value{}, err
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		n++
	}
	return probe.NumValue(float64(n)), nil
}

func TestRunCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills handler processes")
	}
	for _, tc := range []struct {
		mode string
		want report.Status
		msg  string
	}{
		{"durable", report.Pass, "kills landed mid-handling"},
		{"ackfirst", report.Fail, "answered 200 but the work was lost when the process died"},
		// Its restarts' own line is learned and not charged to the events.
		{"startup", report.Pass, "kills landed mid-handling"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			state := filepath.Join(t.TempDir(), "claimed")
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			srv := &Server{Cmd: "exec '" + exe + "'", Addr: addr,
				Env: []string{"CHECK_TEST_HANDLER=" + tc.mode, "CHECK_TEST_ADDR=" + addr, "CHECK_TEST_STATE=" + state}}
			u, _ := url.Parse("http://" + addr + "/hook")
			o := Options{Target: u, Deliveries: []Delivery{delivery(t, 1, 4900)}, Probes: []probe.Probe{lines{state}},
				Secret: testSecret, Serve: srv, Phases: []string{PhaseCrash},
				Settle: 5 * time.Millisecond, SettleMax: 300 * time.Millisecond}
			est := &estimates{}
			o.Observer = est
			c := run(t, o)
			p := phaseOf(t, c, PhaseCrash)
			// Once calibrated, the phase says how long it expects to take,
			// before its first trial.
			if len(est.notes) != 1 || est.notes[0].After <= 0 || !strings.Contains(est.notes[0].Text, "trials of about") || est.stepsBefore != 0 {
				t.Errorf("crash estimate: %+v (after %d trials)", est.notes, est.stepsBefore)
			} else {
				t.Logf("crash estimate %s, took %s: %s", est.notes[0].After, p.Duration, est.notes[0].Text)
			}
			if p.Status != tc.want || !strings.Contains(p.Message, tc.msg) {
				t.Fatalf("crash: %s %q, want %s %q", p.Status, p.Message, tc.want, tc.msg)
			}
			if tc.want == report.Fail && !strings.HasPrefix(p.Violations[0].Hint, ackLostHint) {
				t.Errorf("an acknowledged, lost event's hint: %q", p.Violations[0].Hint)
			}
			if canDial(addr) {
				t.Error("the handler still listens after the run")
			}
			if tc.want == report.Pass && !strings.Contains(p.Message, "exactly once") {
				t.Errorf("pass message %q", p.Message)
			}
			// A timed kill counts from the request's last byte as it was
			// written, so none lands before it, however loaded the machine.
			if tc.want == report.Pass && !strings.Contains(p.Message, "(0 before the request was fully sent") {
				t.Errorf("a kill landed before its request was written: %q", p.Message)
			}
			if tc.mode == "startup" && !strings.Contains(strings.Join(c.Notes, "\n"), "restarting the handler with no event changed claimed by +1") {
				t.Errorf("the restart's own effect is not noted: %q", c.Notes)
			}
		})
	}
}

// estimates records the crash phase's estimate and how many of its trials
// came before it.
type estimates struct {
	NopObserver
	notes       []Note
	steps       int
	stepsBefore int
}

func (e *estimates) Step(s Step) {
	if s.Phase == PhaseCrash {
		e.steps++
	}
}

func (e *estimates) Note(n Note) {
	if n.Kind == NoteEstimate {
		e.notes = append(e.notes, n)
		e.stepsBefore = e.steps
	}
}

func TestClassifyKill(t *testing.T) {
	t0 := time.Now()
	for _, tc := range []struct {
		name string
		a    store.Attempt
		want killClass
	}{
		{"not connected", store.Attempt{Err: "connect: connection refused"}, killBeforeRead},
		{"request still being written", store.Attempt{CompletedAt: t0.Add(time.Millisecond), Err: "read response: connection reset by peer"}, killBeforeRead},
		{"written, no answer", store.Attempt{SentAt: t0.Add(-time.Millisecond), CompletedAt: t0.Add(-time.Millisecond), Err: "read response: connection closed before a complete answer"}, killMid},
		{"answered", store.Attempt{CompletedAt: t0.Add(-time.Millisecond), Status: 200}, killAfterAnswer},
		{"answer read after the signal", store.Attempt{CompletedAt: t0.Add(-time.Millisecond), Status: 500}, killAfterAnswer},
	} {
		if got := classifyKill(tc.a, t0, false); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// Killed at the first probe change: the handler had read the request
	// and acted on it, even when the sender noted its last byte after the
	// signal (a busy machine ran the writer late) or not at all.
	for _, tc := range []struct {
		name string
		a    store.Attempt
		want killClass
	}{
		{"last byte noted after the signal", store.Attempt{CompletedAt: t0.Add(time.Millisecond), Err: "read response: connection reset by peer"}, killMid},
		{"write reset after the effect", store.Attempt{Err: "write request: broken pipe"}, killMid},
		{"answered as the probe moved", store.Attempt{CompletedAt: t0.Add(-time.Millisecond), Status: 200}, killAfterAnswer},
	} {
		if got := classifyKill(tc.a, t0, true); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestCrashPlanSweepsWarmHandling(t *testing.T) {
	for _, tc := range []struct {
		warm  time.Duration
		timed int
	}{{3 * time.Millisecond, 10}, {20 * time.Millisecond, 8}, {300 * time.Millisecond, 6}} {
		p := crashPlan(tc.warm, 2*tc.warm)
		if len(p) != triggerTrials+tc.timed+1 {
			t.Fatalf("warm %s: %d kills, want %d", tc.warm, len(p), triggerTrials+tc.timed+1)
		}
		for i := 0; i < triggerTrials; i++ {
			if !p[i].onChange {
				t.Fatalf("warm %s: kill %d is not at the first probe change", tc.warm, i)
			}
		}
		sweep := p[triggerTrials : triggerTrials+tc.timed]
		for i, k := range sweep {
			if k.onChange || k.delay <= 0 || k.delay >= tc.warm || i > 0 && k.delay <= sweep[i-1].delay {
				t.Fatalf("warm %s: sweep %v is not increasing inside the window", tc.warm, sweep)
			}
		}
		// Evenly spread: no gap wider than the window / number of kills.
		if gap := sweep[1].delay - sweep[0].delay; gap > tc.warm/time.Duration(tc.timed)+time.Microsecond {
			t.Fatalf("warm %s: gap %s", tc.warm, gap)
		}
		if last := p[len(p)-1]; last.delay <= 2*tc.warm {
			t.Fatalf("warm %s: the last kill (%s) is not after the answer", tc.warm, last.delay)
		}
	}
}

func TestRestartEffectAdded(t *testing.T) {
	e := restartEffect{delta: []*big.Rat{big.NewRat(1, 1), nil, big.NewRat(1, 10)}}
	rd := e.added(reading{vals: []probe.Value{probe.NumValue(4), probe.TextValue("x"), probe.TextValue(probe.NoRows)}})
	if got := []string{rd.vals[0].Text, rd.vals[1].Text, rd.vals[2].Text}; got[0] != "5" || got[1] != "x" || got[2] != "0.1" {
		t.Fatalf("added: %v", got)
	}
}

func TestServerStartErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	busy := ln.Addr().String()
	defer ln.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	idle := free.Addr().String()
	free.Close()
	for _, tc := range []struct {
		name string
		srv  *Server
		want ServeProblem
		msg  string
	}{
		{"address in use", &Server{Cmd: "true", Addr: busy}, ServeAddrInUse, "already accepts connections"},
		{"exits first", &Server{Cmd: "echo boom; exit 4", Addr: idle}, ServeExited, "exit status 4"},
		{"never listens", &Server{Cmd: "sleep 5", Addr: idle, ReadyTimeout: 100 * time.Millisecond}, ServeNotReady, "within 100ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.srv.Start(context.Background())
			defer tc.srv.Stop()
			se, ok := err.(*ServeError)
			if !ok || se.Problem != tc.want || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Start = %v, want problem %d mentioning %q", err, tc.want, tc.msg)
			}
			if tc.want == ServeExited && !strings.Contains(se.Output, "boom") {
				t.Errorf("output %q lacks what the process printed", se.Output)
			}
		})
	}
}

// A pass needs enough judged kills mid-handling; kills elsewhere never make
// one, and too few make the phase not judged, saying how many landed.
func TestCrashConclude(t *testing.T) {
	fr := &firstResult{}
	for _, tc := range []struct {
		name      string
		kills     [3]int
		midJudged int
		violation bool
		want      report.Status
		msg       string
	}{
		{"enough mid-handling", [3]int{1, 9, 3}, 9, false, report.Pass, "9 of 13 kills landed mid-handling (1 before the request was fully sent, 3 after the answer)"},
		{"all after the answer", [3]int{0, 0, 13}, 0, false, report.NotJudged, "not judged: only 0 of 13 kills landed mid-handling"},
		{"two mid-handling", [3]int{5, 2, 10}, 2, false, report.NotJudged, "3 needed to judge"},
		{"mid-handling but unjudged", [3]int{0, 5, 0}, 1, false, report.NotJudged, "not judged in"},
		{"a violation is evidence", [3]int{0, 0, 1}, 0, true, report.Fail, "0 of 1 kills landed mid-handling"},
	} {
		ph := &report.PhaseResult{}
		if tc.violation {
			ph.Violations = []report.Violation{{Message: "work was lost"}}
		}
		c := &crashPhase{fr: fr, ph: ph, kills: tc.kills, midJudged: tc.midJudged}
		c.conclude()
		if ph.Status != tc.want || !strings.Contains(ph.Message, tc.msg) {
			t.Errorf("%s: %s %q, want %s %q", tc.name, ph.Status, ph.Message, tc.want, tc.msg)
		}
	}
}
