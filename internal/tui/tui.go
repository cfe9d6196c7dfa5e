// Package tui is hookreplay's interactive view (Bubble Tea): browse captured
// deliveries live, inspect their exact bytes and signature, replay and check
// them from the keyboard and read past runs. It reads the store only inside
// tea.Cmds and hears the engines through their sinks bridged to messages; it
// never imports cmd (cmd hands it what it needs through Options).
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/panics"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// DefaultPoll is how long the TUI waits before watching the store again
// after the watcher failed. While it works the TUI waits on it for changes
// by any process (store.Watcher.Wait: Postgres's LISTEN, SQLite's
// data_version), reloading only when something changed.
const DefaultPoll = 500 * time.Millisecond

// Options configure a TUI session.
type Options struct {
	Store  *store.Store
	DBPath string
	// Secret verifies signatures in the delivery view and re-signs replays
	// ("": shows what capture recorded, replays keep the captured signature).
	Secret string
	In     io.Reader
	Out    io.Writer
	// NoColor draws without colour (NO_COLOR, --no-color).
	NoColor bool
	// Poll is the pause before watching the store again after an error
	// (0: DefaultPoll; negative: the store is not watched).
	Poll time.Duration
	// ExportDir is where e writes JSONL exports and s check reports ("":
	// the working directory).
	ExportDir string
	// Target is tui's --to: where r replays a delivery never sent anywhere
	// before, and the replay form's default ("": the last run's).
	Target string
	// Forward is capture --tui's --forward: r replays a delivery where
	// capture forwarded it.
	Forward string
	// Check runs a check of the given deliveries (cmd builds it from the
	// check flags given to 'hookreplay tui'); nil when none were given.
	Check CheckFunc
	// CheckSetup says how to enable checks when Check and NewCheck are nil.
	CheckSetup string
	// NewCheck builds a check from the check form (c without check flags);
	// nil: c says CheckSetup instead.
	NewCheck NewCheckFunc
	// ConfigPath is the hookreplay.yaml the check form saves named checks
	// to ("": hookreplay.yaml in the working directory).
	ConfigPath string
	// Notes, when set, are shown in the status bar as they come (capture
	// --tui: problems of the capture running in the same process).
	Notes <-chan string
	// Banner is the status bar's first note ("capturing on …").
	Banner string
	// Filter starts the deliveries view filtered, in the / language
	// ("provider:stripe since:2h"); a malformed one is an error of Run.
	Filter string
}

// CheckFunc checks the deliveries ids against the handler, telling obs as
// the run goes; the run and its report are stored. Errors are one line,
// worded for the user.
type CheckFunc func(ctx context.Context, ids []int64, obs check.Observer) (*report.Check, error)

// env is what every view shares: the store, styles, keys and settings.
type env struct {
	st        *store.Store
	styles    *Styles
	keys      keyMap
	now       func() time.Time
	dbPath    string
	secret    string
	color     bool
	watcher   *store.Watcher
	poll      time.Duration
	clipboard io.Writer
	exportDir string

	// defaultTarget prefills the replay form (check's --to).
	defaultTarget string
	// exec runs an editor with the terminal (tea.ExecProcess).
	exec func(c *exec.Cmd, done func(error) tea.Msg) tea.Cmd
	// forward is capture's --forward base URL (nil: not under capture
	// --tui --forward).
	forward    *url.URL
	check      CheckFunc
	checkSetup string
	newCheck   NewCheckFunc
	configPath string

	// runs are the replays and checks in flight; quitting waits for them.
	runs    sync.WaitGroup
	mu      sync.Mutex
	cancels map[int]context.CancelFunc
	nextRun int
	notes   <-chan string
	banner  string
	// navs are view changes asked for while handling a message (nav).
	navs []tea.Msg
	// done is closed when the program has ended: nothing reads messages
	// any more.
	done chan struct{}

	// trap holds the first panic of the session (guard.go); quitProgram
	// ends the program from outside its event loop.
	trap        panics.Trap
	quitProgram func()
}

