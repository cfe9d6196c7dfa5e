package tui

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/hookreplay/hookreplay/internal/exchange"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

func TestDeliveriesView(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.golden("deliveries_80x24")
	h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	h.golden("deliveries_120x30")
	h.keys("j", "j")
	h.contains("3/6 deliveries", "> 4 ")
	h.keys("G")
	h.contains("6/6 deliveries", "> 1 ")
	h.keys("g")
	h.contains("1/6 deliveries", "> 6 ")
}

func TestDeliveryTabs(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.keys("G", "enter") // delivery 1, stripe
	h.golden("delivery_headers")
	for _, tab := range []string{"body", "raw", "response", "signature", "attempts"} {
		h.keys("tab")
		h.golden("delivery_" + tab)
	}
	h.keys("esc")
	h.contains("6/6 deliveries")
}

// The attempts tab classifies attempts as 'runs show' does: an answer by
// its status, no answer ERR, an answer lost on purpose lost.
func TestDeliveryAttemptsOutcomes(t *testing.T) {
	st := fixtureStore(t)
	ctx := context.Background()
	run := &store.Run{Kind: "replay", StartedAt: time.Now(), Target: "http://127.0.0.1:1/h"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	for _, a := range []*store.Attempt{
		{Copy: 1, Status: 200},
		{Copy: 2, Err: "connect: connection refused"},
		{Copy: 3, Lost: true},
	} {
		a.RunID, a.DeliveryID, a.Phase, a.SentAt = run.ID, 1, "replay", sent
		if err := st.InsertAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, st, 100, 24)
	h.keys("G", "enter", "6")
	h.contains("attempts (3)", "ERR", "connect: connection refused", "lost", "answer lost on purpose", "200")
}

func TestDeliveryBodies(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.keys("j", "enter", "2") // delivery 5: binary body
	h.contains("256 bytes of application/octet-stream, as hex:", "00000000  00 01 02 03")
	h.keys("esc", "g", "enter", "2") // delivery 6: twilio form
	h.contains("form fields (decoded):", "Body = Hello 👋 world")
	h.keys("esc", "j", "j", "enter", "3") // delivery 4: terminal escapes stay escaped
	v := h.view()
	if strings.Contains(v, "\x1b") {
		t.Errorf("raw view lets an escape byte through:\n%q", v)
	}
	h.contains(`\x1b`)
}

func TestFilter(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.keys("/")
	h.typeText("provider:stripe")
	h.golden("deliveries_filtering")
	h.keys("enter")
	h.contains("1/2 deliveries matching provider:stripe", "filter: provider:stripe")
	h.keys("/", "ctrl+u")
	h.typeText("type:push")
	h.keys("enter")
	h.contains("1/1 deliveries matching type:push", "> 2 ")
	h.keys("/", "ctrl+u")
	h.typeText("ada@example")
	h.keys("enter")
	h.contains("1/1 deliveries matching ada@example", "> 1 ")
	// mitmproxy's ~c and ~h: the twilio delivery was answered 502; the
	// github one carries X-GitHub-Event: push (the name in any case).
	h.keys("/", "ctrl+u")
	h.typeText("status:5xx")
	h.keys("enter")
	h.contains("1/1 deliveries matching status:5xx", "> 6 ")
	h.keys("/", "ctrl+u")
	h.typeText("status:200 header:x-github-event=push")
	h.keys("enter")
	h.contains("1/1 deliveries matching status:200 header:x-github-event=push", "> 2 ")
	h.keys("/", "ctrl+u")
	h.typeText("header:x-github-event=pull_request")
	h.keys("enter")
	h.contains("no delivery matches header:x-github-event=pull_request")
	h.keys("/", "ctrl+u")
	h.typeText("since:nonsense")
	h.keys("enter")
	h.contains("error: filter: since:")
	h.keys("esc", "esc")
	h.contains("1/6 deliveries")
}

// TestCoalescedKeys: keys read together ("/" and the filter typed fast)
// act one by one.
func TestCoalescedKeys(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/provider:github")})
	h.keys("enter")
	h.contains("1/1 deliveries matching provider:github")
	// A key that opens a view: the runes after it land in that view.
	h.keys("esc")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("o8080")})
	h.contains("> target URL           8080")
}

