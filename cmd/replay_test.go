package cmd

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

func TestReplayFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &factory{IO: ios}
	var got *replayOptions
	cmd := newReplayCmd(f, func(o *replayOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"41", "#42", "--to", "http://localhost:3000/hooks", "-n", "7", "--order", "shuffle", "--seed", "9",
		"--concurrency", "4", "--lose-response", "2", "--schedule", "twilio:2", "--speedup", "60", "--timeout", "5s",
		"--set-header", "X-A: 1", "--set-header", "X-B:2", "--drop-header", "User-Agent", "--json-set", "a.b=1"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if len(got.IDs) != 2 || got.IDs[1] != 42 || got.N != 7 || got.Order != "shuffle" || got.Seed != 9 || got.Concurrency != 4 ||
		got.LoseResponse != 2 || got.Schedule != "twilio:2" || got.Speedup != 60 || got.Timeout != 5*time.Second {
		t.Fatalf("options %+v", got)
	}
	if len(got.edits.SetHeaders) != 2 || got.edits.SetHeaders[1] != (message.Header{Name: "X-B", Value: "2"}) ||
		got.edits.DropHeaders[0] != "User-Agent" || got.edits.JSONSet[0] != "a.b=1" || got.target.Path != "/hooks" {
		t.Fatalf("edits %+v target %v", got.edits, got.target)
	}
	for _, bad := range [][]string{
		{"1", "--to", "http://x", "--seed", "3"},  // seed without shuffle
		{"1", "--to", "http://x", "--lose-early"}, // lose-early without lose-response
		{"1", "--last", "--to", "http://x"},       // two sources
		{"1", "--to", "http://x", "--raw", "--json-set", "a=1"},
		{"1", "--to", "http://x", "-n", "0"},
		{"1", "--to", "http://x", "--speedup", "0"},
		{"1", "--to", "http://x", "--edit", "--json"},
		{"1", "--to", "http://x", "--secret-env", "HOOKREPLAY_TEST_UNSET_VAR"},
		{"1", "2", "1", "--to", "http://x"}, // the same delivery twice: -n is for copies
	} {
		cmd := newReplayCmd(f, func(o *replayOptions) error { return nil })
		cmd.SetArgs(bad)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if code, _ := exitCode(err); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", bad, code, err)
		}
	}
}

// TestReplayProgressOnTerminal: more than 50 attempts on a terminal show a
// progress line instead of one line per 2xx copy.
func TestReplayProgressOnTerminal(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(l)
	defer srv.Close()

	db := filepath.Join(t.TempDir(), "h.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../internal/replay/testdata/stripe_invoice_paid.http")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := message.Parse(raw)
	d := &store.Delivery{Method: req.Method, Target: req.Target, Headers: req.Headers, Raw: raw, Body: req.Body, Provider: "generic"}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	st.Close()

	ios, _, out, _ := iostreams.Test()
	ios.SetTerminal(true)
	f := newFactory(ios)
	f.DBPath = db
	cmd := newReplayCmd(f, nil)
	cmd.SetArgs([]string{"1", "--to", "http://" + l.Addr().String(), "-n", "60", "--concurrency", "4"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "\r\033[K[") || !strings.Contains(s, "60/60") || strings.Contains(s, "copy 5 ") {
		t.Fatalf("no progress line:\n%q", s)
	}
	if !strings.Contains(s, "2xx 60") {
		t.Fatalf("summary:\n%s", s)
	}

	// runs lists it; runs show renders its attempts and summary.
	ios, _, out, _ = iostreams.Test()
	f = newFactory(ios)
	f.DBPath = db
	runs := newRunsCmd(f, nil)
	runs.SetArgs([]string{})
	if err := runs.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "replay") || !strings.Contains(out.String(), " 60 ") {
		t.Fatalf("runs:\n%s", out.String())
	}
}
