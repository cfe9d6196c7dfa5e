package cmd

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

func TestVerifyCmdFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	t.Setenv("HR_TEST_SECRET", "whsec_env")
	var got *verifyOptions
	cmd := newVerifyCmd(newFactory(ios), func(o *verifyOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"#12", "--secret-env", "HR_TEST_SECRET", "--provider", "stripe", "--tolerance", "5m", "--at", "1614265330"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.ID != 12 || got.Secret != "whsec_env" || got.Provider != "stripe" || got.Tolerance != 5*time.Minute || got.At.Unix() != 1614265330 {
		t.Fatalf("%+v", got)
	}
	cmd = newVerifyCmd(newFactory(ios), func(o *verifyOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--secret", "k", "--header", "X-Sig", "--header", "X-Sig: abc", "--header", "Content-Type: text/plain"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.SigHeader != "X-Sig" || len(got.Headers) != 2 || got.Headers.Get("X-Sig") != "abc" {
		t.Fatalf("%+v", got)
	}
	for _, args := range [][]string{
		{"1"},
		{"1", "--secret", "a", "--secret-env", "B"},
		{"x", "--secret", "a"},
		{"1", "--secret", "a", "--header", "A: b"},
		{"--secret", "a", "--provider", "paypal"},
		{"--secret", "a", "--header", "A", "--header", "B"},
	} {
		cmd = newVerifyCmd(newFactory(ios), func(*verifyOptions) error { return nil })
		cmd.SetArgs(args)
		if code, _ := exitCode(cmd.Execute()); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestVerifyRunStoredDelivery(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := newFactory(ios)
	f.DBPath = filepath.Join(t.TempDir(), "hr.db")
	st, err := f.Store()
	if err != nil {
		t.Fatal(err)
	}
	received := time.Unix(1726070403, 0)
	req, err := verify.BuildDelivery("stripe", "invoice.paid", "whsec_k", time.Unix(1726070400, 0))
	if err != nil {
		t.Fatal(err)
	}
	id := verify.Detect(req)
	d := &store.Delivery{ReceivedAt: received, Provider: id.Provider, EventID: id.EventID, EventType: id.EventType,
		Method: req.Method, Target: req.Target, Headers: req.Headers, Body: req.Body, Raw: req.Encode("h", "/")}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	st.Close()
	o := &verifyOptions{IO: ios, Store: f.Store, ID: d.ID, Secret: "whsec_k"}
	if err := verifyRun(context.Background(), o); err != nil || out.String() != "valid (stripe, v1, signed 3s before capture)\n" {
		t.Fatalf("%v %q", err, out.String())
	}
	o.Secret = "whsec_other"
	if code, msg := exitCode(verifyRun(context.Background(), o)); code != 1 || !strings.HasPrefix(msg, "invalid: signature mismatch: it was signed with another secret") {
		t.Fatalf("%d %q", code, msg)
	}
	o.Secret, o.Tolerance = "whsec_k", 2*time.Second
	if code, msg := exitCode(verifyRun(context.Background(), o)); code != 1 || msg != "invalid: timestamp 3s outside tolerance 2s" {
		t.Fatalf("%d %q", code, msg)
	}
}

func TestSignCmd(t *testing.T) {
	ios, in, out, _ := iostreams.Test()
	in.WriteString(`{"test": 2432232314}`)
	cmd := newSignCmd(newFactory(ios), nil)
	cmd.SetArgs([]string{"--provider", "standard", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "--id", "msg_p5jXN8AQM9LWM0D4loKWxJek", "--timestamp", "2021-02-25T15:02:10Z"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek\nwebhook-timestamp: 1614265330\nwebhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestSendCmdTargetAndVia(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	var sentTo string
	var sent *message.Request
	f := newFactory(ios)
	// Swap the network for a recorder: the command builds the request and
	// chooses where it goes.
	run := newSendCmd(f, func(so *sendOptions) error {
		so.Send = func(_ context.Context, tg replay.Target, r *message.Request) store.Attempt {
			sentTo, sent = replay.FullURL(tg.URL, r.Target), r
			return store.Attempt{Status: 204}
		}
		return sendRun(context.Background(), so)
	})
	run.SetArgs([]string{"--event", "push", "--to", "https://hooks.example.com/gh?x=1", "--via", "http://127.0.0.1:9", "--secret", "s"})
	if err := run.Execute(); err != nil {
		t.Fatal(err)
	}
	if sentTo != "http://127.0.0.1:9/gh?x=1" || sent.Headers.Get("X-GitHub-Event") != "push" || !strings.Contains(out.String(), "via capture: 204") {
		t.Fatalf("sent to %s, headers %v, out %q", sentTo, sent.Headers, out)
	}
	if r, err := verify.Verify(sent, "github", "s", verify.Options{}); err != nil || !r.Valid {
		t.Fatalf("%+v %v", r, err)
	}
	u, _ := url.Parse("http://127.0.0.1:9/capture")
	if got := replay.FullURL(u, sent.Target); got != "http://127.0.0.1:9/capture?x=1" {
		t.Fatal(got)
	}
}
