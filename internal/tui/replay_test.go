package tui

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

func TestReplayFromTheKeyboard(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if hits.Add(1) > 1 {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error":"duplicate"}`)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	st := fixtureStore(t)
	h := newHarness(t, st, 100, 30)
	h.keys("G", "r") // delivery 1
	h.golden("replay_form")
	h.typeText(strings.TrimPrefix(srv.URL, "http://127.0.0.1:") + "/hooks") // a bare port, as --to takes
	h.keys("tab", "backspace")
	h.typeText("3")
	h.keys("tab", " ") // order: burst
	h.contains("burst")
	h.keys("shift+tab", "shift+tab")
	h.keys("enter")
	h.contains("copy 1", "copy 3", "409", "summary 3 attempts, 3 reached the handler", "recorded as run 1")
	if n := hits.Load(); n != 3 {
		t.Fatalf("handler got %d requests, want 3", n)
	}
	as, err := st.DeliveryAttempts(context.Background(), 1, 0)
	if err != nil || len(as) != 3 {
		t.Fatalf("stored attempts %d, %v", len(as), err)
	}
	// Back on the list, the delivery view shows the new attempts.
	h.keys("esc", "enter", "6")
	h.contains("6 attempts (3)", "replay", "409")
	// r replays it again at once, to where it was sent last; o is the form.
	h.keys("r")
	h.contains("summary 1 attempt, 1 reached the handler", "recorded as run 2")
	if n := hits.Load(); n != 4 {
		t.Fatalf("handler got %d requests after r, want 4", n)
	}
	h.keys("esc")
	// A bad form value is an error in the status bar, not a run.
	h.keys("o")
	h.keys("tab", "backspace")
	h.typeText("0")
	h.keys("enter")
	h.contains("error: copies \"0\": want a number from 1 to 100000")
	if !strings.Contains(h.view(), "target URL") {
		t.Fatal("the form closed after an error")
	}
}

// TestReplayNobodyListening: a replay no copy of which reached the handler
// says what to do, as replay on the command line does (the summary read
// "connect: connection refused" and the status bar "replay recorded").
func TestReplayNobodyListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/hooks"
	l.Close()
	h := newHarness(t, fixtureStore(t), 100, 30)
	h.keys("G", "r")
	h.typeText(dead)
	h.keys("enter")
	h.contains("connection refused", "error: is the handler running? no copy reached "+dead+" (o replays elsewhere)")
}

// TestQuitWhileReplaying: quitting while a copy waits for a handler that
// does not answer says what the wait is for, and returns once the run is
// stored as interrupted.
func TestQuitWhileReplaying(t *testing.T) {
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	st := fixtureStore(t)
	h := newHarness(t, st, 100, 30)
	h.keys("G", "r")
	h.typeText(srv.URL + "/hooks")
	_, _ = h.m.Update(keyMsg("enter")) // its listening command would wait for the answer
	<-got
	_, _ = h.m.Update(keyMsg("q"))
	if !h.m.quitting {
		t.Fatal("q did not quit while replaying")
	}
	var out bytes.Buffer
	h.env.finish(&out)
	if !strings.Contains(out.String(), "stopping the replay or check that runs; storing what it sent") {
		t.Errorf("quitting during a replay said %q", out.String())
	}
	runs, err := st.ListRuns(context.Background(), "replay", 1)
	if err != nil || len(runs) != 1 || runs[0].Verdict != "interrupted" {
		t.Fatalf("runs after quitting: %+v, %v", runs, err)
	}
}

// TestReplayFormAt80Columns: the form's hints wrap instead of being cut,
// and the target is the last run's, a check's too.
func TestReplayFormAt80Columns(t *testing.T) {
	st := fixtureStore(t)
	run := &store.Run{Kind: "check", StartedAt: time.Now(), Target: "http://127.0.0.1:3000/webhooks/stripe"}
	if err := st.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 80, 24)
	h.keys("r")
	h.contains("> target URL           http://127.0.0.1:3000/webhooks/stripe", "attempt is stored as a run", "re-sign them")
}

// TestQuickReplayTargets: r replays at once under capture --tui --forward to
// where capture forwards the delivery (base URL + its path), and in tui to
// --to when the delivery was never sent anywhere.
func TestQuickReplayTargets(t *testing.T) {
	paths := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		paths <- r.URL.RequestURI()
	}))
	defer srv.Close()
	h := newHarness(t, fixtureStore(t), 100, 30)
	u, _ := url.Parse(srv.URL + "/base")
	h.env.forward = u
	h.keys("G", "r") // delivery 1: POST /hooks/stripe?src=cli
	h.contains("summary 1 attempt, 1 reached the handler")
	if p := <-paths; p != "/base/hooks/stripe?src=cli" {
		t.Errorf("r under --forward sent to %s, want /base/hooks/stripe?src=cli", p)
	}
	h = newHarness(t, fixtureStore(t), 100, 30)
	h.env.defaultTarget = srv.URL + "/to"
	h.keys("r")
	h.contains("summary 1 attempt, 1 reached the handler")
	if p := <-paths; p != "/to" {
		t.Errorf("r with --to sent to %s, want /to", p)
	}
}

// TestReplayFormSkipsKeycheckRuns: a keycheck's target is an API, not a
// webhook handler, so the form offers the last check's instead.
func TestReplayFormSkipsKeycheckRuns(t *testing.T) {
	st := fixtureStore(t)
	for _, r := range []*store.Run{
		{Kind: "check", StartedAt: time.Now(), Target: "http://127.0.0.1:3000/webhooks/stripe"},
		{Kind: "keycheck", StartedAt: time.Now(), Target: "http://127.0.0.1:8080/v1/messages"},
	} {
		if err := st.CreateRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, st, 80, 24)
	h.keys("r")
	h.contains("> target URL           http://127.0.0.1:3000/webhooks/stripe")
}

// TestRunViewShowsAKeycheckReport: a keycheck run opened from the runs
// view shows its report, re-rendered from the stored summary.
func TestRunViewShowsAKeycheckReport(t *testing.T) {
	st := fixtureStore(t)
	ctx := context.Background()
	run := &store.Run{Kind: "keycheck", StartedAt: time.Now(), Target: "http://127.0.0.1:8080/v1/messages"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	a := &store.Attempt{RunID: run.ID, Phase: "burst", Copy: 1, Status: 201, SentAt: run.StartedAt}
	if err := st.InsertAttempt(ctx, a); err != nil {
		t.Fatal(err)
	}
	k := report.KeyCheck{Kind: "keycheck", Method: "POST", Target: run.Target, Profile: "bird", Verdict: "fail",
		Checks: []report.KeyCheckResult{{Name: "burst", Status: report.Fail, Observed: "201 ×2", Why: "the claim is not atomic (check-then-insert)"}}}
	if err := st.FinishRun(ctx, run.ID, time.Now(), "fail", k); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 120, 40)
	h.keys("R", "enter")
	h.contains("keycheck POST http://127.0.0.1:8080/v1/messages", "the claim is not atomic (check-then-insert)")
}
