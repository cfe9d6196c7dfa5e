package cmd

import (
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// checkProgress is the check's Observer on the command line: one line on
// stderr per step, and one when effects land later than --settle.
type checkProgress struct {
	check.NopObserver
	w io.Writer
	// hb, when set, is w: it prints a line when nothing was printed for a
	// while, naming the phase the run is in.
	hb *heartbeat
	// multi, when set, takes the deliveries' lines over once the run
	// checks several at once.
	multi *multiProgress
}

// PhaseStarted tells the heartbeat which phase the run is in.
func (p checkProgress) PhaseStarted(s check.PhaseStart) {
	if p.hb != nil {
		p.hb.phase(s)
	}
	if s.DeliveryID != 0 && p.multi.on() {
		p.multi.step(s.DeliveryID, fmt.Sprintf("%-8s delivery %d", s.Phase, s.DeliveryID))
	}
}

// DeliveryDone shows a delivery's outcome when several run at once.
func (p checkProgress) DeliveryDone(d report.DeliveryResult) {
	if p.multi.on() {
		p.multi.done(d)
	}
}

// emit writes a step's line, or hands it to multi while several
// deliveries run at once.
func (p checkProgress) emit(id int64, format string, a ...any) {
	if id != 0 && p.multi.on() {
		p.multi.step(id, fmt.Sprintf(format, a...))
		return
	}
	p.line(format, a...)
}

var (
	_ check.Observer         = checkProgress{}
	_ check.DeliveryObserver = checkProgress{}
)

func (p checkProgress) line(format string, a ...any) {
	// A line quotes answers and errors of the handler: text from outside.
	fmt.Fprintln(p.w, message.Printable(fmt.Sprintf(format, a...)))
}

// Step writes the step's line.
func (p checkProgress) Step(s check.Step) {
	first := store.Attempt{}
	if len(s.Attempts) > 0 {
		first = s.Attempts[0]
	}
	switch s.Phase {
	case check.PhaseFirst:
		p.emit(s.DeliveryID, "first    delivery %d: %s in %s, %s", s.DeliveryID, check.AttemptText(first), check.RoundDuration(first.Latency), check.EffectText(s.Effect))
	case "control":
		p.emit(s.DeliveryID, "control  delivery %d: %s, %s", s.DeliveryID, check.AttemptText(first), check.EffectText(s.Effect))
	case check.PhaseDups:
		changed := ""
		if s.Changed {
			changed = ", probes changed"
		}
		p.emit(s.DeliveryID, "dups     delivery %d copy %d: %s%s", s.DeliveryID, s.N, check.AttemptText(first), changed)
	case check.PhaseBurst:
		p.emit(s.DeliveryID, "burst    delivery %d round %d: %d copies (spread %s), %s → %s", s.DeliveryID, s.N, len(s.Attempts), check.RoundDuration(s.Spread), check.StatusCounts(s.Attempts...), s.Status)
	case check.PhaseLost:
		retry := store.Attempt{}
		if len(s.Attempts) > 1 {
			retry = s.Attempts[1]
		}
		p.emit(s.DeliveryID, "lost     delivery %d trial %d (%s): retry %s → %s", s.DeliveryID, s.N, s.What, check.AttemptText(retry), s.Status)
	case check.PhaseTamper:
		p.emit(s.DeliveryID, "tamper   delivery %d copy %d: %s", s.DeliveryID, s.N, check.AttemptText(first))
	case check.PhaseCrash:
		p.emit(s.DeliveryID, "crash    delivery %d trial %d: %s → %s", s.DeliveryID, s.N, s.What, s.Status)
	case check.PhaseOrder:
		p.line("order    %s → %s", s.What, strings.Join(s.Values, "; "))
	}
}

// Note writes a line for effects that landed later than --settle.
func (p checkProgress) Note(n check.Note) {
	switch n.Kind {
	case check.NoteSchedule:
		p.multi.begin(n.Jobs, n.Deliveries)
	case check.NoteLateEffect:
		p.emit(n.DeliveryID, "settle   delivery %d %s: a probe changed %s after sending, later than --settle %s", n.DeliveryID, n.Phase, report.Duration(n.After), report.Duration(n.Settle))
	case check.NoteEstimate:
		p.emit(n.DeliveryID, "crash    delivery %d calibrated: %s", n.DeliveryID, strings.Replace(n.Text, "the run has", "--max-time has", 1))
	}
}

// checkFlag names a check input as the command line gives it; "" for an
// input no flag gives (the engine's plain words are used).
func checkFlag(in check.Input) string {
	switch in {
	case check.InputProbe:
		return "--probe-sql QUERY --dsn DSN, --probe-cmd CMD, --probe-http URL, --probe-redis 'URL COMMAND', --sink ADDR or --smtp-sink ADDR"
	case check.InputSecret:
		return "--secret"
	case check.InputSecretSources:
		return "--secret (or --secret-env)"
	case check.InputServe:
		return "--serve CMD (or --kill-cmd and --start-cmd)"
	case check.InputKill:
		return "--kill-cmd"
	case check.InputReset:
		return "--reset-cmd"
	case check.InputSettle:
		return "--settle"
	case check.InputSettleMax:
		return "--settle-max"
	case check.InputProviderTimeout:
		return "--provider-timeout"
	case check.InputSeed:
		return "--seed"
	case check.InputTarget:
		return "--to"
	case check.InputCopies:
		return "-n"
	case check.InputSinkMatch:
		return "--sink-match"
	case check.InputProviderFilter:
		return "--provider"
	case check.InputDedupeTTL:
		return "--dedupe-ttl"
	case check.InputForget:
		return "--forget-cmd"
	case check.InputRedisProbe:
		return "a --probe-redis"
	}
	return ""
}

// checkErr words an error of check.Run for the command line: a setup
// problem (exit 2) in terms of the flags that fix it.
func checkErr(err error) error {
	if pe := (*panics.Error)(nil); errors.As(err, &pe) {
		return &ExitError{Code: 2, Err: &caughtPanic{text: checkErrText(err), pe: pe}}
	}
	var se *check.SetupError
	if errors.As(err, &se) {
		return setupErr("%s", checkErrText(se.Err))
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return setupErr("%s", checkErrText(err))
}

// checkErrText is the words for err. They may quote a handler's output
// or the sender's fields, so they are escaped (message.PrintableText)
// wherever they are shown: stderr, the progress lines, the reports.
func checkErrText(err error) string { return message.PrintableText(checkErrWords(err)) }

func checkErrWords(err error) string {
	var (
		sv  *check.ServeError
		mi  *check.MissingInput
		sec *check.SecretError
		re  *check.ResetError
		nl  *check.NotListeningError
		cs  *check.CapturedSignatureError
		rj  *check.RejectedError
		ro  *check.RouteError
	)
	switch {
	case errors.As(err, &sv):
		return serveErrText(sv)
	case errors.As(err, &mi) && mi.Phase == "" && mi.Need == check.InputProbe:
		return "no probe given: add " + checkFlag(check.InputProbe)
	case errors.As(err, &mi):
		return fmt.Sprintf("phase %s needs %s", mi.Phase, orPlain(mi.Need))
	case errors.As(err, &sec):
		return fmt.Sprintf("--secret cannot sign delivery %d (%s): %v", sec.DeliveryID, sec.Provider, sec.Err)
	case errors.As(err, &re):
		return fmt.Sprintf("--reset-cmd: %v", re.Err)
	case errors.As(err, &cs) && len(cs.Providers) > 1:
		return fmt.Sprintf("delivery %d's captured %s signature does not verify with --secret (%s): the selected deliveries are of %d providers (%s), each signing with a secret of its own, and --secret is one: "+
			"check one provider at a time (--provider %s with its secret), or give each provider a check of its own in hookreplay.yaml (deliveries: {provider: …} and secret_env:)",
			cs.DeliveryID, cs.Provider, cs.Reason, len(cs.Providers), strings.Join(cs.Providers, ", "), cs.Provider)
	case errors.As(err, &cs):
		return fmt.Sprintf("delivery %d's captured %s signature does not verify with --secret (%s): give the secret the provider signs this endpoint's deliveries with", cs.DeliveryID, cs.Provider, cs.Reason)
	case errors.As(err, &rj):
		return rj.Text("--secret", "--to") + signedURLHint(rj)
	case errors.As(err, &ro):
		return ro.Text("--to")
	case errors.As(err, &nl):
		return fmt.Sprintf("nothing is listening at %s (%s): start the handler, or give --serve CMD", nl.Target, nl.Err)
	}
	return err.Error()
}

func serveErrText(e *check.ServeError) string {
	flag := "--serve"
	if e.ByStartCmd {
		flag = "--start-cmd"
	}
	if e.Problem == check.ServeAddrInUse && e.Restart && !e.ByStartCmd {
		// The group was killed and the port is still served: the server
		// left the group, which is not a stranger on the port.
		return fmt.Sprintf("crash phase: restart: %s still accepts connections after the handler's process group was killed: what --serve started left the group (setsid, a daemon, docker run -d), so the kill did not stop it; "+
			"give --kill-cmd and --start-cmd to kill and start it (docs/guide.md, \"Handlers that --serve cannot kill\")", e.Addr)
	}
	var s string
	switch e.Problem {
	case check.ServeAddrInUse:
		s = fmt.Sprintf("%s: %s already accepts connections before the handler was started: stop whatever listens there, or drop %s", flag, e.Addr, flag)
	case check.ServeNoStart:
		s = fmt.Sprintf("%s %q: %v", flag, e.Cmd, e.Err)
	case check.ServeExited:
		s = fmt.Sprintf("%s %q exited (%s) before %s accepted connections; its output:\n%s", flag, e.Cmd, e.State, e.Addr, e.Output)
	case check.ServeNotRunning:
		s = fmt.Sprintf("--kill-cmd without --serve: nothing accepts connections on %s; start the handler first (or give --serve)", e.Addr)
	case check.ServeKillFailed:
		if e.Err != nil {
			s = fmt.Sprintf("--kill-cmd: %v", e.Err)
		} else {
			s = fmt.Sprintf("--kill-cmd %q ran, but %s still accepted connections %s later: it did not stop the handler", e.Cmd, e.Addr, e.Timeout)
		}
	default:
		exited := ""
		if e.State != "" {
			exited = "it exited (" + e.State + ") and "
		}
		s = fmt.Sprintf("%s %q: %snothing accepted connections on %s within %s; its output:\n%s", flag, e.Cmd, exited, e.Addr, e.Timeout, e.Output)
	}
	if e.Restart {
		return "crash phase: restart: " + s
	}
	return s
}

// orPlain is the flag for in, or the engine's words when no flag gives it.
func orPlain(in check.Input) string {
	if f := checkFlag(in); f != "" {
		return f
	}
	return in.String()
}

// checkUnmet returns a phase asked for by name with a need that has says
// the command line does not give. With several, the last in run order is
// the one reported (crash before tamper before order, as always).
func checkUnmet(phases []string, has func(check.Input) bool) (phase string, req check.Requirement, unmet bool) {
	all := check.Phases()
	for i := len(all) - 1; i >= 0; i-- {
		p := all[i]
		if !slices.Contains(phases, p.Name) {
			continue
		}
		for _, req := range p.Needs {
			if !has(req.Need) {
				return p.Name, req, true
			}
		}
	}
	return "", check.Requirement{}, false
}

// checkNeedErr refuses phase, asked for by name without req's input.
func checkNeedErr(phase string, req check.Requirement) error {
	name := orPlain(req.Need)
	if req.Need == check.InputSecret {
		name = checkFlag(check.InputSecretSources)
	}
	why := req.Why
	if req.Usage != "" {
		why = req.Usage
	}
	return usageErr("phase %s needs %s", phase, strings.TrimSpace(name+" "+why))
}

// heartbeatEvery is how long the progress may stay silent before a line
// says the check is still running.
const heartbeatEvery = 10 * time.Second

// heartbeat is the progress lines' writer: when nothing was written for
// every, it writes "still checking: …" so that no run is silent for minutes.
type heartbeat struct {
	w     io.Writer
	every time.Duration
	done  chan struct{}
	wg    sync.WaitGroup

	mu    sync.Mutex
	last  time.Time
	start time.Time
	where string
}

func newHeartbeat(w io.Writer, every time.Duration) *heartbeat {
	h := &heartbeat{w: w, every: every, done: make(chan struct{}), last: time.Now(), start: time.Now()}
	h.wg.Add(1)
	go h.loop()
	return h
}

func (h *heartbeat) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = time.Now()
	return h.w.Write(b)
}

func (h *heartbeat) phase(s check.PhaseStart) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.where = s.Phase
	if s.DeliveryID != 0 {
		h.where = fmt.Sprintf("%s of delivery %d", s.Phase, s.DeliveryID)
	}
}

func (h *heartbeat) loop() {
	defer h.wg.Done()
	t := time.NewTicker(h.every / 4)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
		}
		h.mu.Lock()
		if time.Since(h.last) >= h.every {
			where := h.where
			if where == "" {
				where = "starting"
			}
			fmt.Fprintf(h.w, "…        still checking: %s (%s since the last line, %s in all)\n", where, report.Duration(time.Since(h.last)), report.Duration(time.Since(h.start)))
			h.last = time.Now()
		}
		h.mu.Unlock()
	}
}

// stop ends the heartbeat and waits for it.
func (h *heartbeat) stop() {
	close(h.done)
	h.wg.Wait()
}
