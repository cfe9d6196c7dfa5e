package tui

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestEditThenReplay: E edits a copy of a delivery — its body in $EDITOR, a
// header's value in place — and r stores it as a new delivery derived from
// the original and replays it at once, re-signed with the TUI's secret.
func TestEditThenReplay(t *testing.T) {
	got := make(chan *message.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		req := &message.Request{Method: r.Method, Target: r.URL.RequestURI(), Body: b.Bytes()}
		for name, vs := range r.Header {
			for _, v := range vs {
				req.Headers = append(req.Headers, message.Header{Name: name, Value: v})
			}
		}
		got <- req
	}))
	defer srv.Close()
	// The editor: sed changes the customer's address in the body.
	t.Setenv("VISUAL", "sed -i s/ada@example.com/eve@example.com/")
	st := fixtureStore(t)
	h := newHarness(t, st, 100, 30)
	h.env.exec = func(c *exec.Cmd, done func(error) tea.Msg) tea.Cmd {
		return func() tea.Msg { return done(c.Run()) }
	}
	const secret = "whsec_edit_test"
	h.env.secret = secret
	h.env.defaultTarget = srv.URL + "/hooks"
	h.keys("G", "E", "j", "e")
	h.contains("edit a copy of delivery 1", "> body", "changed: editor: body 159→159 bytes")
	for range 5 {
		h.keys("j")
	}
	h.contains("> x-duplicate: one")
	h.keys("enter", "ctrl+u")
	h.typeText("three q") // q is text here
	h.keys("enter")
	h.contains("x-duplicate: three q", "changed: ")
	h.keys("r")
	h.contains("summary 1 attempt, 1 reached the handler")
	var req *message.Request
	select {
	case req = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the edited copy never reached the handler")
	}
	if !bytes.Contains(req.Body, []byte("eve@example.com")) || req.Headers.Get("X-Duplicate") != "three q" {
		t.Fatalf("the handler got body %s, X-Duplicate %q", req.Body, req.Headers.Values("X-Duplicate"))
	}
	res, err := verify.Verify(req, "stripe", secret, verify.Options{Now: time.Now()})
	if err != nil || !res.Valid {
		t.Fatalf("the edited copy is not re-signed: %+v, %v", res, err)
	}
	d, err := st.GetDelivery(context.Background(), 7)
	if err != nil || d.DerivedFrom != 1 || !bytes.Contains(d.Body, []byte("eve@example.com")) {
		t.Fatalf("stored copy: %+v, %v", d, err)
	}
	// The stored copy's wire bytes are the edited request, framed anew.
	if _, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(d.Raw))); err != nil || !strings.Contains(string(d.Raw), "x-duplicate: three q\r\n") {
		t.Fatalf("stored raw %q: %v", d.Raw, err)
	}
	// r on the copy sends it where the original went (the copy's own run now).
	h.keys("esc", "esc", "g", "enter", "5")
	h.contains("edited from        delivery 1 (E)")
}
