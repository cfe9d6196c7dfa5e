package e2e

// End-to-end tests of capture, list, show, delete and prune through the real
// binary, real sockets and a real SQLite file.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
)

// captureStart runs `hookreplay capture` on a port the kernel picks (no race
// with other tests for a "free" port) and returns once it listens, with the
// address it printed.
func captureStart(t *testing.T, db string, extra ...string) (*proc, string) {
	t.Helper()
	return captureStartEnv(t, nil, db, extra...)
}

// captureStartEnv is captureStart with env added to capture's environment
// (startBinEnv).
func captureStartEnv(t *testing.T, env []string, db string, extra ...string) (*proc, string) {
	t.Helper()
	p := startBinEnv(t, env, db, append([]string{"capture", "--listen", "127.0.0.1:0"}, extra...)...)
	re := regexp.MustCompile(`capturing on http://(\S+) into`)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		_, stderr := p.Output()
		if m := re.FindStringSubmatch(stderr); m != nil {
			waitListening(t, m[1], p)
			return p, m[1]
		}
		select {
		case <-p.done:
			stdout, stderr := p.Output()
			t.Fatalf("capture exited before listening\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("capture did not report its address")
	return nil, ""
}

// captureAnswer is one HTTP response read off a raw connection.
type captureAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// captureExchange writes data in one write on a new connection and reads n answers.
func captureExchange(t *testing.T, addr string, data []byte, n int) []captureAnswer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []captureAnswer
	for i := 0; i < n; i++ {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, captureAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b})
	}
	return out
}

func captureAckID(t *testing.T, a captureAnswer) int64 {
	t.Helper()
	var v struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(a.Body, &v); err != nil || v.ID == 0 {
		t.Fatalf("answer %d %q is not {\"id\":N}", a.Status, a.Body)
	}
	return v.ID
}

func captureFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "capture", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// captureListed is the part of `list --json` the tests look at.
type captureListed struct {
	ID             int64  `json:"id"`
	ReceivedAt     string `json:"received_at"`
	Source         string `json:"source"`
	Provider       string `json:"provider"`
	EventID        string `json:"event_id"`
	EventType      string `json:"event_type"`
	Method         string `json:"method"`
	Target         string `json:"target"`
	BodySize       int    `json:"body_size"`
	ResponseStatus int    `json:"response_status"`
	ForwardError   string `json:"forward_error"`
}

