package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// panicView is a view whose View panics (a bug in drawing one).
type panicView struct{}

func (panicView) Init() tea.Cmd          { return nil }
func (panicView) Update(tea.Msg) tea.Cmd { return nil }
func (panicView) View() string           { var m map[string]int; m["x"]++; return "" }
func (panicView) SetSize(int, int)       {}
func (panicView) Title() string          { return "panic" }
func (panicView) Status() string         { return "" }
func (panicView) Keys() []key.Binding    { return nil }
func (panicView) Capturing() bool        { return false }

// A panic in a command's goroutine, in a replay or check the TUI started
// (a goroutine of its own) or in drawing ended the process with Bubble
// Tea's stack dump, or none at all with the terminal left raw. Each is now
// held, the program quits as with q, and Run returns the panic, which main
// words as one line (internal error, exit 2).
func TestTUIPanicsEndTheSession(t *testing.T) {
	t.Setenv("HOOKREPLAY_TRACEBACK", "")
	t.Run("command", func(t *testing.T) {
		h := newHarness(t, fixtureStore(t), 100, 30)
		h.run(h.env.guard(tea.Batch(nil, func() tea.Msg { panic("a store read") })))
		if !h.m.quitting || h.env.trap.Err() == nil || !strings.Contains(h.env.trap.Err().Error(), "panic: a store read") {
			t.Fatalf("quitting %v, err %v", h.m.quitting, h.env.trap.Err())
		}
	})
	t.Run("run", func(t *testing.T) {
		h := newHarness(t, fixtureStore(t), 100, 30)
		quit := make(chan struct{})
		h.env.trap.OnPanic = func() { close(quit) }
		h.env.start(func(context.Context) { panic("a check's bug") })
		<-quit
		h.env.runs.Wait()
		if err := h.env.trap.Err(); err == nil || !strings.Contains(err.Error(), "panic: a check's bug") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("view", func(t *testing.T) {
		h := newHarness(t, fixtureStore(t), 100, 30)
		quit := make(chan struct{})
		h.env.quitProgram = func() { close(quit) }
		h.run(h.m.push(panicView{}))
		if s := h.m.View(); s != "" {
			t.Fatalf("view after a panic: %q", s)
		}
		<-quit
		if err := h.env.trap.Err(); err == nil || !strings.Contains(err.Error(), "assignment to entry in nil map") {
			t.Fatalf("err %v", err)
		}
	})
}