func newEnv(o Options, r *lipgloss.Renderer) *env {
	e := &env{st: o.Store, styles: NewStyles(r), keys: newKeyMap(), now: time.Now, dbPath: o.DBPath,
		secret: o.Secret, color: r.ColorProfile() != termenv.Ascii, poll: o.Poll, clipboard: o.Out,
		exportDir: o.ExportDir, defaultTarget: o.Target, check: o.Check, checkSetup: o.CheckSetup, newCheck: o.NewCheck, configPath: o.ConfigPath,
		notes: o.Notes, banner: o.Banner,
		cancels: map[int]context.CancelFunc{}, done: make(chan struct{}), exec: execEditor}
	if e.poll == 0 {
		e.poll = DefaultPoll
	}
	if e.configPath == "" {
		e.configPath = "hookreplay.yaml"
	}
	if e.exportDir == "" {
		e.exportDir = "."
	}
	return e
}

// renderer draws on out, plain when noColor.
func renderer(out io.Writer, noColor bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(out)
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

// Run shows the TUI on o.In/o.Out until the user quits or ctx ends. Running
// replays and checks are stopped on the way out; what they sent is stored.
func Run(ctx context.Context, o Options) error {
	if o.Store == nil {
		return errors.New("tui: no store")
	}
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	e := newEnv(o, renderer(o.Out, o.NoColor))
	if o.Forward != "" {
		u, err := capture.ParseForwardURL(o.Forward)
		if err != nil {
			return err
		}
		e.forward = u
	}
	filter, err := parseFilter(o.Filter, e.now())
	if err != nil {
		return fmt.Errorf("filter %q: %v", o.Filter, err)
	}
	if e.poll > 0 {
		w, err := o.Store.Watch(ctx)
		if err != nil {
			return err
		}
		defer w.Close()
		e.watcher = w
	}
	m := newModel(e)
	m.views[0].(*deliveriesModel).setFilter(filter, o.Filter)
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx),
		tea.WithInput(o.In), tea.WithOutput(o.Out))
	e.quitProgram = p.Quit
	e.trap.OnPanic = func() { go p.Quit() }
	_, err = p.Run()
	e.finish(o.Out)
	if perr := e.trap.Err(); perr != nil {
		return fmt.Errorf("tui: %w", perr)
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // interrupted from outside (SIGTERM): same as q
	}
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// finish ends the session: it stops the replays and checks still running
// and waits until what they sent is stored. It says so on out first: a
// handler that does not answer holds the copies in flight for a few seconds,
// and a terminal that stays blank after q looks hung.
func (e *env) finish(out io.Writer) {
	select {
	case <-e.done:
		return
	default:
	}
	close(e.done)
	if e.busy() {
		fmt.Fprintln(out, "hookreplay: stopping the replay or check that runs; storing what it sent…")
	}
	e.stopAll()
	e.runs.Wait()
}

// stopAll cancels every running replay and check.
func (e *env) stopAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.cancels {
		c()
	}
}

// start runs fn in a goroutine the TUI owns: its context ends when the
// returned function is called or the TUI quits, and quitting waits for fn to
// return (so what a run sent is stored before the process exits).
func (e *env) start(fn func(ctx context.Context)) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	e.mu.Lock()
	e.nextRun++
	id := e.nextRun
	e.cancels[id] = cancel
	e.mu.Unlock()
	e.runs.Add(1)
	go func() {
		defer e.runs.Done()
		defer func() {
			e.mu.Lock()
			delete(e.cancels, id)
			e.mu.Unlock()
			cancel()
		}()
		defer e.trap.Guard() // ends the session (guard.go)
		fn(ctx)
	}()
	return cancel
}

// busy reports whether a replay or check is running.
func (e *env) busy() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.cancels) > 0
}

// deliver hands msg to the view listening on ch, unless the TUI has ended.
func (e *env) deliver(ch chan<- tea.Msg, msg tea.Msg) {
	select {
	case ch <- msg:
	case <-e.done:
	}
}

// listen waits for the next message on ch (nil once the TUI has ended).
func listen(e *env, ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		select {
		case msg := <-ch:
			return msg
		case <-e.done:
			return nil
		}
	}
}
