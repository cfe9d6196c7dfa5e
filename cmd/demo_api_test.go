package cmd

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

func TestDemoAPIFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string // the variant, or the error
		wantErr bool
	}{
		{[]string{"race"}, "race", false},
		{[]string{"correct", "--listen", "8081"}, "correct", false},
		{nil, "demo api takes one variant: correct, race, 5xx, fingerprint, inflight, replayheader, scope", true},
		{[]string{"racy"}, `unknown variant "racy": want correct, race`, true},
	} {
		var got *demoAPIOptions
		io, _, _, _ := iostreams.Test()
		cmd := newDemoAPICmd(newFactory(io), func(o *demoAPIOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		code, msg := exitCode(cmd.Execute())
		if tc.wantErr {
			if code != 2 || !strings.Contains(msg, tc.want) {
				t.Errorf("%v: exit %d %q, want 2 and %q", tc.args, code, msg, tc.want)
			}
			continue
		}
		if code != 0 || got == nil || got.Variant != tc.want {
			t.Errorf("%v: exit %d %q, options %+v", tc.args, code, msg, got)
		}
	}
	if got := newDemoAPICmd(newFactory(nil), nil).Flags().Lookup("listen").DefValue; got != "127.0.0.1:8080" {
		t.Errorf("--listen defaults to %s", got)
	}
}

// TestDemoAPIServes: the correct variant does a request sent twice with one
// key once, counts it at /debug/count, and stops when its context ends; a
// port in use is one line saying what to do.
func TestDemoAPIServes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ios, _, out, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- demoAPIRun(ctx, &demoAPIOptions{IO: ios, Variant: "correct", Listen: addr}) }()
	var up bool
	for deadline := time.Now().Add(10 * time.Second); !up && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			up = true
		}
	}
	if !up {
		t.Fatal("demo api did not listen")
	}
	if err := demoAPIRun(context.Background(), &demoAPIOptions{IO: ios, Variant: "race", Listen: addr}); err == nil ||
		!strings.Contains(err.Error(), "address already in use: something else listens there") || strings.Contains(err.Error(), "listen tcp") {
		t.Errorf("a second api on the same port: %v", err)
	}
	for i := 0; i < 2; i++ {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(`{"text":"hi"}`))
		req.Header.Set("Authorization", "AccessKey acct_a")
		req.Header.Set("Idempotency-Key", "k1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 201 {
			t.Fatalf("POST %d: %d", i, res.StatusCode)
		}
	}
	res, err := http.Get("http://" + addr + "/debug/count")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "1" {
		t.Errorf("/debug/count after one request sent twice with one key: %q, want 1", b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("demo api did not stop with its context")
	}
	if !strings.Contains(out.String(), "api correct listening on http://"+addr+"/v1/messages") {
		t.Errorf("start line: %q", out.String())
	}
}
