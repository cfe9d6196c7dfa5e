package tui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// naiveHandler does its work on every delivery, duplicates included: the
// bug check's dups phase exists to catch. GET /count reads the work done.
func naiveHandler() *httptest.Server {
	var n atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprint(w, n.Load())
			return
		}
		io.Copy(io.Discard, r.Body)
		n.Add(1)
		io.WriteString(w, "ok")
	}))
}

// checkFunc is what cmd hands the TUI, reduced to what the test needs: the
// first and dups phases against srv with an HTTP probe.
func checkFunc(h *harness, srv *httptest.Server) CheckFunc {
	return func(ctx context.Context, ids []int64, obs check.Observer) (*report.Check, error) {
		u, _ := url.Parse(srv.URL + "/hooks")
		o := check.Options{Target: u, Probes: []probe.Probe{probe.NewHTTP(srv.URL + "/count")}, N: 3,
			Phases: []string{"first", "dups"}, Settle: 20 * time.Millisecond, SettleMax: 2 * time.Second,
			Store: h.env.st, Observer: obs}
		for _, id := range ids {
			d, err := h.env.st.GetDelivery(ctx, id)
			if err != nil {
				return nil, err
			}
			o.Deliveries = append(o.Deliveries, check.FromStore(d))
		}
		return check.Run(ctx, o)
	}
}

func TestCheckShowsPhasesAndReport(t *testing.T) {
	srv := naiveHandler()
	defer srv.Close()
	h := newHarness(t, fixtureStore(t), 100, 40)
	h.env.check = checkFunc(h, srv)
	h.keys("G", "c") // delivery 1
	h.contains("✗ dups", "duplicates did the work again", "FAIL  1 violation")
	h.keys("s")
	h.contains("saved the report as ")
	for _, ext := range []string{".md", ".xml", ".json", ".html"} {
		matches, _ := filepath.Glob(filepath.Join(h.env.exportDir, "hookreplay-check-*"+ext))
		if len(matches) != 1 {
			t.Errorf("no %s report saved: %v", ext, matches)
			continue
		}
		b, _ := os.ReadFile(matches[0])
		if !strings.Contains(string(b), "dups") {
			t.Errorf("%s report lacks the dups phase", ext)
		}
		if ext == ".html" && !strings.Contains(string(b), `<svg class="tl"`) {
			t.Errorf("the saved HTML report has no timeline")
		}
	}
	// The run is stored: the runs view lists it and re-renders its report.
	h.keys("R")
	h.contains("check", "✗ fail")
	h.keys("enter")
	h.contains("run 1  check", "✗ dups")
}

func TestCheckWithoutFlagsSaysHow(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 100, 30)
	h.env.checkSetup = "start hookreplay tui with check's flags"
	h.keys("c")
	h.contains("check is not set up", "start hookreplay tui with check's flags")
	h.keys("esc")
	h.contains("1/6 deliveries")
}

// TestCheckPhasesLive: the Observer's calls, as messages, build the phase
// list while the check runs.
func TestCheckPhasesLive(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.env.check = func(context.Context, []int64, check.Observer) (*report.Check, error) { return nil, nil }
	m := newCheck(h.env, []int64{1})
	m.running, m.started = true, h.env.now() // as Init leaves it, without starting a run
	m.SetSize(80, h.m.bodyHeight())
	h.m.views = append(h.m.views, m)
	first := &report.PhaseResult{Phase: "first", Status: report.Pass, Message: "answered 200; effect +1", Attempts: 1}
	for _, ev := range []any{
		check.PhaseStart{Phase: "first", DeliveryID: 1},
		store.Attempt{Status: 200},
		check.PhaseEnd{DeliveryID: 1, Result: first},
		check.PhaseStart{Phase: "dups", DeliveryID: 1},
		store.Attempt{Status: 200},
		check.Step{Phase: "dups", DeliveryID: 1, N: 2, Attempts: []store.Attempt{{Status: 200}}, Changed: true},
		check.PhaseEnd{DeliveryID: 1, Result: &report.PhaseResult{Phase: "tamper", Status: report.Skip, Message: "needs the signing secret"}},
		check.Note{Kind: check.NoteAdded, Text: "a fresh event id would break the signature"},
	} {
		m.Update(checkEventMsg{seq: m.seq, ev: ev})
	}
	h.golden("check_live")
}