func captureList(t *testing.T, db string, args ...string) []captureListed {
	t.Helper()
	r := runBin(t, db, nil, append([]string{"list", "--json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("list --json: exit %d: %s", r.Code, r.Stderr)
	}
	var out []captureListed
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("list --json output is not a JSON array: %v\n%s", err, r.Stdout)
	}
	return out
}

// captureListAnswered lists db once every stored delivery has its
// handler's answer recorded: capture answers the sender first and records
// the handler's answer just after (batched), so a list taken at once may
// still miss it.
func captureListAnswered(t *testing.T, db string) []captureListed {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l := captureList(t, db)
		answered := len(l) > 0
		for _, d := range l {
			if d.ResponseStatus == 0 {
				answered = false
			}
		}
		if answered || time.Now().After(deadline) {
			return l
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// captureCmp checks with cmp(1), when present, that `show ID --raw` wrote
// exactly want, besides comparing the bytes in Go.
func captureCmp(t *testing.T, db string, id int64, want []byte) {
	t.Helper()
	r := runBin(t, db, nil, "show", strconv.FormatInt(id, 10), "--raw")
	if r.Code != 0 {
		t.Fatalf("show --raw: %+v", r)
	}
	if r.Stdout != string(want) {
		t.Fatalf("show %d --raw differs from the sent bytes (%d vs %d bytes)", id, len(r.Stdout), len(want))
	}
	cmpPath, err := exec.LookPath("cmp")
	if err != nil {
		return
	}
	dir := t.TempDir()
	sent, got := filepath.Join(dir, "sent.http"), filepath.Join(dir, "show.http")
	os.WriteFile(sent, want, 0o600)
	f, err := os.Create(got)
	if err != nil {
		t.Fatal(err)
	}
	show := exec.Command(binPath, "--db", db, "show", strconv.FormatInt(id, 10), "--raw")
	show.Stdout = f
	if err := show.Run(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out, err := exec.Command(cmpPath, sent, got).CombinedOutput(); err != nil {
		t.Fatalf("cmp: %s %v", out, err)
	}
}

func TestCaptureE2EExactBytesListShow(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "hr.db")
	p, addr := captureStart(t, db, "--source", "e2e")

	blob := make([]byte, 5<<20)
	rand.Read(blob)
	binary := append([]byte(fmt.Sprintf("POST /blob HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", addr, len(blob))), blob...)

	sent := map[int64][]byte{}
	for _, name := range []string{"odd_case_order.http", "repeated_headers.http", "chunked_trailers.http"} {
		b := captureFixture(t, name)
		sent[captureAckID(t, captureExchange(t, addr, b, 1)[0])] = b
	}
	sent[captureAckID(t, captureExchange(t, addr, binary, 1)[0])] = binary
	// Three pipelined requests in one write: each its own delivery and bytes.
	parts := [][]byte{captureFixture(t, "repeated_headers.http"), captureFixture(t, "chunked_trailers.http"), captureFixture(t, "odd_case_order.http")}
	for i, a := range captureExchange(t, addr, bytes.Join(parts, nil), 3) {
		sent[captureAckID(t, a)] = parts[i]
	}

	// list --json from another process while capture is running.
	listed := captureList(t, db, "--limit", "0")
	if len(listed) != len(sent) {
		t.Fatalf("list shows %d deliveries, sent %d", len(listed), len(sent))
	}
	for i := 1; i < len(listed); i++ {
		if listed[i-1].ID <= listed[i].ID {
			t.Fatalf("list is not newest first: %d before %d", listed[i-1].ID, listed[i].ID)
		}
	}
	for _, l := range listed {
		if _, err := time.Parse(time.RFC3339Nano, l.ReceivedAt); err != nil || l.Source != "e2e" || l.ResponseStatus != 200 || l.Method == "" {
			t.Fatalf("list entry %+v", l)
		}
	}
	for id, b := range sent {
		captureCmp(t, db, id, b)
	}

	// show --json: ordered headers, raw and body in base64.
	var odd int64
	for id, b := range sent {
		if bytes.Equal(b, captureFixture(t, "odd_case_order.http")) && (odd == 0 || id < odd) {
			odd = id
		}
	}
	r := runBin(t, db, nil, "show", strconv.FormatInt(odd, 10), "--json")
	var detail struct {
		ID         int64       `json:"id"`
		Provider   string      `json:"provider"`
		EventID    string      `json:"event_id"`
		EventType  string      `json:"event_type"`
		Headers    [][2]string `json:"headers"`
		RawBase64  string      `json:"raw_base64"`
		BodyBase64 string      `json:"body_base64"`
		Response   struct {
			Status int `json:"status"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &detail); err != nil {
		t.Fatalf("show --json: %v\n%s", err, r.Stdout)
	}
	raw, _ := base64.StdEncoding.DecodeString(detail.RawBase64)
	body, _ := base64.StdEncoding.DecodeString(detail.BodyBase64)
	if !bytes.Equal(raw, sent[odd]) || !bytes.HasSuffix(sent[odd], body) || len(body) == 0 {
		t.Fatalf("show --json bytes differ")
	}
	if detail.Provider != "stripe" || detail.EventID != "evt_1OddCase" || detail.EventType != "invoice.paid" || detail.Response.Status != 200 {
		t.Fatalf("show --json identity %+v", detail)
	}
	wantFirst := [][2]string{{"content-TYPE", "application/json; charset=utf-8"}, {"HOST", "127.0.0.1"}}
	if len(detail.Headers) < 2 || detail.Headers[0] != wantFirst[0] || detail.Headers[1] != wantFirst[1] {
		t.Fatalf("headers not in wire order and case: %v", detail.Headers)
	}
	r = runBin(t, db, nil, "show", strconv.FormatInt(odd, 10), "--body")
	if r.Stdout != string(body) {
		t.Fatalf("show --body %q", r.Stdout)
	}
	r = runBin(t, db, nil, "show", strconv.FormatInt(odd, 10))
	for _, want := range []string{"stripe", "invoice.paid", "POST /hooks/stripe?src=cli&x=1 HTTP/1.1", "X-Weird-Spacing: lots   of   space", `"id": "evt_1OddCase"`, "response 200"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = runBin(t, db, nil, "show", "999")
	if r.Code != 2 || strings.TrimSpace(r.Stderr) != "hookreplay: no delivery 999" {
		t.Fatalf("unknown id: %+v", r)
	}

	p.stop(10 * time.Second)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		_, stderr := p.Output()
		t.Fatalf("capture exited %d after SIGTERM: %s", code, stderr)
	}
	stdout, _ := p.Output()
	if n := strings.Count(stdout, "\n"); n != len(sent) {
		t.Fatalf("%d delivery lines for %d deliveries:\n%s", n, len(sent), stdout)
	}
}

func TestCaptureE2EKill9LosesNoAcknowledgedDelivery(t *testing.T) {
	t.Parallel()
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer handler.Close()
	for _, mode := range []struct {
		name  string
		extra []string
	}{
		{"answering", nil},
		{"forwarding", []string{"--forward", handler.URL}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			captureKill9(t, filepath.Join(t.TempDir(), "hr.db"), mode.extra...)
		})
	}
}

// captureKill9 loads a capture process writing to db (a SQLite file or a
// Postgres URL) from 8 connections, lists from another
// process mid-load, kills the capture with SIGKILL while requests are still
// in flight, and checks that every request answered 2xx is stored with its
// exact bytes and that the database is intact.
func captureKill9(t *testing.T, db string, extra ...string) {
	p, addr := captureStart(t, db, extra...)
	var (
		mu      sync.Mutex
		acks    = map[string][]byte{} // event id -> bytes sent
		stop    atomic.Bool
		wg      sync.WaitGroup
		counter atomic.Int64
	)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c net.Conn
			var br *bufio.Reader
			for !stop.Load() {
				if c == nil {
					var err error
					if c, err = net.DialTimeout("tcp", addr, time.Second); err != nil {
						return // the process is gone
					}
					br = bufio.NewReader(c)
				}
				n := counter.Add(1)
				evt := fmt.Sprintf("evt_kill_%d", n)
				body := fmt.Sprintf(`{"id":%q,"type":"load.kill9","pad":"%s"}`, evt, strings.Repeat("x", int(n%700)))
				req := []byte(fmt.Sprintf("POST /k/%d HTTP/1.1\r\nHost: k\r\nStripe-Signature: t=1,v1=00\r\nContent-Length: %d\r\n\r\n%s", n, len(body), body))
				c.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := c.Write(req); err != nil {
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					return
				}
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					return
				}
				if resp.StatusCode/100 == 2 {
					mu.Lock()
					acks[evt] = req
					mu.Unlock()
				}
				if n%3 == 0 { // mix fresh connections with kept-alive ones
					c.Close()
					c = nil
				}
			}
			if c != nil {
				c.Close()
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 60 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A reader in another process while capture writes.
	if mid := captureList(t, db, "--limit", "0"); len(mid) == 0 {
		t.Fatal("list --json during capture returned nothing")
	}
	time.Sleep(300 * time.Millisecond)
	p.kill9() // mid-load: workers are still sending
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(acks) < 60 {
		t.Fatalf("only %d deliveries acknowledged before the kill", len(acks))
	}
	listed := captureList(t, db, "--limit", "0")
	ids := map[string]int64{}
	for _, l := range listed {
		ids[l.EventID] = l.ID
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatalf("store does not open after kill -9: %v", err)
	}
	defer st.Close()
	for evt, sent := range acks {
		id, ok := ids[evt]
		if !ok {
			t.Fatalf("acknowledged delivery %s lost after kill -9 (%d acknowledged, %d stored)", evt, len(acks), len(listed))
		}
		d, err := st.GetDelivery(context.Background(), id)
		if err != nil || !bytes.Equal(d.Raw, sent) {
			t.Fatalf("delivery %d (%s): raw differs or missing: %v", id, evt, err)
		}
	}
	if !store.IsURL(db) {
		sqldb, err := sql.Open("sqlite", "file:"+db)
		if err != nil {
			t.Fatal(err)
		}
		defer sqldb.Close()
		var check string
		if err := sqldb.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Fatalf("integrity_check after kill -9: %q %v", check, err)
		}
	}
	t.Logf("%d acknowledged before kill -9, %d stored, all acknowledged present", len(acks), len(listed))
}

func TestCaptureE2EForward(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen-Path", r.URL.RequestURI())
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "got %d bytes", len(b))
	}))
	defer h.Close()
	db := filepath.Join(t.TempDir(), "hr.db")
	p, addr := captureStart(t, db, "--forward", h.URL+"/webhooks")
	b := captureFixture(t, "repeated_headers.http")
	a := captureExchange(t, addr, b, 1)[0]
	if a.Status != 201 || a.Header.Get("X-Seen-Path") != "/webhooks/gh" || string(a.Body) != "got 42 bytes" {
		t.Fatalf("forwarded answer %d %v %q", a.Status, a.Header, a.Body)
	}
	l := captureListAnswered(t, db)
	if len(l) != 1 || l[0].ResponseStatus != 201 || l[0].Provider != "github" || l[0].EventType != "issues.opened" {
		t.Fatalf("list %+v", l)
	}
	captureCmp(t, db, l[0].ID, b)
	r := runBin(t, db, nil, "show", strconv.FormatInt(l[0].ID, 10))
	if !strings.Contains(r.Stdout, "response 201 Created from the handler") || !strings.Contains(r.Stdout, "got 42 bytes") {
		t.Fatalf("show:\n%s", r.Stdout)
	}
	p.stop(10 * time.Second)
	out, _ := p.Output()
	if !strings.Contains(out, "201") || !strings.Contains(out, "issues.opened") || !strings.Contains(out, "72d3162e-cc78-11e3-81ab-4c9367dc0958") {
		t.Fatalf("capture line %q", out)
	}

	// Handler down: 502 to the sender, delivery kept with the error.
	dead := freeAddr(t)
	db2 := filepath.Join(t.TempDir(), "hr2.db")
	_, addr2 := captureStart(t, db2, "--forward", "http://"+dead)
	a = captureExchange(t, addr2, b, 1)[0]
	if a.Status != 502 {
		t.Fatalf("handler down: %d %q", a.Status, a.Body)
	}
	l = captureListAnswered(t, db2)
	if len(l) != 1 || l[0].ResponseStatus != 502 || !strings.Contains(l[0].ForwardError, "refused") {
		t.Fatalf("kept delivery %+v", l)
	}
	captureCmp(t, db2, l[0].ID, b)
	if hits.Load() != 1 {
		t.Fatalf("handler hit %d times", hits.Load())
	}
}

func TestCaptureE2ERejectsAndKeepsServing(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "hr.db")
	_, addr := captureStart(t, db, "--max-body", "512KB", "--status", "204")
	big := make([]byte, 600*1000)
	a := captureExchange(t, addr, append([]byte(fmt.Sprintf("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(big))), big...), 1)[0]
	if a.Status != 413 {
		t.Fatalf("over --max-body: %d", a.Status)
	}
	a = captureExchange(t, addr, []byte("NOT HTTP AT ALL\r\n\r\n"), 1)[0]
	if a.Status != 400 {
		t.Fatalf("malformed: %d", a.Status)
	}
	if l := captureList(t, db); len(l) != 0 {
		t.Fatalf("rejected requests stored: %+v", l)
	}
	ok := make([]byte, 500*1000)
	a = captureExchange(t, addr, append([]byte(fmt.Sprintf("POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(ok))), ok...), 1)[0]
	if a.Status != 204 {
		t.Fatalf("after rejects: %d", a.Status)
	}
	if l := captureList(t, db); len(l) != 1 || l[0].BodySize != len(ok) || l[0].ResponseStatus != 204 {
		t.Fatalf("list %+v", l)
	}
}

func TestCaptureE2ESetupErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "hr.db")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	notDB := filepath.Join(dir, "notdb")
	os.WriteFile(notDB, bytes.Repeat([]byte("not sqlite "), 500), 0o600)
	cases := []struct {
		name string
		db   string
		args []string
		want string
	}{
		// A port in use says what to do about it (it said only "bind: address already in use").
		{"port in use", db, []string{"capture", "--listen", busy.Addr().String()}, "address already in use: something else listens there (a capture or handler still running in the background? 'jobs' lists a shell's); stop it, or give --listen another port"},
		{"demo serve port in use", db, []string{"demo", "serve", "fixed", "--listen", busy.Addr().String(), "--db", filepath.Join(dir, "w.db")}, "address already in use: something else listens there"},
		{"db dir missing", filepath.Join(dir, "nope", "hr.db"), []string{"capture", "--listen", "127.0.0.1:0"}, "does not exist"},
		{"not a database", notDB, []string{"capture", "--listen", "127.0.0.1:0"}, "not a hookreplay database"},
		{"bad max-body", db, []string{"capture", "--max-body", "lots"}, "--max-body"},
		{"status with forward", db, []string{"capture", "--forward", "http://127.0.0.1:1", "--status", "201"}, "--status"},
		{"non-http forward", db, []string{"capture", "--forward", "ftp://localhost:3000"}, "--forward"},
		{"bad status", db, []string{"capture", "--status", "99"}, "--status 99"},
		{"missing secret env", db, []string{"capture", "--secret-env", "HOOKREPLAY_TEST_UNSET_VAR"}, "HOOKREPLAY_TEST_UNSET_VAR"},
		{"list bad since", db, []string{"list", "--since", "yesterday"}, "--since"},
		{"show bad id", db, []string{"show", "abc"}, "invalid delivery id"},
		{"delete unknown", db, []string{"delete", "424242"}, "no delivery 424242"},
		{"prune without age", db, []string{"prune"}, "--older-than"},
		{"prune bad age", db, []string{"prune", "--older-than", "7days"}, "--older-than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, tc.db, nil, tc.args...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
				t.Fatalf("exit %d stderr %q, want exit 2 and one line with %q", r.Code, r.Stderr, tc.want)
			}
		})
	}
}

func TestCaptureE2ENonLoopbackWarning(t *testing.T) {
	t.Parallel()
	port := strings.TrimPrefix(freeAddr(t), "127.0.0.1:")
	p := startBin(t, filepath.Join(t.TempDir(), "hr.db"), "capture", "--listen", "0.0.0.0:"+port)
	waitListening(t, "127.0.0.1:"+port, p)
	p.stop(10 * time.Second)
	_, stderr := p.Output()
	if !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "anyone") {
		t.Fatalf("no warning for a non-loopback --listen:\n%s", stderr)
	}
	p2, _ := captureStart(t, filepath.Join(t.TempDir(), "hr2.db"))
	p2.stop(10 * time.Second)
	if _, stderr := p2.Output(); strings.Contains(stderr, "warning") {
		t.Fatalf("warning on loopback:\n%s", stderr)
	}
}

func TestCaptureE2EBrowseFiltersDeletePrune(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "hr.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	seed := []store.Delivery{
		{ReceivedAt: now.Add(-10 * 24 * time.Hour), Provider: "stripe", EventID: "evt_old", EventType: "invoice.paid"},
		{ReceivedAt: now.Add(-3 * time.Hour), Provider: "stripe", EventID: "evt_a", EventType: "invoice.created"},
		{ReceivedAt: now.Add(-30 * time.Minute), Provider: "github", EventID: "gh-1", EventType: "issues.opened"},
		{ReceivedAt: now.Add(-time.Minute), Provider: "stripe", EventID: "evt_b", EventType: "customer.created"},
	}
	for i := range seed {
		d := seed[i]
		d.Method, d.Target, d.Raw, d.Body = "POST", "/x", []byte("POST /x HTTP/1.1\r\n\r\n"), []byte("{}")
		if err := st.InsertDelivery(context.Background(), &d); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	ids := func(l []captureListed) string {
		var s []string
		for _, x := range l {
			s = append(s, x.EventID)
		}
		return strings.Join(s, ",")
	}
	cases := []struct {
		args []string
		want string
	}{
		{nil, "evt_b,gh-1,evt_a,evt_old"},
		{[]string{"--provider", "stripe"}, "evt_b,evt_a,evt_old"},
		{[]string{"--type", "invoice.*"}, "evt_a,evt_old"},
		{[]string{"--event-id", "gh-1"}, "gh-1"},
		{[]string{"--since", "2h"}, "evt_b,gh-1"},
		{[]string{"--since", "1d"}, "evt_b,gh-1,evt_a"},
		{[]string{"--limit", "1"}, "evt_b"},
		{[]string{"--provider", "stripe", "--since", "7d", "--type", "*.created"}, "evt_b,evt_a"},
	}
	for _, tc := range cases {
		if got := ids(captureList(t, db, tc.args...)); got != tc.want {
			t.Errorf("list %v = %s, want %s", tc.args, got, tc.want)
		}
	}
	r := runBin(t, db, nil, "list")
	if r.Code != 0 || !strings.Contains(r.Stdout, "EVENT TYPE") || strings.Count(r.Stdout, "\n") != 5 {
		t.Fatalf("list table:\n%s", r.Stdout)
	}
	r = runBin(t, db, nil, "list", "--event-id", "nobody", "--json")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "[]" {
		t.Fatalf("empty list --json: %+v", r)
	}
	r = runBin(t, db, nil, "list", "--provider", "nobody")
	if r.Code != 2 || !strings.Contains(r.Stderr, `unknown provider "nobody" (known: stripe,`) {
		t.Fatalf("list --provider nobody: %+v", r)
	}

	r = runBin(t, db, nil, "prune", "--older-than", "7d")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "removed 1 delivery") {
		t.Fatalf("prune: %+v", r)
	}
	if got := ids(captureList(t, db)); got != "evt_b,gh-1,evt_a" {
		t.Fatalf("after prune: %s", got)
	}
	l := captureList(t, db)
	r = runBin(t, db, nil, "delete", strconv.FormatInt(l[0].ID, 10), "9999")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no delivery 9999") {
		t.Fatalf("delete with unknown id: %+v", r)
	}
	if len(captureList(t, db)) != 3 {
		t.Fatal("delete with an unknown id deleted something")
	}
	r = runBin(t, db, nil, "delete", strconv.FormatInt(l[0].ID, 10), strconv.FormatInt(l[1].ID, 10))
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "deleted 2 deliveries" {
		t.Fatalf("delete: %+v", r)
	}
	if got := ids(captureList(t, db)); got != "evt_a" {
		t.Fatalf("after delete: %s", got)
	}
}
