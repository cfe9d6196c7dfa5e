package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/store"
)

// Messages views exchange with the root model. Store I/O happens only inside
// the tea.Cmds below; each returns one of these typed messages.

// statusMsg sets the status bar: a note, or an error (shown in red until the
// next note). The TUI stays usable after an error.
type statusMsg struct {
	text string
	err  error
}

func status(format string) tea.Cmd {
	return func() tea.Msg { return statusMsg{text: format} }
}

func failed(err error) tea.Cmd {
	return func() tea.Msg { return statusMsg{err: err} }
}

// pollMsg asks the root to look whether the database changed.
type pollMsg struct{}

// versionMsg is the database's data version after a poll.
type versionMsg struct {
	v   int64
	err error
}

// changedMsg tells every view the store changed (a capture in another process,
// a replay's attempts, a delete): reload what is shown, keep the selection.
type changedMsg struct{}

// quietMsg tells every view the store did not change during a watch (at most
// watchSpan): a view can do then what it put off while changes came.
type quietMsg struct{}

// openDeliveryMsg asks the root to show delivery id.
type openDeliveryMsg struct{ id int64 }

// backMsg asks the root to close the top view.
type backMsg struct{}

// openRunsMsg asks the root to show the runs view.
type openRunsMsg struct{}

// openRunMsg asks the root to show one run.
type openRunMsg struct{ id int64 }

func tick(d time.Duration) tea.Cmd {
	if d <= 0 {
		return nil
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return pollMsg{} })
}

func readVersion(w *store.Watcher) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := w.Version(ctx)
		return versionMsg{v: v, err: err}
	}
}

// watchSpan bounds one wait for a change: past it the version is read as
// it stands, so that a watcher that lost its connection is shown (and its
// return shown too) within that long.
const watchSpan = 2 * time.Second

// waitChange reports the store's version once it differs from since: a
// delivery captured, a run recorded or a row deleted by this process or any
// other. On Postgres the watcher's LISTEN wakes it when the change commits
// (no polling); on SQLite the watcher reads data_version every 100 ms. It
// gives up quietly when the session ends.
func (e *env) waitChange(w *store.Watcher, since int64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), watchSpan)
		defer cancel()
		go func() {
			select {
			case <-e.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		v, err := w.Wait(ctx, since)
		if err == nil {
			return versionMsg{v: v}
		}
		select {
		case <-e.done:
			return nil
		default:
		}
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		v, err = w.Version(rctx)
		return versionMsg{v: v, err: err}
	}
}

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// nav asks the root to open or close a view as soon as the current message
// is handled, not through a command: the next key then lands in the view it
// was typed for, however fast it follows.
func (e *env) nav(msg tea.Msg) tea.Cmd {
	e.navs = append(e.navs, msg)
	return nil
}