func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		q    string
		want store.Filter
		err  string
	}{
		{q: "provider:Stripe type:'invoice.*'", want: store.Filter{Provider: "stripe", TypeGlob: "invoice.*"}},
		{q: "--provider github --event-id=abc", want: store.Filter{Provider: "github", EventID: "abc"}},
		{q: "since:2h cus_1 paid", want: store.Filter{Since: now.Add(-2 * time.Hour), Text: "cus_1 paid"}},
		{q: `"a:b c"`, want: store.Filter{Text: "a:b c"}},
		{q: "source:Staging-1 provider:stripe", want: store.Filter{Source: "Staging-1", Provider: "stripe"}},
		{q: "--source=ci source", want: store.Filter{Source: "ci", Text: "source"}},
		{q: "status:5xx header:X-GitHub-Event=push h:x-hub-signature", want: store.Filter{Status: &store.StatusRange{Min: 500, Max: 599},
			Headers: []store.HeaderMatch{{Name: "X-GitHub-Event", Value: "push"}, {Name: "x-hub-signature", AnyValue: true}}}},
		{q: "status:502", want: store.Filter{Status: &store.StatusRange{Min: 502, Max: 502}}},
		{q: "status:none", want: store.Filter{Status: &store.StatusRange{}}},
		{q: "status:6xx", err: "want a class"},
		{q: "header:=x", err: "want header:name=value"},
		{q: "type:[x", err: "malformed glob"},
		{q: "--colour red", err: "unknown filter --colour"},
	} {
		got, err := parseFilter(tc.q, now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.q, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, %v; want %+v", tc.q, got, err, tc.want)
		}
	}
}

