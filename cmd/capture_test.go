package cmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

// captureRunFlags executes cmd with args and returns the exit code and message.
func captureRunFlags(cmd *cobra.Command, io *iostreams.IO, args []string) (int, string) {
	wordCommandLine(cmd)
	cmd.SetArgs(args)
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	return exitCode(cmd.Execute())
}

func TestCaptureFlags(t *testing.T) {
	t.Setenv("HOOKREPLAY_TEST_SECRET", "whsec_from_env")
	tests := []struct {
		args    []string
		check   func(*captureOptions) bool
		wantErr string
	}{
		{nil, func(o *captureOptions) bool {
			return o.Listen == "127.0.0.1:9000" && o.Sync == "normal" && o.Status == 200 && o.MaxBody == 10<<20 && o.Forward == "" && o.Secret == ""
		}, ""},
		{[]string{"--listen", ":9100", "--max-body", "512KB", "--status", "202", "--source", "s"}, func(o *captureOptions) bool {
			return o.Listen == ":9100" && o.MaxBody == 512000 && o.Status == 202 && o.Source == "s"
		}, ""},
		{[]string{"--forward", "http://localhost:3000", "--secret-env", "HOOKREPLAY_TEST_SECRET"}, func(o *captureOptions) bool {
			return o.Forward == "http://localhost:3000" && o.Secret == "whsec_from_env"
		}, ""},
		{[]string{"--listen", "9100"}, func(o *captureOptions) bool { return o.Listen == "127.0.0.1:9100" }, ""},
		{[]string{"--max-body", "big"}, nil, "--max-body"},
		{[]string{"--forward", "localhost:3000"}, func(o *captureOptions) bool { return o.Forward == "http://localhost:3000" }, ""},
		{[]string{"--forward", "3000"}, func(o *captureOptions) bool { return o.Forward == "http://127.0.0.1:3000" }, ""},
		{[]string{"--forward", "ftp://h"}, nil, "--forward"},
		{[]string{"--forward", "http://h", "--status", "201"}, nil, "cannot be combined"},
		{[]string{"--status", "700"}, nil, "--status 700"},
		{[]string{"--secret", "a", "--secret-env", "HOOKREPLAY_TEST_SECRET"}, nil, "not both"},
		{[]string{"--secret-env", "HOOKREPLAY_TEST_UNSET"}, nil, "not set"},
		{[]string{"--sync", "full"}, func(o *captureOptions) bool { return o.Sync == "full" }, ""},
		{[]string{"--sync", "off"}, nil, "--sync off"},
		{[]string{"--retain", "7d"}, func(o *captureOptions) bool { return o.Retain == 7*24*time.Hour }, ""},
		{[]string{"--retain", "5m"}, nil, "--retain 5m is shorter than the 10m minimum"},
		{[]string{"--retain", "soon"}, nil, "--retain: invalid duration"},
		{nil, func(o *captureOptions) bool { h, _ := os.Hostname(); return o.Source == h && o.Retain == 0 }, ""},
		{[]string{"--source", ""}, func(o *captureOptions) bool { return o.Source == "" }, ""},
		{[]string{"extra"}, nil, "takes no arguments"},
	}
	for _, tt := range tests {
		io, _, _, _ := iostreams.Test()
		var got *captureOptions
		code, msg := captureRunFlags(newCaptureCmd(newFactory(io), func(o *captureOptions) error { got = o; return nil }), io, tt.args)
		if tt.wantErr != "" {
			if code != 2 || !strings.Contains(msg, tt.wantErr) {
				t.Errorf("%v: exit %d %q, want 2 and %q", tt.args, code, msg, tt.wantErr)
			}
			continue
		}
		if code != 0 || got == nil || !tt.check(got) {
			t.Errorf("%v: exit %d %q, options %+v", tt.args, code, msg, got)
		}
	}
}

func TestBrowseFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	var l *listOptions
	if code, msg := captureRunFlags(newListCmd(f, func(o *listOptions) error { l = o; return nil }), io,
		[]string{"--provider", "stripe", "--type", "invoice.*", "--event-id", "evt_1", "--since", "1d2h", "--limit", "5", "--json"}); code != 0 {
		t.Fatalf("list: %d %s", code, msg)
	}
	if l.Provider != "stripe" || l.TypeGlob != "invoice.*" || !slices.Equal(l.EventIDs, []string{"evt_1"}) || l.Since != 26*time.Hour || l.Limit != 5 || !l.JSON {
		t.Errorf("list options %+v", l)
	}
	var s *showOptions
	if code, msg := captureRunFlags(newShowCmd(f, func(o *showOptions) error { s = o; return nil }), io, []string{"#42", "--raw"}); code != 0 || s.ID != 42 || !s.Raw {
		t.Errorf("show: %d %s %+v", code, msg, s)
	}
	var d *deleteOptions
	if code, msg := captureRunFlags(newDeleteCmd(f, func(o *deleteOptions) error { d = o; return nil }), io, []string{"3", "4"}); code != 0 || len(d.IDs) != 2 {
		t.Errorf("delete: %d %s %+v", code, msg, d)
	}
	var p *pruneOptions
	if code, msg := captureRunFlags(newPruneCmd(f, func(o *pruneOptions) error { p = o; return nil }), io, []string{"--older-than", "7d"}); code != 0 || p.OlderThan != 7*24*time.Hour {
		t.Errorf("prune: %d %s %+v", code, msg, p)
	}
	for _, bad := range []struct {
		cmd  *cobra.Command
		args []string
		want string
	}{
		{newListCmd(f, nil), []string{"--limit", "-1"}, "--limit"},
		{newShowCmd(f, nil), []string{"1", "--raw", "--json"}, "give one"},
		{newShowCmd(f, nil), nil, "show needs ID"},
		{newDeleteCmd(f, nil), nil, "which deliveries? give IDs"},
		{newDeleteCmd(f, nil), []string{"1", "x"}, "invalid delivery id"},
		{newPruneCmd(f, nil), []string{"--older-than", "0s"}, "positive"},
	} {
		if code, msg := captureRunFlags(bad.cmd, io, bad.args); code != 2 || !strings.Contains(msg, bad.want) {
			t.Errorf("%s %v: exit %d %q, want 2 and %q", bad.cmd.Name(), bad.args, code, msg, bad.want)
		}
	}
}

func TestShowRunRawAndUnknown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	d := &store.Delivery{Method: "POST", Target: "/x", Raw: []byte("POST /x HTTP/1.1\r\nA:  b\r\n\r\n\x00\x01"), Body: []byte{0, 1}}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	st.Close()
	io, _, out, _ := iostreams.Test()
	f := newFactory(io)
	f.DBPath = db
	if err := showRun(context.Background(), &showOptions{IO: io, Store: f.Store, ID: d.ID, Raw: true}); err != nil {
		t.Fatal(err)
	}
	if out.String() != string(d.Raw) {
		t.Fatalf("--raw wrote %q", out)
	}
	err = showRun(context.Background(), &showOptions{IO: io, Store: f.Store, ID: 99})
	if code, msg := exitCode(err); code != 2 || msg != "no delivery 99" {
		t.Fatalf("unknown id: %d %q", code, msg)
	}
}
