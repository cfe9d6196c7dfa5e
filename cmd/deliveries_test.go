package cmd

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

func TestParseID(t *testing.T) {
	for in, ok := range map[string]bool{"12": true, "#12": true, " 7 ": true, "0": false, "x": false, "-3": false, "": false} {
		if _, err := parseID("delivery", in); (err == nil) != ok {
			t.Errorf("parseID(%q) err %v", in, err)
		}
	}
	if _, err := parseID("run", "x"); !strings.Contains(err.Error(), `invalid run id "x"`) || !strings.Contains(err.Error(), "'hookreplay runs'") {
		t.Errorf("run id: %v", err)
	}
	// Every command taking delivery IDs words a bad one the same way.
	io, _, _, _ := iostreams.Test()
	for _, cmd := range []string{"show", "delete", "export", "replay", "check", "verify"} {
		root := NewRootCmd(io)
		root.SetArgs([]string{cmd, "abc", "--to", "http://127.0.0.1:1"})
		if cmd == "show" || cmd == "delete" || cmd == "export" || cmd == "verify" {
			root.SetArgs([]string{cmd, "abc"})
		}
		code, msg := exitCode(root.Execute())
		if code != 2 || msg != `invalid delivery id "abc": not a positive number, so not a delivery id (see 'hookreplay list')` {
			t.Errorf("%s abc: exit %d %q", cmd, code, msg)
		}
	}
}

// TestSelectorOneRule: --last is the newest capture and --event-id the
// oldest capture of that event, for every command that takes them.
func TestSelectorOneRule(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	base := time.Now().Add(-time.Hour)
	for i, e := range []string{"evt_a", "evt_b", "evt_a"} { // evt_a arrives, then a retry of it last
		raw := []byte("POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
		d := &store.Delivery{ReceivedAt: base.Add(time.Duration(i) * time.Minute), Method: "POST", Target: "/hook", Raw: raw, Body: []byte("{}"), Provider: "stripe", EventID: e}
		if err := st.InsertDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		sel  deliverySelector
		want []int64
	}{
		{deliverySelector{Last: true}, []int64{3}},
		{deliverySelector{EventIDs: []string{"evt_a"}}, []int64{1}},
		{deliverySelector{EventIDs: []string{"evt_b", "evt_a"}}, []int64{2, 1}},
		{deliverySelector{IDs: []int64{3, 1}, Last: true}, []int64{3, 1, 3}},
		// --since narrows --event-id: the first capture is older than 59m.
		{deliverySelector{EventIDs: []string{"evt_a"}, OnlySince: 59 * time.Minute, since: "59m"}, []int64{3}},
	} {
		ds, err := tt.sel.load(ctx, st)
		if err != nil {
			t.Fatalf("%+v: %v", tt.sel, err)
		}
		var got []int64
		for _, d := range ds {
			got = append(got, d.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%+v: got %v, want %v", tt.sel, got, tt.want)
		}
	}
	for _, tt := range []struct {
		sel  deliverySelector
		want string
	}{
		{deliverySelector{IDs: []int64{9}}, "no delivery 9"},
		{deliverySelector{EventIDs: []string{"evt_zz"}}, `no captured delivery has event id "evt_zz"`},
		{deliverySelector{Last: true, OnlySince: time.Minute, since: "1m"}, "--last --since 1m: no captured delivery matches"},
	} {
		if _, err := tt.sel.load(ctx, st); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.sel, err, tt.want)
		}
	}
}

// TestSelectorSinceNeedsASelection: --since parses like list's and only
// narrows --last or --event-id.
func TestSelectorSinceNeedsASelection(t *testing.T) {
	for _, tt := range []struct {
		sel  deliverySelector
		want string
	}{
		{deliverySelector{since: "2h"}, "give one of them"},
		{deliverySelector{Last: true, since: "soon"}, "--since"},
		{deliverySelector{Last: true, since: "2h"}, ""},
	} {
		err := tt.sel.validateFilters()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.sel, err, tt.want)
		}
	}
}

// TestFilterFlagsShared: list and export declare the same filter flags and
// validate them the same way (export used to accept a malformed --type glob
// and a mixed-case --provider, and then matched nothing).
func TestFilterFlagsShared(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	var l *listOptions
	var e *exportOptions
	args := []string{"--provider", "GitHub", "--type", "push*", "--event-id", "gh-1", "--since", "2h"}
	if code, msg := captureRunFlags(newListCmd(f, func(o *listOptions) error { l = o; return nil }), io, args); code != 0 {
		t.Fatalf("list: %d %s", code, msg)
	}
	if code, msg := captureRunFlags(newExportCmd(f, func(o *exportOptions) error { e = o; return nil }), io, args); code != 0 {
		t.Fatalf("export: %d %s", code, msg)
	}
	if !reflect.DeepEqual(l.deliveryFilter, e.deliveryFilter) || e.Provider != "github" || e.Since != 2*time.Hour {
		t.Errorf("list %+v, export %+v", l.deliveryFilter, e.deliveryFilter)
	}
	for _, bad := range [][]string{{"--type", "invoice.[paid"}, {"--since", "yesterday"}} {
		lc, lmsg := captureRunFlags(newListCmd(f, nil), io, bad)
		ec, emsg := captureRunFlags(newExportCmd(f, nil), io, bad)
		if lc != 2 || ec != 2 || lmsg != emsg {
			t.Errorf("%v: list %d %q, export %d %q", bad, lc, lmsg, ec, emsg)
		}
	}
	if code, msg := captureRunFlags(newExportCmd(f, nil), io, []string{"3", "--last"}); code != 2 || !strings.Contains(msg, "not both") {
		t.Errorf("export 3 --last: %d %q", code, msg)
	}
}