// TestLiveDeliveries: a delivery another connection commits appears on the
// next poll, and the cursor on the newest row follows it.
func TestLiveDeliveries(t *testing.T) {
	st := fixtureStore(t)
	h := newHarness(t, st, 80, 24)
	w, err := st.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	h.env.watcher = w
	h.send(pollMsg{})
	d := &store.Delivery{Method: "POST", Target: "/late", Provider: "stripe", EventType: "charge.refunded", EventID: "evt_live",
		Raw: []byte("POST /late HTTP/1.1\r\n\r\n"), ReceivedAt: time.Date(2026, 12, 3, 8, 59, 0, 0, time.UTC)}
	other, err := store.Open(context.Background(), st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	h.send(pollMsg{})
	h.contains("> 7 ", "charge.refunded", "1/7 deliveries")
	// Away from the top the selection stays put while rows arrive above it.
	h.keys("j")
	h.contains("> 6 ")
	d2 := *d
	d2.ID = 0
	if err := other.InsertDelivery(context.Background(), &d2); err != nil {
		t.Fatal(err)
	}
	h.send(pollMsg{})
	h.contains("> 6 ", "3/8 deliveries")
}

// largeStore is a store of n small stripe deliveries, evt_0001 the oldest.
func largeStore(t *testing.T, n int) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "big.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ds := make([]*store.Delivery, n)
	for i := range ds {
		ds[i] = &store.Delivery{Method: "POST", Target: "/h", Provider: "stripe", EventType: "invoice.paid",
			EventID: fmt.Sprintf("evt_%04d", i+1), Raw: []byte("x"), Body: []byte(`{}`),
			ReceivedAt: time.Date(2026, 12, 1, 0, 0, i, 0, time.UTC)}
	}
	if err := st.ImportDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestPagingLargeStore(t *testing.T) {
	const n = 1000
	h := newHarness(t, largeStore(t, n), 80, 24)
	if got := len(h.m.views[0].(*deliveriesModel).rows); got > pageSize {
		t.Fatalf("loaded %d rows at start, want at most %d", got, pageSize)
	}
	for range 30 {
		h.keys("pgdown")
	}
	h.contains(fmt.Sprintf("%d/%d deliveries", 30*19+1, n), fmt.Sprintf("> %d ", n-30*19))
	h.keys("G")
	h.contains(fmt.Sprintf("%d/%d deliveries", n, n), "> 1 ")
	for range 3 {
		h.keys("pgup")
	}
	h.contains(fmt.Sprintf("%d/%d deliveries", n-3*19, n))
	h.keys("g")
	h.contains(fmt.Sprintf("1/%d deliveries", n), fmt.Sprintf("> %d ", n))
}

// TestKeysFasterThanWindowsLoad: moves typed while the next window is
// still loading all count (pgdn held down, keys queued over ssh); they used
// to stop at the end of the loaded rows.
func TestKeysFasterThanWindowsLoad(t *testing.T) {
	const n = 1000
	h := newHarness(t, largeStore(t, n), 80, 24)
	press := func(k string, times int, then ...string) {
		var cmds []tea.Cmd
		for _, k := range append(slices.Repeat([]string{k}, times), then...) {
			_, cmd := h.m.Update(keyMsg(k)) // the loads are not run in between
			cmds = append(cmds, cmd)
		}
		for _, c := range cmds {
			h.run(c)
		}
	}
	press("pgdown", 20)
	h.contains(fmt.Sprintf("%d/%d deliveries", 20*19+1, n), fmt.Sprintf("> %d ", n-20*19))
	press("k", 150)
	h.contains(fmt.Sprintf("%d/%d deliveries", 20*19+1-150, n), fmt.Sprintf("> %d ", n-20*19+150))
	press("pgdown", 100) // past the end: stops on the oldest
	h.contains(fmt.Sprintf("%d/%d deliveries", n, n), "> 1 ")
	h.keys("g")
	press("pgdown", 30, "g") // a jump drops what was pending
	h.contains(fmt.Sprintf("1/%d deliveries", n), fmt.Sprintf("> %d ", n))
	// Moves typed after a jump count from where it lands.
	h.keys("G")
	press("g", 1, slices.Repeat([]string{"pgdown"}, 10)...)
	h.contains(fmt.Sprintf("%d/%d deliveries", 10*19+1, n))
	press("G", 1, "pgup", "pgup")
	h.contains(fmt.Sprintf("%d/%d deliveries", n-2*19, n))
}

func TestDeleteWithConfirmation(t *testing.T) {
	st := fixtureStore(t)
	h := newHarness(t, st, 80, 24)
	h.keys("d")
	h.contains("delete delivery 6? y/n")
	h.keys("n")
	h.contains("nothing deleted")
	h.keys("m", "m", "d")
	h.contains("delete 2 deliveries (5, 6)? y/n")
	h.keys("y")
	h.contains("deleted 2 deliveries")
	h.keys("k")
	h.contains("1/4 deliveries", "> 4 ")
	if n, _ := st.CountDeliveries(context.Background(), store.Filter{}); n != 4 {
		t.Fatalf("%d deliveries left, want 4", n)
	}
}

func TestCopyAndExport(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// Someone else's link at the name the file used to have: y must not
	// write through it.
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(tmp, "hookreplay-curl-1.sh")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, fixtureStore(t), 120, 30)
	h.keys("G", "y")
	h.contains("copy delivery 1 as: y curl · b body · h headers")
	h.keys("y")
	if !strings.HasPrefix(h.clip.String(), "\x1b]52;c;") {
		t.Errorf("no OSC 52 sequence written: %q", h.clip.String())
	}
	h.contains("copied delivery 1 as curl via OSC 52")
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Fatalf("y wrote through a planted link: %q", b)
	}
	files, _ := filepath.Glob(filepath.Join(tmp, "hookreplay-curl-*", "delivery-1.sh"))
	if len(files) != 1 {
		t.Fatalf("y wrote %v, want one file in a private directory", files)
	}
	for path, want := range map[string]os.FileMode{files[0]: 0o600, filepath.Dir(files[0]): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", path, fi.Mode(), want, err)
		}
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"${HOOKREPLAY_TO:-http://127.0.0.1:8080}"'/hooks/stripe?src=cli'`, "-H 'Stripe-Signature: t=", `"customer_email":"ada@example.com"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("curl command lacks %q:\n%s", want, b)
		}
	}
	// One curl writer: the copied command is the one 'export --format curl' writes.
	d, err := h.env.st.GetDelivery(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var exported bytes.Buffer
	if err := exchange.Write(&exported, exchange.Curl, exchange.Slice([]*store.Delivery{d}), exchange.WriteOptions{Count: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exported.String(), string(b)) {
		t.Errorf("the copied command is not the exported one:\n%s\nexported:\n%s", b, exported.String())
	}
	// y b copies the body alone, y h the headers alone, each to OSC 52 and
	// a file; any other key cancels.
	for _, tc := range []struct {
		key, ext, status string
		want             []byte
	}{
		{"b", ".body", "copied delivery 1's body (159 bytes)", d.Body},
		{"h", ".headers", "copied delivery 1's headers (7 headers)", []byte("Host: 127.0.0.1:8080\r\n")},
	} {
		h.clip.Reset()
		h.keys("y", tc.key)
		h.contains(tc.status)
		files, _ := filepath.Glob(filepath.Join(tmp, "hookreplay-curl-*", "delivery-1"+tc.ext))
		if len(files) != 1 {
			t.Fatalf("y %s wrote %v", tc.key, files)
		}
		b, _ := os.ReadFile(files[0])
		want := tc.want
		if tc.key == "h" {
			var hs bytes.Buffer
			for _, hd := range d.Headers {
				hs.WriteString(hd.Name + ": " + hd.Value + "\n")
			}
			want = hs.Bytes()
		}
		if !bytes.Equal(b, want) {
			t.Errorf("y %s wrote %q, want %q", tc.key, b, want)
		}
		if got := h.clip.String(); got != "\x1b]52;c;"+base64.StdEncoding.EncodeToString(want)+"\x07" {
			t.Errorf("y %s put %q on the clipboard", tc.key, got)
		}
	}
	h.keys("y", "x")
	h.contains("nothing copied")
	h.keys("e")
	h.contains("exported 1 delivery to ")
	files, _ = filepath.Glob(filepath.Join(h.env.exportDir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("export wrote %v", files)
	}
	f, _ := os.Open(files[0])
	defer f.Close()
	ds, err := store.ReadJSONL(f)
	if err != nil || len(ds) != 1 || ds[0].EventID != "evt_1QjsonlA" {
		t.Fatalf("exported %v, %v", ds, err)
	}
}

func TestHelpAndQuit(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.keys("?")
	h.golden("help")
	h.keys("x")
	h.contains("1/6 deliveries")
	h.keys("?", "q")
	if h.m.quitting {
		t.Fatal("q closing the help quit")
	}
	h.keys("q")
	if !h.m.quitting {
		t.Fatal("q did not quit")
	}
	h = newHarness(t, fixtureStore(t), 80, 24)
	h.keys("/", "q")
	if h.m.quitting {
		t.Fatal("q while typing a filter quit")
	}
	h.keys("ctrl+c")
	if !h.m.quitting {
		t.Fatal("ctrl+c did not quit")
	}
}

func TestStoreErrorShowsInStatusBar(t *testing.T) {
	st := fixtureStore(t)
	h := newHarness(t, st, 80, 24)
	st.Close()
	h.keys("enter")
	h.contains("error: ")
	h.keys("esc")
	h.contains("hookreplay · deliveries")
}

func TestResizeAndTinyWindows(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	for _, sz := range [][2]int{{20, 5}, {1, 1}, {200, 60}, {80, 24}} {
		h.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		v := h.view()
		if got := strings.Count(v, "\n") + 1; sz[1] >= 4 && got != sz[1] {
			t.Errorf("%dx%d: view has %d lines", sz[0], sz[1], got)
		}
		h.keys("enter", "3", "esc", "?", "x")
	}
	h.golden("deliveries_80x24")
}

func TestMouseWheelScrolls(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	h.send(tea.MouseMsg{Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	h.contains("4/6 deliveries")
	h.send(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress})
	h.contains("1/6 deliveries")
}

// TestColour: styles paint when colour is on and nothing when it is off
// (NO_COLOR, --no-color), so sender text and layout are all that differ.
func TestColour(t *testing.T) {
	st := fixtureStore(t)
	plain := newHarness(t, st, 100, 30)
	coloured := newHarness(t, st, 100, 30)
	r := renderer(&bytes.Buffer{}, false)
	r.SetColorProfile(termenv.ANSI)
	coloured.env.styles = NewStyles(r)
	coloured.m = newModel(coloured.env)
	coloured.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	coloured.run(coloured.m.Init())
	for _, h := range []*harness{plain, coloured} {
		h.keys("G", "enter", "2")
	}
	if strings.Contains(plain.view(), "\x1b[") {
		t.Errorf("colour off, yet escape codes:\n%q", plain.view())
	}
	if !strings.Contains(coloured.view(), "\x1b[") {
		t.Errorf("colour on, yet no escape codes:\n%s", coloured.view())
	}
	if got, want := ansi.Strip(coloured.view()), plain.view(); got != want {
		t.Errorf("coloured and plain views differ in text:\n%s\n---\n%s", got, want)
	}
}

// TestKeysAfterEnterLandInTheNewView: a view opened by a key is there for
// the very next key (no command round trip in between).
func TestKeysAfterEnterLandInTheNewView(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	_, _ = h.m.Update(keyMsg("enter")) // its commands (the load) are not run yet
	_, _ = h.m.Update(keyMsg("3"))
	if d, ok := h.m.top().(*deliveryModel); !ok || d.tab != tabRaw {
		t.Fatalf("the key after enter did not reach the delivery view: %T", h.m.top())
	}
}

// TestSignatureWithSecret: given the secret, the signature tab verifies the
// stored request now, judged at the time it was received.
func TestSignatureWithSecret(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 100, 30)
	h.env.secret = "whsec_not_the_one"
	h.keys("G", "enter", "5")
	h.contains("with tui --secret", "invalid: signature mismatch: it was signed with another secret")
}

// TestStartFiltered: tui's --provider and friends start the view filtered,
// and the filter can be edited with /.
func TestStartFiltered(t *testing.T) {
	st := fixtureStore(t)
	e := newEnv(Options{Store: st, DBPath: "hookreplay.db", Poll: -1}, renderer(&bytes.Buffer{}, true))
	h := &harness{t: t, m: newModel(e), env: e}
	t.Cleanup(func() { close(e.done) })
	f, err := parseFilter("provider:github", e.now())
	if err != nil {
		t.Fatal(err)
	}
	h.m.views[0].(*deliveriesModel).setFilter(f, "provider:github")
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.run(h.m.Init())
	h.contains("1/1 deliveries matching provider:github", "> 2 ")
	h.keys("/")
	h.contains("/provider:github")
}

// TestEmptyStore: the first screen of an empty store says, whole, how to get
// deliveries, at 80 columns too; under capture --tui it says where they are
// captured, and keeps saying it in the status bar after the first key.
func TestEmptyStore(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := newHarness(t, st, 80, 24)
	h.contains("no deliveries yet", "'hookreplay import'", "0 deliveries")
	h.keys("enter", "r", "c", "y", "e", "d", "m", "j", "G")
	h.contains("hookreplay · deliveries\n", "0 deliveries")

	h = newHarness(t, st, 80, 24)
	h.env.banner = "capturing on http://127.0.0.1:9000, answering 200"
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.contains("no deliveries yet: capturing on http://127.0.0.1:9000, answering 200")
	h.keys("j")
	h.contains("0 deliveries · capturing on http://127.0.0.1:9000")
}

// TestListColumns: a generic delivery shows the path it was posted to where
// a provider's shows its event type, and a size up to "999.9 KiB" is whole.
func TestListColumns(t *testing.T) {
	st := fixtureStore(t)
	d := &store.Delivery{Method: "POST", Target: "/hooks/big", Provider: "generic", Raw: []byte("x"),
		Body: bytes.Repeat([]byte("a"), 999*1024), ReceivedAt: time.Date(2026, 12, 3, 8, 59, 0, 0, time.UTC)}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 80, 24)
	h.contains("> 7 ", "/hooks/big", "999.0 KiB", "/upload")
}

// TestRawLinesKeepEscapesWhole: the raw tab breaks a long line between two
// escapes, never inside one (\x at the end of a line, 1b on the next).
func TestRawLinesKeepEscapesWhole(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 60)
	h.keys("j", "enter", "3") // delivery 5: 256 bytes 00..ff
	h.contains(`\x00\x01`, `\xfe\xff`)
	partial := regexp.MustCompile(`(^|[^\\])(\\\\)*\\(x[0-9a-f]?)?\s*$`)
	for _, w := range []int{80, 41, 23} {
		h.send(tea.WindowSizeMsg{Width: w, Height: 60})
		for _, l := range strings.Split(h.view(), "\n") {
			if partial.MatchString(l) {
				t.Errorf("at %d columns a raw line ends inside an escape: %q", w, l)
			}
		}
	}
}

