package cmd

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

// TestOneNamePerConcept: copies, timeouts, quiet and limits are spelled the
// same on every command (issue 13).
func TestOneNamePerConcept(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	for _, args := range [][]string{{"1", "--to", "3000", "-n", "4"}, {"1", "--to", "3000", "--copies", "4"}, {"1", "--to", "3000", "--n", "4"}} {
		var c *checkOptions
		if code, msg := captureRunFlags(newCheckCmd(f, func(o *checkOptions) error { c = o; return nil }), io, args); code != 0 || c.N != 4 {
			t.Errorf("check %v: %d %s %+v", args, code, msg, c)
		}
		var r *replayOptions
		if args[len(args)-2] == "--n" {
			continue // replay never had --n
		}
		if code, msg := captureRunFlags(newReplayCmd(f, func(o *replayOptions) error { r = o; return nil }), io, args); code != 0 || r.N != 4 {
			t.Errorf("replay %v: %d %s %+v", args, code, msg, r)
		}
	}
	if h := newCheckCmd(f, nil).Flags().Lookup("n"); !h.Hidden || h.Deprecated != "use -n or --copies" {
		t.Errorf("check's old --n: hidden %v, deprecated %q", h.Hidden, h.Deprecated)
	}

	var c *checkOptions
	if code, msg := captureRunFlags(newCheckCmd(f, func(o *checkOptions) error { c = o; return nil }), io, []string{"1", "--to", "3000", "--timeout", "2s", "--provider-timeout", "1s", "-q"}); code != 0 || c.Timeout != 2*time.Second || c.ProviderTimeout != time.Second || !c.Quiet {
		t.Errorf("check --timeout --provider-timeout -q: %d %s %+v", code, msg, c)
	}
	var r *replayOptions
	if code, msg := captureRunFlags(newReplayCmd(f, func(o *replayOptions) error { r = o; return nil }), io, []string{"1", "--to", "3000", "--timeout", "2s", "-q"}); code != 0 || r.Timeout != 2*time.Second || !r.Quiet {
		t.Errorf("replay --timeout -q: %d %s %+v", code, msg, r)
	}
	for name, fl := range map[string]string{
		"replay": newReplayCmd(f, nil).Flags().Lookup("timeout").Usage,
		"check":  newCheckCmd(f, nil).Flags().Lookup("timeout").Usage,
		"send":   newSendCmd(f, nil).Flags().Lookup("timeout").Usage,
	} {
		if !strings.HasPrefix(fl, "per request: connect, send and wait for the answer") {
			t.Errorf("%s --timeout is documented as %q", name, fl)
		}
	}
	if l, r := newListCmd(f, nil).Flags().Lookup("limit").DefValue, newRunsCmd(f, nil).Flags().Lookup("limit").DefValue; l != r {
		t.Errorf("list --limit %s, runs --limit %s", l, r)
	}
}

// TestSelectorOnEveryCommand: replay, check and delete name deliveries the
// same way (IDs, --last, repeatable --event-id, narrowed by --provider and
// --type), through the one selector.
func TestSelectorOnEveryCommand(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	args := []string{"--event-id", "a", "--event-id", "b", "--provider", "Stripe", "--type", "invoice.*"}
	var sels []deliverySelector
	var r *replayOptions
	if code, msg := captureRunFlags(newReplayCmd(f, func(o *replayOptions) error { r = o; return nil }), io, append([]string{"--to", "3000"}, args...)); code != 0 {
		t.Fatalf("replay: %d %s", code, msg)
	}
	var c *checkOptions
	if code, msg := captureRunFlags(newCheckCmd(f, func(o *checkOptions) error { c = o; return nil }), io, append([]string{"--to", "3000"}, args...)); code != 0 {
		t.Fatalf("check: %d %s", code, msg)
	}
	var d *deleteOptions
	if code, msg := captureRunFlags(newDeleteCmd(f, func(o *deleteOptions) error { d = o; return nil }), io, args); code != 0 {
		t.Fatalf("delete: %d %s", code, msg)
	}
	sels = append(sels, r.deliverySelector, c.deliverySelector, d.deliverySelector)
	for i, s := range sels {
		if !slices.Equal(s.EventIDs, []string{"a", "b"}) || !strings.EqualFold(s.OnlyProvider, "stripe") || s.OnlyType != "invoice.*" {
			t.Errorf("command %d: %+v", i, s)
		}
	}
	for _, cmd := range []string{"replay", "delete"} {
		code, msg, _ := runRoot(t, cmd, "--last", "--provider", "stripee", "--to", "3000")
		if cmd == "delete" {
			code, msg, _ = runRoot(t, cmd, "--last", "--provider", "stripee")
		}
		if code != 2 || !strings.Contains(msg, `unknown provider "stripee"`) {
			t.Errorf("%s --provider stripee: %d %q", cmd, code, msg)
		}
	}
}

func TestDeleteByEventID(t *testing.T) {
	db := filepath.Join(t.TempDir(), "d.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"evt_a", "evt_b", "evt_c"} {
		if err := st.InsertDelivery(context.Background(), &store.Delivery{Method: "POST", Target: "/h", Provider: "stripe", EventID: e, EventType: "invoice.paid",
			Raw: []byte("POST /h HTTP/1.1\r\nHost: x\r\n\r\n")}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	code, msg, out := runRoot(t, "--db", db, "delete", "--event-id", "evt_a", "--event-id", "evt_c", "1")
	if code != 0 || out != "deleted 2 deliveries\n" {
		t.Fatalf("delete --event-id: %d %q %q", code, msg, out)
	}
	if _, _, out := runRoot(t, "--db", db, "list", "--jq", "[.[].event_id]"); out != "[\"evt_b\"]\n" {
		t.Errorf("left: %s", out)
	}
}

// A config check is validated as its command line is: copies and burst have
// the flags' bounds.
func TestConfigBoundsAreTheFlags(t *testing.T) {
	if config.MaxJobs != check.MaxJobs {
		t.Errorf("config jobs ≤ %d, --jobs ≤ %d", config.MaxJobs, check.MaxJobs)
	}
	if config.MaxCopies != maxCopies || config.MaxBurst != maxConcurrency {
		t.Errorf("config copies ≤ %d, burst ≤ %d; flags -n ≤ %d, --burst ≤ %d", config.MaxCopies, config.MaxBurst, maxCopies, maxConcurrency)
	}
}
