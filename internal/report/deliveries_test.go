package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// capturedLines is a capture.Observer that renders each delivery's live
// line as `hookreplay capture` prints it.
type capturedLines struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (c *capturedLines) Delivered(d *store.Delivery, latency time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintln(&c.out, CaptureLine(Colors(false), d, latency))
}

func (c *capturedLines) Problem(string) {}

// capturedVia runs a real capture server (127.0.0.1:0, SQLite in a temp
// dir), sends each request on its own connection, reads its answer, stops
// the server and returns what it stored and its live lines.
func capturedVia(t *testing.T, opt capture.Options, requests ...[]byte) ([]*store.Delivery, [][]byte, string) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "capture.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lines := &capturedLines{}
	opt.Observer = lines
	srv, err := capture.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := capture.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var answers [][]byte
	for _, req := range requests {
		answers = append(answers, exchange(t, ln.Addr().String(), req))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	ds, err := st.ListDeliveries(context.Background(), store.Filter{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ds { // list leaves the bytes out; show reads the whole delivery
		if ds[i], err = st.GetDelivery(context.Background(), d.ID); err != nil {
			t.Fatal(err)
		}
	}
	return ds, answers, lines.out.String()
}

func exchange(t *testing.T, addr string, req []byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return b.Bytes()
}

func captureFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "capture", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCaptureLine: capture's live line carries the id, status, provider,
// event type and id, and the latency in the one duration format.
func TestCaptureLine(t *testing.T) {
	_, _, line := capturedVia(t, capture.Options{Status: 202, Source: "unit"}, captureFixture(t, "odd_case_order.http"))
	for _, want := range []string{"#1", "202", "stripe", "invoice.paid", "evt_1OddCase"} {
		if !strings.Contains(line, want) {
			t.Errorf("output line %q lacks %q", line, want)
		}
	}
	if !regexp.MustCompile(` [0-9.]+(µs|ms|s)\n$`).MatchString(line) {
		t.Errorf("output line %q does not end in a duration", line)
	}
}

// TestSenderTextCannotDriveTheTerminal: event ids and types come from the
// body and header values from the sender — anyone who can reach the capture
// URL. Printed raw, ESC/BEL/CR/LF in them clear the screen, fake lines, set
// the title or write the clipboard (OSC 52) on the developer's terminal. The
// capture line, list and show print them escaped (\x1b, \r, ...).
func TestSenderTextCannotDriveTheTerminal(t *testing.T) {
	ds, _, line := capturedVia(t, capture.Options{}, captureFixture(t, "terminal_escapes.http"))
	if len(ds) != 1 || !strings.Contains(ds[0].EventType, "\x1b[2J") {
		t.Fatalf("stored %d deliveries", len(ds))
	}
	check := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\x07\r\u009b") || strings.Contains(out, "\x9b") || strings.Contains(out, "\nFAKE") {
			t.Errorf("%s passes control characters to the terminal:\n%q", what, out)
		}
		if !strings.Contains(out, `\x1b`) {
			t.Errorf("%s does not show the escape as text:\n%q", what, out)
		}
	}
	check("capture line", line)

	var out bytes.Buffer
	if err := table(&out, Colors(false), ds); err != nil {
		t.Fatal(err)
	}
	check("list", out.String())
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 1 {
		t.Errorf("list has %d lines for one delivery:\n%s", n+1, &out)
	}
	out.Reset()
	if err := Delivery(&out, Colors(false), ds[0]); err != nil {
		t.Fatal(err)
	}
	check("show", out.String())
}

// TestListTableBoundsSenderText: a method is any token a sender likes, up
// to capture's 1MiB head. One delivery with a 100000-byte method made every
// row of list's table 100000 columns wide; the column is cut like TARGET.
func TestListTableBoundsSenderText(t *testing.T) {
	long := []byte(strings.Repeat("P", 100000) + " /" + strings.Repeat("a", 100000) + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
	ds, _, _ := capturedVia(t, capture.Options{}, long, captureFixture(t, "terminal_escapes.http"))
	if len(ds) != 2 || len(ds[0].Method) != 100000 {
		t.Fatalf("stored %d deliveries", len(ds))
	}
	var out bytes.Buffer
	if err := table(&out, Colors(false), ds); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if n := utf8.RuneCountInString(l); n > 300 {
			t.Errorf("a line of the table is %d columns wide: %.200q", n, l)
		}
	}
}