// TestHugeBodies: a body of megabytes is shown up to maxShown, with the
// command that writes all of it; the view does not lay out megabytes on
// every tab switch and resize.
func TestHugeBodies(t *testing.T) {
	st := fixtureStore(t)
	bin := make([]byte, 9<<20)
	for i := range bin {
		bin[i] = byte(i*7 + i>>8)
	}
	text := bytes.Repeat([]byte(`{"k":"value"},`), 400000)
	text = append(append([]byte("["), text...), []byte(`{}]`)...)
	for _, b := range [][]byte{bin, text} {
		raw := append([]byte("POST /big HTTP/1.1\r\nContent-Type: application/octet-stream\r\n\r\n"), b...)
		d := &store.Delivery{Method: "POST", Target: "/big", Provider: "generic", Raw: raw, Body: b,
			ReceivedAt: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
		if err := st.InsertDelivery(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, st, 100, 30)
	for _, tc := range []struct{ keys []string }{{[]string{"j", "enter"}}, {[]string{"esc", "g", "enter"}}} {
		h.keys(tc.keys...)
		id := h.m.top().(*deliveryModel).id
		for _, tab := range []string{"2", "3"} {
			h.keys(tab, "G")
			h.contains("only the first 256.0 KiB are shown")
			if tab == "3" {
				h.contains(fmt.Sprintf("'hookreplay show %d --raw' writes all of them", id))
			} else {
				h.contains(fmt.Sprintf("'hookreplay show %d --body' writes all of it", id))
			}
			if n := h.m.top().(*deliveryModel).vp.TotalLineCount(); n > 50000 {
				t.Errorf("delivery %d tab %s lays out %d lines", id, tab, n)
			}
		}
	}
}

// TestRunsColumns: a verdict is whole ("– interrupted" was cut) and a long
// target keeps its end (the path) at 80 columns.
func TestRunsColumns(t *testing.T) {
	st := fixtureStore(t)
	run := &store.Run{Kind: "replay", StartedAt: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC), Target: "http://127.0.0.1:19202/webhooks/stripe"}
	if err := st.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(context.Background(), run.ID, time.Date(2026, 12, 3, 8, 0, 6, 0, time.UTC), "interrupted", nil); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 80, 24)
	h.keys("R")
	h.contains("– interrupted", "…s/stripe")
	h.send(tea.WindowSizeMsg{Width: 120, Height: 24})
	h.contains("http://127.0.0.1:19202/webhooks/stripe")
}