// TestCheckStoppedByAnUnreachableHandler: a check that stops (nothing
// listens at --to) says so, and the phase it stopped in no longer shows a
// spinner as if it still ran.
func TestCheckStoppedByAnUnreachableHandler(t *testing.T) {
	srv, dead := naiveHandler(), naiveHandler()
	defer srv.Close()
	dead.Close() // nothing listens there any more
	h := newHarness(t, fixtureStore(t), 100, 30)
	h.env.check = func(ctx context.Context, ids []int64, obs check.Observer) (*report.Check, error) {
		u, _ := url.Parse(dead.URL + "/hooks") // the handler is dead, its probe answers
		d, err := h.env.st.GetDelivery(ctx, ids[0])
		if err != nil {
			return nil, err
		}
		_, err = check.Run(ctx, check.Options{Target: u, Probes: []probe.Probe{probe.NewHTTP(srv.URL + "/count")}, N: 3,
			Phases: []string{"first", "dups"}, Settle: 20 * time.Millisecond, SettleMax: 2 * time.Second,
			Store: h.env.st, Observer: obs, Deliveries: []check.Delivery{check.FromStore(d)}})
		return nil, err // stopped before a report, as when interrupted
	}
	h.keys("G", "c")
	h.contains("check of delivery 1 stopped", "■ first", "· stopped", "check stopped: ")
	if v := h.view(); strings.Contains(v, "checking delivery 1") {
		t.Errorf("a stopped check still says it is checking:\n%s", v)
	}
}

// TestCheckStoppedWithEsc: esc stops a running check; the view says so in
// its words, not as an error ("context canceled").
func TestCheckStoppedWithEsc(t *testing.T) {
	got := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		<-r.Context().Done()
	}))
	defer hang.Close()
	h := newHarness(t, fixtureStore(t), 100, 30)
	h.env.check = func(ctx context.Context, ids []int64, obs check.Observer) (*report.Check, error) {
		u, _ := url.Parse(hang.URL + "/hooks")
		d, err := h.env.st.GetDelivery(ctx, ids[0])
		if err != nil {
			return nil, err
		}
		_, err = check.Run(ctx, check.Options{Target: u, Probes: []probe.Probe{probe.NewHTTP(hang.URL + "/count")}, N: 3,
			Phases: []string{"first"}, Settle: 20 * time.Millisecond, SettleMax: 2 * time.Second,
			Store: h.env.st, Observer: obs, Deliveries: []check.Delivery{check.FromStore(d)}})
		if ctx.Err() != nil {
			return nil, context.Canceled // as cmd words an interrupted check
		}
		return nil, err
	}
	_, _ = h.m.Update(keyMsg("c")) // its commands would wait for the hanging check
	<-got
	_, stop := h.m.Update(keyMsg("esc"))
	h.run(stop)
	h.run(listen(h.env, h.m.top().(*checkModel).ch)) // the check's messages, to its end
	h.contains("check stopped with esc", "check stopped; what it sent is stored")
	if v := h.view(); strings.Contains(v, "context canceled") || strings.Contains(v, "error:") {
		t.Errorf("stopping with esc reads as an error:\n%s", v)
	}
}

// TestCheckForm: without check flags, c sets the check up in a form
// (validated by the config package's rules), runs it, remembers it for the
// database and, given a name, adds it to hookreplay.yaml.
func TestCheckForm(t *testing.T) {
	srv := naiveHandler()
	defer srv.Close()
	h := newHarness(t, fixtureStore(t), 100, 40)
	var got *config.Check
	h.env.newCheck = func(c *config.Check) (CheckFunc, error) {
		got = c
		return checkFunc(h, srv), nil
	}
	h.env.configPath = filepath.Join(t.TempDir(), "hookreplay.yaml")
	h.keys("G", "c") // delivery 1
	h.contains("> target URL", "probe kind       sql", "dsn (sql)", "save as check")
	h.keys("enter")
	h.contains("error: check form: target URL: where the handler listens")
	h.typeText(srv.URL + "/hooks")
	h.keys("tab", " ", " ") // sql → cmd → http
	h.contains("probe kind       http")
	if strings.Contains(h.view(), "dsn (sql)") {
		t.Error("the dsn field is shown for an http probe")
	}
	h.keys("tab")
	h.typeText("ftp://nope")
	h.keys("enter")
	h.contains("error: check form: probe http: http: ftp://nope")
	for range len("ftp://nope") {
		h.keys("backspace")
	}
	h.typeText(srv.URL + "/count")
	// ctrl+a keeps the probe and takes another (of any kind; a second
	// http one is named http2).
	h.keys("ctrl+a")
	h.contains("1 probe added", "probe http", "> probe  ")
	h.typeText(srv.URL + "/count?again")
	h.keys("tab", "tab") // secret env, phases (dsn is skipped: not shown)
	h.contains("> phases")
	h.typeText("first,dups")
	h.keys("tab", "tab", "tab")
	h.contains("> save as check")
	h.typeText("naive")
	h.keys("enter")
	h.contains("✗ dups")
	if got == nil || got.To != srv.URL+"/hooks" || len(got.Probes) != 2 || got.Probes[0].HTTP != srv.URL+"/count" ||
		got.Probes[1].Name != "http2" || got.Probes[1].HTTP != srv.URL+"/count?again" || strings.Join(got.Phases, ",") != "first,dups" {
		t.Fatalf("the form's check: %+v", got)
	}
	f, err := config.Load(h.env.configPath, nil)
	if err != nil || len(f.Checks) != 1 || f.Checks[0].Name != "naive" || strings.Join(f.Checks[0].Deliveries.EventIDs, ",") != "evt_1QjsonlA" {
		t.Fatalf("saved config: %+v, %v", f, err)
	}
	// The next c in this database opens the form as it was left.
	h.keys("esc", "k", "c")
	h.contains("check delivery 2", srv.URL+"/count", "first,dups")
}