// TestListShowsVerification: with capture --secret each delivery's signature
// check is stored and, as the signatures issue asks, shown by list (not only
// by list --json and show). The secret itself is printed nowhere.
func TestListShowsVerification(t *testing.T) {
	const secret = "whsec_listtest"
	var reqs [][]byte
	for _, s := range []string{secret, "whsec_wrong"} {
		d, err := verify.BuildDelivery("stripe", "invoice.paid", s, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, d.Encode("127.0.0.1", "/hooks"))
	}
	ds, _, captureLines := capturedVia(t, capture.Options{Secret: secret}, reqs...)
	var out bytes.Buffer
	if err := table(&out, Colors(false), ds); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "SIGNATURE") ||
		!strings.Contains(lines[1], " valid ") || !strings.Contains(lines[2], " invalid ") {
		t.Fatalf("list does not show the signature results:\n%s", &out)
	}
	if !strings.HasSuffix(lines[1], "200") {
		t.Fatalf("STATUS is no longer the last column:\n%s", &out)
	}
	if strings.Contains(out.String()+captureLines, secret) {
		t.Fatal("secret printed")
	}
}

// TestShowSaysWhatCaptureAnswered: a Slack url_verification request is
// answered with its challenge (capture.AckBody), and show says so.
func TestShowSaysWhatCaptureAnswered(t *testing.T) {
	ds, _, _ := capturedVia(t, capture.Options{}, captureFixture(t, "slack_url_verification.http"))
	var out bytes.Buffer
	if err := Delivery(&out, Colors(false), ds[0]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `answered by capture with {"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","id":1}`) {
		t.Errorf("show does not say what capture answered:\n%s", &out)
	}
}

func browseDelivery() *store.Delivery {
	return &store.Delivery{ID: 7, ReceivedAt: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), Provider: "stripe",
		EventID: "evt_1", EventType: "invoice.paid", Method: "POST", Target: "/hooks", Proto: "HTTP/1.1",
		Headers: message.Headers{{Name: "b-Second", Value: "2"}, {Name: "A-first", Value: "1"}},
		Raw:     []byte("POST /hooks HTTP/1.1\r\n\r\n\x00"), Body: []byte(`{"a":1}`), ResponseStatus: 503,
		ResponseHeaders: message.Headers{{Name: "X", Value: "y"}}, ResponseBody: []byte("down"), Latency: time.Millisecond}
}

func TestListTableAlignedWithColour(t *testing.T) {
	var out bytes.Buffer
	d2 := browseDelivery()
	d2.ID, d2.ResponseStatus, d2.EventType = 12345, 200, "a.much.longer.event.type"
	if err := table(&out, Colors(true), []*store.Delivery{d2, browseDelivery()}); err != nil {
		t.Fatal(err)
	}
	plain := stripANSI(out.String())
	lines := strings.Split(strings.TrimSpace(plain), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", plain)
	}
	col := strings.Index(lines[0], "STATUS")
	for _, l := range lines[1:] {
		if len(l) < col+3 || (l[col:col+3] != "200" && l[col:col+3] != "503") {
			t.Fatalf("STATUS column not aligned at %d:\n%s", col, plain)
		}
	}
	if !strings.Contains(out.String(), "\x1b[") {
		t.Fatal("no colour with colour on")
	}
}

// table prints ds as list does: every row measured, then written.
func table(w io.Writer, p Painter, ds []*store.Delivery) error {
	t := NewDeliveryTable(p)
	for _, d := range ds {
		t.Measure(d.Summary())
	}
	if err := t.WriteHeader(w); err != nil {
		return err
	}
	for _, d := range ds {
		if err := t.Write(w, d.Summary()); err != nil {
			return err
		}
	}
	return nil
}