// TestRunsArriveInAnEmptyList: a run stored while the runs view shows none
// (a replay from another terminal) can be selected and opened.
func TestRunsArriveInAnEmptyList(t *testing.T) {
	st := fixtureStore(t)
	h := newHarness(t, st, 100, 24)
	h.keys("R")
	h.contains("no runs yet")
	run := &store.Run{Kind: "replay", StartedAt: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC), Target: "http://127.0.0.1:1/h"}
	if err := st.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.send(changedMsg{})
	h.contains("1/1 runs")
	h.keys("enter")
	h.contains("run 1  replay")
}

// TestHelpInASmallWindow: at 40×10 the help lists every key, one column
// scrolled with ↓/pgdn, instead of the first column and "…".
func TestHelpInASmallWindow(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 40, 10)
	h.keys("?")
	h.contains("keys · ↓/↑ scroll · other keys close", "↑/k")
	seen := h.view()
	for range 20 {
		h.keys("pgdown")
		seen += h.view()
	}
	for _, want := range []string{"shift+tab", "previous tab", "filter", "R", "runs", "e", "export JSONL", "d", "delete", "s", "save report", "q", "quit", "any key closes this help"} {
		if !strings.Contains(seen, want) {
			t.Errorf("scrolling the help at 40x10 never showed %q", want)
		}
	}
	if !h.m.showHelp {
		t.Fatal("scrolling closed the help")
	}
	h.checkSteady("help at 40x10")
	h.keys("x")
	h.contains("1/6 deliveries")
	// Any key closes the help, as it says, q too (it quit the TUI).
	h.keys("?", "q")
	if h.m.quitting || h.m.showHelp {
		t.Fatalf("q in the help: quitting %v, help shown %v; want the help closed and the TUI on", h.m.quitting, h.m.showHelp)
	}
	h.contains("1/6 deliveries")
}

