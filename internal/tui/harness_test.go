package tui

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMain(m *testing.M) {
	time.Local = time.UTC // golden files show times in UTC
	os.Exit(m.Run())
}

// harness drives the root model the way Bubble Tea does, synchronously:
// every command a message returns is run and its message fed back.
type harness struct {
	t    *testing.T
	m    *model
	env  *env
	clip *bytes.Buffer
}

func fixtureStore(t *testing.T) *store.Store {
	t.Helper()
	return storeFrom(t, "testdata/deliveries.jsonl")
}

// storeFrom is a new store holding the deliveries of a JSONL fixture.
func storeFrom(t *testing.T, fixture string) *store.Store {
	t.Helper()
	return storeAt(t, filepath.Join(t.TempDir(), "hookreplay.db"), fixture)
}

func newHarness(t *testing.T, st *store.Store, w, h int) *harness {
	t.Helper()
	e := newEnv(Options{Store: st, DBPath: "hookreplay.db", Poll: -1, ExportDir: t.TempDir()}, renderer(&bytes.Buffer{}, true))
	e.now = func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) }
	clip := &bytes.Buffer{}
	e.clipboard = clip
	t.Cleanup(func() { e.finish(io.Discard) })
	hs := &harness{t: t, m: newModel(e), env: e, clip: clip}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init())
	return hs
}

func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("a command did not return within 10s")
	}
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
		h.m.quitting = true
	default:
		h.send(msg)
	}
}

// keys sends each key: names like "enter", "esc", "tab", "down", or text
// typed rune by rune.
func (h *harness) keys(ks ...string) {
	h.t.Helper()
	for _, k := range ks {
		h.send(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
		"down": tea.KeyDown, "up": tea.KeyUp, "pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp,
		"ctrl+c": tea.KeyCtrlC, "ctrl+a": tea.KeyCtrlA, "ctrl+u": tea.KeyCtrlU, "home": tea.KeyHome, "end": tea.KeyEnd, "backspace": tea.KeyBackspace,
	}
	if k == " " {
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	}
	if t, ok := named[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func (h *harness) view() string { return h.m.View() }

// golden compares the current view with testdata/NAME.golden (-update
// rewrites it).
func (h *harness) golden(name string) {
	h.t.Helper()
	got := h.view()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run go test ./internal/tui -update to create it)", err)
	}
	if got != string(want) {
		h.t.Errorf("view differs from %s (go test ./internal/tui -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func (h *harness) contains(subs ...string) {
	h.t.Helper()
	v := h.view()
	for _, s := range subs {
		if !strings.Contains(v, s) {
			h.t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
}