// TestListTableIsTabwriters: the streamed table (widths measured in a first
// pass) prints exactly what list printed when it held every row and aligned
// them with text/tabwriter, colour on and off: wide and unicode cells,
// truncation, a missing status, with and without the SIGNATURE column.
func TestListTableIsTabwriters(t *testing.T) {
	base := browseDelivery()
	var ds []*store.Delivery
	for i, edit := range []func(d *store.Delivery){
		func(d *store.Delivery) {},
		func(d *store.Delivery) {
			d.ID, d.EventType, d.ResponseStatus = 123456789, "ünïcödé.évent.typé", 0
		},
		func(d *store.Delivery) { d.Target = "/" + strings.Repeat("long/", 20); d.Body = make([]byte, 3<<20) },
		func(d *store.Delivery) {
			d.EventID, d.Provider, d.Method = strings.Repeat("evt_", 12), "shopify", "PUT"
		},
		func(d *store.Delivery) { d.EventType, d.EventID, d.ResponseStatus = "", "", 404 },
		func(d *store.Delivery) { d.Verification = "invalid: no signature header" },
	} {
		d := *base
		d.ID = int64(100 - i)
		edit(&d)
		ds = append(ds, &d)
	}
	for _, n := range []int{1, 5, 6} { // the last row alone has a SIGNATURE
		for _, colour := range []bool{false, true} {
			var got, want bytes.Buffer
			if err := table(&got, Colors(colour), ds[:n]); err != nil {
				t.Fatal(err)
			}
			tabwriterTable(&want, Colors(colour), ds[:n])
			if got.String() != want.String() {
				t.Errorf("%d rows, colour %v:\n%s\nwant (tabwriter):\n%s", n, colour, &got, &want)
			}
		}
	}
}

// tabwriterTable is list's table as it was printed before it streamed: all
// rows held and aligned by text/tabwriter, colour applied after alignment.
func tabwriterTable(w io.Writer, p Painter, ds []*store.Delivery) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	sig := false
	for _, d := range ds {
		sig = sig || d.Verification != ""
	}
	sigHead, sigCell := "", func(*store.Delivery) string { return "" }
	if sig {
		sigHead = "SIGNATURE\t"
		sigCell = func(d *store.Delivery) string {
			v, _, _ := strings.Cut(d.Verification, ":")
			v, _, _ = strings.Cut(v, " ")
			return dash(safe(v)) + "\t"
		}
	}
	fmt.Fprintln(tw, "ID\tRECEIVED\tPROVIDER\tEVENT TYPE\tEVENT ID\tMETHOD\tTARGET\tBODY\t"+sigHead+"STATUS")
	for _, d := range ds {
		status := "-"
		if d.ResponseStatus != 0 {
			status = fmt.Sprint(d.ResponseStatus)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", d.ID,
			d.ReceivedAt.Local().Format("2006-01-02 15:04:05"), safe(d.Provider), dash(truncate(safe(d.EventType), 32)),
			dash(truncate(safe(d.EventID), 36)), safe(d.Method), truncate(safe(d.Target), 40), Size(len(d.Body)), sigCell(d), status)
	}
	tw.Flush()
	lines := strings.SplitAfter(buf.String(), "\n")
	fmt.Fprintln(w, p.Bold(strings.TrimSuffix(lines[0], "\n")))
	for i, d := range ds {
		line := strings.TrimSuffix(lines[i+1], "\n")
		if d.ResponseStatus != 0 {
			code := fmt.Sprint(d.ResponseStatus)
			line = strings.TrimSuffix(line, code) + p.Status(d.ResponseStatus, code)
		}
		fmt.Fprintln(w, line)
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestDetailJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := DeliveryJSON(&buf, browseDelivery()); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["received_at"] != "2026-01-02T03:04:05.000000600Z" {
		t.Errorf("received_at %v", got["received_at"])
	}
	hs := got["headers"].([]any)
	if first := hs[0].([]any); first[0] != "b-Second" || first[1] != "2" {
		t.Errorf("headers not ordered pairs: %v", hs)
	}
	raw, _ := base64.StdEncoding.DecodeString(got["raw_base64"].(string))
	if string(raw) != "POST /hooks HTTP/1.1\r\n\r\n\x00" {
		t.Errorf("raw_base64 %q", raw)
	}
	resp := got["response"].(map[string]any)
	if resp["status"].(float64) != 503 || resp["body_base64"] != base64.StdEncoding.EncodeToString([]byte("down")) {
		t.Errorf("response %v", resp)
	}
}