// TestNarrowList: at 40 columns the list keeps ID, time, event type, SIG and
// STATUS readable (it ran past the edge, STATUS and SIZE cut off).
func TestNarrowList(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 40, 10)
	h.contains("STATUS", "> 6       08:15:25 sms", "502", "app_menti")
	h.checkSteady("list at 40x10")
}

// TestTopAndBottomInTextViews: g and G go to the top and the bottom of a
// run, as of a delivery's tab (they did nothing there).
func TestTopAndBottomInTextViews(t *testing.T) {
	st := fixtureStore(t)
	ctx := context.Background()
	run := &store.Run{Kind: "replay", StartedAt: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC), Target: "http://127.0.0.1:1/h"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		a := &store.Attempt{RunID: run.ID, DeliveryID: 1, Phase: "replay", Copy: i + 1, Status: 200, SentAt: run.StartedAt}
		if err := st.InsertAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, st, 100, 24)
	h.keys("R", "enter")
	h.contains("run 1 · 0%")
	h.keys("G")
	h.contains("run 1 · 100%")
	h.keys("g")
	h.contains("run 1 · 0%")
}

// TestDeliveryDeletedWhileShown: a delivery deleted while its view is open
// says so in hookreplay's words.
func TestDeliveryDeletedWhileShown(t *testing.T) {
	st := fixtureStore(t)
	h := newHarness(t, st, 100, 24)
	h.keys("enter")
	if _, err := st.DeleteDeliveries(context.Background(), 6); err != nil {
		t.Fatal(err)
	}
	h.send(changedMsg{})
	h.contains("error: delivery 6 was deleted (esc goes back)")
	h.keys("esc")
	h.contains("1/5 deliveries")
}

