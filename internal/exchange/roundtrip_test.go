package exchange

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// fixtureNames lists testdata/deliveries/*.http: raw requests as senders
// wrote them (binary body, repeated headers, odd header case, chunked,
// Latin-1 header bytes, bare LF, unusual spacing, a GET without body).
func fixtureNames(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "deliveries", "*.http"))
	if err != nil || len(names) < 8 {
		t.Fatalf("fixtures: %v %v", names, err)
	}
	sort.Strings(names)
	return names
}

// storedDeliveries stores every fixture in a real SQLite store the way
// capture does (fields from the raw bytes, provider detected, a response
// recorded) and returns them as read back from the database.
func storedDeliveries(t *testing.T) []*store.Delivery {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recv := time.Date(2026, 12, 3, 9, 0, 0, 123456789, time.UTC)
	for i, name := range fixtureNames(t) {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := fromRaw(raw, DefaultMaxBody)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		id := verify.Detect(d.Request())
		d.Provider, d.EventID, d.EventType, d.Identity = id.Provider, id.EventID, id.EventType, id.Extra
		d.ReceivedAt = recv.Add(time.Duration(i) * time.Second)
		d.Source, d.RemoteAddr = "fixtures", "127.0.0.1:50123"
		d.ResponseStatus = 200 + i
		d.ResponseHeaders = message.Headers{{Name: "Content-Type", Value: "application/json"}, {Name: "X-Handler", Value: filepath.Base(name)}}
		d.ResponseBody = []byte(`{"received":true}`)
		d.Latency = time.Duration(i+1) * 1500 * time.Microsecond
		if err := st.InsertDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := st.ListDeliveries(ctx, store.Filter{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// importStored adds ds to a fresh store and returns them as read back.
func importStored(t *testing.T, ds []*store.Delivery) []*store.Delivery {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "dst.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.ImportDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	out, err := st.ListDeliveries(ctx, store.Filter{Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTripKeepsEveryByte: import(export(x)) == x for jsonl, har and
// raw, through real stores on both sides: the exact wire bytes, and for
// jsonl and har every other field too.
func TestRoundTripKeepsEveryByte(t *testing.T) {
	src := storedDeliveries(t)
	for _, f := range []Format{JSONL, HAR, Raw} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, f, Slice(src), WriteOptions{Version: "test", Count: len(src)}); err != nil {
				t.Fatal(err)
			}
			if got, err := Detect(buf.Bytes()); err != nil || got != f {
				t.Errorf("Detect = %q, %v; want %q", got, err, f)
			}
			ds, err := Read(buf.Bytes(), f, ReadOptions{Name: "export." + string(f)})
			if err != nil {
				t.Fatal(err)
			}
			got := importStored(t, ds)
			if len(got) != len(src) {
				t.Fatalf("%d deliveries back, want %d", len(got), len(src))
			}
			for i, d := range got {
				want := src[i]
				if !bytes.Equal(d.Raw, want.Raw) {
					t.Errorf("delivery %d (%s): raw bytes differ\n got %q\nwant %q", i+1, want.Target, d.Raw, want.Raw)
				}
				if !sameHeaders(d.Headers, want.Headers) || !bytes.Equal(d.Body, want.Body) || d.Method != want.Method || d.Target != want.Target {
					t.Errorf("delivery %d (%s): request differs: %+v %q", i+1, want.Target, d.Headers, d.Body)
				}
				if d.Origin != string(f)+":export."+string(f) {
					t.Errorf("delivery %d: origin %q", i+1, d.Origin)
				}
				if f == Raw {
					continue
				}
				if !d.ReceivedAt.Equal(want.ReceivedAt) || d.Provider != want.Provider || d.EventID != want.EventID ||
					d.EventType != want.EventType || d.Source != want.Source || d.RemoteAddr != want.RemoteAddr ||
					d.ResponseStatus != want.ResponseStatus || !bytes.Equal(d.ResponseBody, want.ResponseBody) ||
					!sameHeaders(d.ResponseHeaders, want.ResponseHeaders) || d.Latency != want.Latency {
					t.Errorf("delivery %d (%s): fields differ:\n got %s\nwant %s", i+1, want.Target, brief(d), brief(want))
				}
			}
		})
	}
}

// TestHARWithoutExtensionRebuildsRequest: a HAR re-saved by another tool
// (no "_hookreplay") is rebuilt from its fields: byte for byte when the
// sender wrote "Name: value" lines with CRLF and a matching length,
// and with the same headers and body otherwise.
func TestHARWithoutExtensionRebuildsRequest(t *testing.T) {
	src := storedDeliveries(t)
	var buf bytes.Buffer
	if err := Write(&buf, HAR, Slice(src), WriteOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	log := f["log"].(map[string]any)
	if log["version"] != "1.2" || log["creator"].(map[string]any)["name"] != "hookreplay" {
		t.Errorf("log header: %v %v", log["version"], log["creator"])
	}
	for _, e := range log["entries"].([]any) {
		e := e.(map[string]any)
		for _, k := range []string{"startedDateTime", "time", "request", "response", "cache", "timings"} {
			if _, ok := e[k]; !ok {
				t.Errorf("entry lacks required %q", k)
			}
		}
		delete(e, "_hookreplay")
	}
	stripped, _ := json.Marshal(f)
	ds, err := Read(stripped, HAR, ReadOptions{Name: "foreign.har"})
	if err != nil {
		t.Fatal(err)
	}
	exact := map[string]bool{"/webhooks/stripe?src=cli&x=%20y": true, "/hooks/binary": true, "/hooks/repeated": true,
		"/github": true, "/hooks/ping?challenge=abc": true, "/hooks/text": true}
	for i, d := range ds {
		want := src[i]
		if exact[want.Target] && !bytes.Equal(d.Raw, want.Raw) {
			t.Errorf("%s: rebuilt bytes differ\n got %q\nwant %q", want.Target, d.Raw, want.Raw)
		}
		if !bytes.Equal(d.Body, want.Body) {
			t.Errorf("%s: body differs: %q", want.Target, d.Body)
		}
		if want.Target != "/hooks/latin1" && !sameHeaders(d.Headers, want.Headers) {
			t.Errorf("%s: headers differ\n got %v\nwant %v", want.Target, d.Headers, want.Headers)
		}
		if d.Provider != "" {
			t.Errorf("%s: provider %q set without detection", want.Target, d.Provider)
		}
		if d.ResponseStatus != want.ResponseStatus {
			t.Errorf("%s: response status %d, want %d", want.Target, d.ResponseStatus, want.ResponseStatus)
		}
	}
	if len(ds) != len(src) {
		t.Fatalf("%d entries, want %d", len(ds), len(src))
	}
}

// TestHAREditedEntryIsRebuilt: an entry whose body was edited after export
// is rebuilt from the edited fields, not taken from its stale _hookreplay.
func TestHAREditedEntryIsRebuilt(t *testing.T) {
	all := storedDeliveries(t)
	src := all[len(all)-1:] // stripe.http
	var buf bytes.Buffer
	if err := Write(&buf, HAR, Slice(src), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(buf.Bytes(), []byte(`\"amount_paid\": 4200`), []byte(`\"amount_paid\": 9900`), 1)
	if bytes.Equal(edited, buf.Bytes()) {
		t.Fatal("fixture changed: nothing to edit")
	}
	ds, err := Read(edited, HAR, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ds[0].Raw, []byte(`"amount_paid": 9900`)) || !bytes.Contains(ds[0].Body, []byte(`"amount_paid": 9900`)) {
		t.Errorf("edit lost: %q", ds[0].Raw)
	}
}

// brief prints a delivery's metadata without its bytes.
func brief(d *store.Delivery) string {
	return fmt.Sprintf("recv=%s provider=%s event=%s/%s source=%q remote=%q status=%d rheaders=%v rbody=%q latency=%s",
		d.ReceivedAt.Format(time.RFC3339Nano), d.Provider, d.EventType, d.EventID, d.Source, d.RemoteAddr,
		d.ResponseStatus, d.ResponseHeaders, d.ResponseBody, d.Latency)
}

// TestHARStreamedIsTheWholeLog: the HAR written an entry at a time is byte
// for byte the log encoded at once, for no, one and several deliveries.
func TestHARStreamedIsTheWholeLog(t *testing.T) {
	src := storedDeliveries(t)
	for _, n := range []int{0, 1, len(src)} {
		var got bytes.Buffer
		if err := Write(&got, HAR, Slice(src[:n]), WriteOptions{Version: "v<1>"}); err != nil {
			t.Fatal(err)
		}
		f := harFile{Log: harLog{Version: "1.2", Creator: harCreator{Name: "hookreplay", Version: "v<1>"}, Entries: []harEntry{}}}
		for _, d := range src[:n] {
			e, err := harEntryOf(d)
			if err != nil {
				t.Fatal(err)
			}
			f.Log.Entries = append(f.Log.Entries, e)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d deliveries: streamed HAR differs from the whole log:\n%s\nwant\n%s", n, got.String(), want.String())
		}
	}
}