func TestDetailHumanView(t *testing.T) {
	var out bytes.Buffer
	d := browseDelivery()
	d.Body = []byte{0, 1, 2, 0xff}
	if err := Delivery(&out, Colors(false), d); err != nil {
		t.Fatal(err)
	}
	// The latency is in the one duration format (it printed "1.0ms" before).
	for _, want := range []string{"delivery 7  stripe  invoice.paid  evt_1", "POST /hooks HTTP/1.1", "b-Second: 2\nA-first: 1",
		"(4 bytes of binary data; hookreplay show 7 --body writes them)", "response 503 Service Unavailable from the handler in 1ms", "down"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, &out)
		}
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("colour with colour off")
	}
}

func TestDetailShowsTrailers(t *testing.T) {
	raw := captureFixture(t, "chunked_trailers.http")
	d := browseDelivery()
	d.Raw, d.Body = raw, []byte(`{"id":"evt_chunked","type":"a.b"}`)
	var out bytes.Buffer
	if err := Delivery(&out, Colors(false), d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "trailers (after the last chunk):\nX-Checksum: abc123\nX-Other: tail\n") {
		t.Fatalf("trailers missing:\n%s", &out)
	}
	if tr := trailers(captureFixture(t, "odd_case_order.http")); tr != nil {
		t.Fatalf("trailers of a request without chunking: %v", tr)
	}
}

// A delivery whose signature verified but which the handler answered
// 400/401/403 says so on capture's line, where the user first sees it: the
// handler verifies something else than the raw body, or with another secret.
func TestCaptureLineValidSignatureRejected(t *testing.T) {
	d := &store.Delivery{ID: 1, Provider: "stripe", EventType: "invoice.paid", EventID: "evt_1", Verification: "valid (stripe, v1, signed 0s before capture)"}
	for _, tc := range []struct {
		status int
		want   bool
	}{{400, true}, {401, true}, {403, true}, {200, false}, {500, false}} {
		d.ResponseStatus = tc.status
		line := CaptureLine(Colors(false), d, time.Millisecond)
		if got := strings.Contains(line, "the handler rejected a valid signature: it must verify the raw body"); got != tc.want {
			t.Errorf("%d: %q", tc.status, line)
		}
	}
	d.ResponseStatus, d.Verification = 400, "invalid: signature mismatch"
	if line := CaptureLine(Colors(false), d, time.Millisecond); strings.Contains(line, "rejected a valid") {
		t.Errorf("an invalid signature rightly rejected: %q", line)
	}
}

// TestListTableSource: a team store's captures are told apart in list's
// table: a SOURCE column once the rows listed came from more than one
// capture --source, none while they share one (a laptop's store).
func TestListTableSource(t *testing.T) {
	a, b := browseDelivery(), browseDelivery()
	a.ID, a.Source = 2, "staging"
	b.ID, b.Source = 1, "alice-laptop"
	for _, c := range []struct {
		ds   []*store.Delivery
		want []string
	}{
		{[]*store.Delivery{a}, nil},
		{[]*store.Delivery{a, b}, []string{"ID  RECEIVED             SOURCE        PROVIDER", "staging       ", "alice-laptop  "}},
	} {
		var out bytes.Buffer
		if err := table(&out, Colors(false), c.ds); err != nil {
			t.Fatal(err)
		}
		if c.want == nil && strings.Contains(out.String(), "SOURCE") {
			t.Errorf("one source, yet a SOURCE column:\n%s", &out)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("no %q in:\n%s", w, &out)
			}
		}
	}
}