// TestResizeKeepsThePlace: a delivery's tab read halfway, or to its end,
// stays there when the window is resized.
func TestResizeKeepsThePlace(t *testing.T) {
	st := fixtureStore(t)
	body := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog "), 2000)
	d := &store.Delivery{Method: "POST", Target: "/text", Provider: "generic", Raw: []byte("x"), Body: body,
		ReceivedAt: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 100, 30)
	h.keys("enter", "2")
	dm := h.m.top().(*deliveryModel)
	dm.vp.SetYOffset(dm.vp.TotalLineCount() / 2)
	for _, w := range []int{60, 160, 100} {
		h.send(tea.WindowSizeMsg{Width: w, Height: 30})
		if p := dm.vp.ScrollPercent(); p < 0.4 || p > 0.6 {
			t.Errorf("halfway, then resized to %d columns: at %.0f%%", w, p*100)
		}
	}
	h.keys("G")
	for _, w := range []int{60, 160} {
		h.send(tea.WindowSizeMsg{Width: w, Height: 30})
		h.contains("· body · 100%")
	}
}

// TestNewDeliveriesAboveAreCounted: away from the top, deliveries that
// arrive out of sight are counted in the status bar until g shows them.
func TestNewDeliveriesAboveAreCounted(t *testing.T) {
	st := largeStore(t, 100)
	h := newHarness(t, st, 80, 24)
	h.keys("pgdown", "pgdown")
	h.contains("39/100 deliveries", "> 62 ")
	for i := range 3 {
		d := &store.Delivery{Method: "POST", Target: "/late", Provider: "stripe", EventType: "charge.refunded",
			EventID: fmt.Sprintf("evt_late%d", i), Raw: []byte("x"), ReceivedAt: time.Date(2026, 12, 3, 8, 59, 0, 0, time.UTC)}
		if err := st.InsertDelivery(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	h.send(changedMsg{})
	h.contains("42/103 deliveries · 3 new above (g)", "> 62 ")
	h.keys("pgdown", "pgdown", "pgdown") // past the window: loads another
	h.contains("99/103 deliveries · 3 new above (g)")
	h.keys("g")
	h.contains("1/103 deliveries · hookreplay.db", "> 103 ")
	h.keys("pgdown")
	h.contains("20/103 deliveries · hookreplay.db")
}

// TestFooterShowsHelpAndQuit: at 80 columns the footer of the list and of a
// delivery still shows ? and q (they were cut off behind "…").
func TestFooterShowsHelpAndQuit(t *testing.T) {
	h := newHarness(t, fixtureStore(t), 80, 24)
	footer := func() string { v := strings.Split(h.view(), "\n"); return v[len(v)-1] }
	for _, view := range []string{"list", "delivery"} {
		if f := footer(); !strings.Contains(f, "? help") || !strings.Contains(f, "q quit") {
			t.Errorf("%s footer at 80 columns lacks ? help or q quit: %q", view, f)
		}
		h.keys("enter")
	}
}

// TestLatin1Body: a body its Content-Type says is ISO-8859-1 is shown as
// text, decoded, not as a hex dump (its raw tab keeps the bytes).
func TestLatin1Body(t *testing.T) {
	st := fixtureStore(t)
	body := []byte("caf\xe9 cr\xe8me br\xfbl\xe9e\n")
	raw := append([]byte("POST /latin HTTP/1.1\r\nContent-Type: text/plain; charset=ISO-8859-1\r\n\r\n"), body...)
	d := &store.Delivery{Method: "POST", Target: "/latin", Provider: "generic", Raw: raw, Body: body,
		Headers:    message.Headers{{Name: "Content-Type", Value: "text/plain; charset=ISO-8859-1"}},
		ReceivedAt: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 100, 24)
	h.keys("enter", "2")
	h.contains("decoded as ISO-8859-1", "café crème brûlée")
	h.keys("3")
	h.contains(`caf\xe9 cr\xe8me`)
}

// TestRunsMarker: the selected run is marked > (under NO_COLOR reverse video
// was the runs view's only cursor), and the mark follows the cursor.
func TestRunsMarker(t *testing.T) {
	st := fixtureStore(t)
	for i := range 2 {
		run := &store.Run{Kind: "replay", StartedAt: time.Date(2026, 12, 3, 8, i, 0, 0, time.UTC), Target: "http://127.0.0.1:1/h"}
		if err := st.CreateRun(context.Background(), run); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, st, 100, 24)
	h.keys("R")
	h.contains("> 2 ", "  1 ")
	h.keys("j")
	h.contains("  2 ", "> 1 ", "2/2 runs")
}

// TestListEventTypeWhole: at 100 columns an event type is shown whole while
// the event id column has room to give (an even split cut
// "charge.dispute.created" with columns to spare).
func TestListEventTypeWhole(t *testing.T) {
	st := fixtureStore(t)
	d := &store.Delivery{Method: "POST", Target: "/hooks/stripe", Provider: "stripe", EventType: "charge.dispute.created",
		EventID: "evt_1QdisputeCreated00000000", Raw: []byte("x"), ReceivedAt: time.Date(2026, 12, 3, 8, 59, 0, 0, time.UTC)}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, 100, 24)
	h.contains("charge.dispute.created ", "invoice.payment_succeeded ")
}

// TestWrapReportIndents: a report line too long for the window continues
// under its own text, never at column 0.
func TestWrapReportIndents(t *testing.T) {
	got := wrapReport("head\n  ✗ dups   2 of 2 duplicates did the work again (copies 2, 3); sql ended at 30000", 40)
	lines := strings.Split(got, "\n")
	if len(lines) < 3 || lines[0] != "head" || !strings.HasPrefix(lines[1], "  ✗ dups") {
		t.Fatalf("wrapped:\n%s", got)
	}
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "     ") {
			t.Errorf("continuation %q does not start at column 4", l)
		}
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %q is %d columns wide", l, w)
		}
	}
}