// TestCheckFormRememberedWhenTheCheckCannotStart: a form whose check
// cannot start (the TUI was started without the secret's variable) is
// opened as it was left by the next c, so quitting to set the variable
// does not lose it (it was remembered only when the check ran).
func TestCheckFormRememberedWhenTheCheckCannotStart(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 100, 40)
	h.env.newCheck = func(c *config.Check) (CheckFunc, error) {
		return nil, fmt.Errorf("secret_env STRIPE_WEBHOOK_SECRET: the environment variable is not set or empty")
	}
	h.keys("G", "c")
	h.typeText("http://127.0.0.1:3000/webhooks/stripe")
	h.keys("tab", "tab")
	h.typeText("SELECT COALESCE(SUM(balance), 0) FROM wallets")
	h.keys("tab")
	h.typeText("sqlite:w.db")
	h.keys("tab")
	h.typeText("STRIPE_WEBHOOK_SECRET")
	h.keys("enter")
	h.contains("error: check form: secret_env STRIPE_WEBHOOK_SECRET: the environment variable is not set")
	h.keys("esc", "c")
	h.contains("http://127.0.0.1:3000/webhooks/stripe", "SUM(balance)", "sqlite:w.db", "STRIPE_WEBHOOK_SECRET")
}

// TestCheckPartialReport: a check that stops part way (max time, a setup
// error after some phases) shows the report of what it judged, then why it
// stopped, not only the error.
func TestCheckPartialReport(t *testing.T) {
	srv := naiveHandler()
	defer srv.Close()
	h := newHarness(t, fixtureStore(t), 100, 40)
	full := checkFunc(h, srv)
	h.env.check = func(ctx context.Context, ids []int64, obs check.Observer) (*report.Check, error) {
		c, err := full(ctx, ids, obs)
		if err != nil {
			return nil, err
		}
		return c, fmt.Errorf("the check ran longer than --max-time 1s and was stopped; the reports hold what was judged until then")
	}
	h.keys("G", "c")
	h.contains("✗ dups", "duplicates did the work again", "check stopped: the check ran longer than --max-time 1s")
}

// TestCheckTimelineOpensACopy: a finished check shows its timelines under
// the report, the violating copies marked; tab selects a copy (the view
// follows it), enter opens its attempt; the run view of the stored run
// does the same.
func TestCheckTimelineOpensACopy(t *testing.T) {
	srv := naiveHandler()
	defer srv.Close()
	h := newHarness(t, fixtureStore(t), 100, 40)
	h.env.check = checkFunc(h, srv)
	h.keys("G", "c")
	h.contains("✗ dups", "tab select copy", "enter open copy")
	h.keys("tab")
	h.contains("timeline", "first", "▶ copy 1", "settle")
	h.keys("tab")
	h.contains("✗ copy 2 (same event id", "▶ copy 2  ✗", "+1 by copy 2 ✗ extra")
	h.keys("enter")
	h.contains("attempt 2 · dups copy 2 · delivery 1", "answer     200", "answer body (2 bytes)", "ok")
	h.keys("esc")
	h.contains("▶ copy 2  ✗")
	h.keys("esc", "R", "enter")
	h.contains("run 1  check")
	h.keys("shift+tab")
	h.contains("▶ copy 3 ", "+1 by copy 3 ✗ extra")
	h.keys("enter")
	h.contains("attempt 3 · dups copy 3")
}
