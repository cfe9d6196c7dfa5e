package cmd

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

func TestJSONFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	for _, tt := range []struct {
		args   []string
		fields []string
		jq     bool
	}{
		{[]string{"--json"}, nil, false},
		{[]string{"--json=id,event_type"}, []string{"id", "event_type"}, false},
		{[]string{"--jq", ".[].id"}, nil, true},
		{[]string{"--template", "{{len .}}"}, nil, false},
	} {
		var got *listOptions
		code, msg := captureRunFlags(newListCmd(f, func(o *listOptions) error { got = o; return nil }), io, tt.args)
		if code != 0 || !got.JSON || !reflect.DeepEqual(got.jsonOut.fields, tt.fields) || (got.jsonOut.code != nil) != tt.jq {
			t.Errorf("%v: exit %d %q, %+v", tt.args, code, msg, got)
		}
	}
	var got *listOptions
	if code, _ := captureRunFlags(newListCmd(f, func(o *listOptions) error { got = o; return nil }), io, nil); code != 0 || got.JSON {
		t.Errorf("no --json: JSON on")
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--jq", ".["}, "--jq .[: unexpected EOF"},
		{[]string{"--jq", ".", "--template", "x"}, "--jq and --template each shape the output; give one"},
		{[]string{"--template", "{{.x"}, "--template {{.x:"},
		{[]string{"--json=,"}, "give field names separated by commas"},
	} {
		code, msg := captureRunFlags(newListCmd(f, nil), io, bad.args)
		if code != 2 || !strings.Contains(msg, bad.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", bad.args, code, msg, bad.want)
		}
	}
}

func TestJoinJSONFields(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	root := NewRootCmd(io)
	for _, tt := range []struct{ in, want []string }{
		{[]string{"list", "--json", "id,event_type"}, []string{"list", "--json=id,event_type"}},
		{[]string{"show", "--json", "42"}, []string{"show", "--json", "42"}},
		{[]string{"runs", "--json", "show", "3"}, []string{"runs", "--json", "show", "3"}},
		{[]string{"list", "--json", "--limit", "3"}, []string{"list", "--json", "--limit", "3"}},
		{[]string{"list", "--json"}, []string{"list", "--json"}},
		{[]string{"list", "--", "--json", "id"}, []string{"list", "--", "--json", "id"}},
	} {
		if got := joinJSONFields(root, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("joinJSONFields(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestJSONShaping lists a real store through the whole tree with each way
// of shaping the JSON.
func TestJSONShaping(t *testing.T) {
	db := filepath.Join(t.TempDir(), "j.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"invoice.paid", "push"} {
		d := &store.Delivery{Method: "POST", Target: "/h", Provider: "stripe", EventID: "evt_" + typ, EventType: typ,
			Raw: []byte("POST /h HTTP/1.1\r\nHost: x\r\n\r\n")}
		if err := st.InsertDelivery(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--json=id,event_type"}, "[\n  {\n    \"event_type\": \"push\",\n    \"id\": 2\n  },\n  {\n    \"event_type\": \"invoice.paid\",\n    \"id\": 1\n  }\n]\n"},
		{[]string{"list", "--jq", ".[].event_type"}, "push\ninvoice.paid\n"},
		{[]string{"list", "--jq", ".[0] | {id, event_id}"}, "{\"event_id\":\"evt_push\",\"id\":2}\n"},
		{[]string{"list", "--template", "{{range .}}{{.id}}={{.event_type}} {{end}}"}, "2=push 1=invoice.paid "},
		{[]string{"show", "1", "--json=event_id"}, "{\n  \"event_id\": \"evt_invoice.paid\"\n}\n"},
		{[]string{"show", "2", "--jq", ".id"}, "2\n"},
		// --event-id is repeatable wherever it filters.
		{[]string{"list", "--event-id", "evt_push", "--event-id", "evt_invoice.paid", "--jq", "[.[].id]"}, "[2,1]\n"},
	} {
		code, msg, out := runRoot(t, append([]string{"--db", db}, tt.args...)...)
		if code != 0 || out != tt.want {
			t.Errorf("%v: exit %d %q, out %q, want %q", tt.args, code, msg, out, tt.want)
		}
	}
	if code, msg, out := runRoot(t, "--db", db, "export", "--event-id", "evt_push", "--event-id", "evt_invoice.paid", "--format", "curl"); code != 0 || !strings.Contains(out, "# 2 deliveries exported") {
		t.Errorf("export with two --event-id: %d %q\n%s", code, msg, out)
	}
	code, msg, _ := runRoot(t, "--db", db, "list", "--json=id,nope")
	if code != 2 || !strings.Contains(msg, `--json: unknown field "nope" (fields: body_size, derived_from, event_id, event_ids, event_type, forward_error, id,`) {
		t.Errorf("unknown field: %d %q", code, msg)
	}
	// A field the document leaves out when empty (no secret at capture: no
	// verification) is still a field show --json names in its help.
	code, msg, out := runRoot(t, "--db", db, "show", "1", "--json=id,verification,forward_error")
	if code != 0 || out != "{\n  \"id\": 1\n}\n" {
		t.Errorf("show --json with fields left out when empty: exit %d %q, out %q", code, msg, out)
	}
	code, msg, out = runRoot(t, "--db", db, "list", "--event-id", "evt_push", "--json=id,verification")
	if code != 0 || !strings.Contains(out, `"id"`) || strings.Contains(out, "verification") {
		t.Errorf("list --json with a field left out when empty: exit %d %q, out %q", code, msg, out)
	}
	code, msg, _ = runRoot(t, "--db", db, "show", "1", "--json=nope")
	if code != 2 || !strings.Contains(msg, `unknown field "nope"`) || !strings.Contains(msg, "verification") {
		t.Errorf("show --json=nope: exit %d %q", code, msg)
	}
}
