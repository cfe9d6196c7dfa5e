package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// jsonlCaptured inserts the raw HTTP captures in testdata/jsonl as a capture
// would and returns them as stored.
func jsonlCaptured(t *testing.T, s *Store) []*Delivery {
	t.Helper()
	ctx := context.Background()
	var out []*Delivery
	for i, name := range []string{"stripe.http", "chunked.http"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "jsonl", name))
		if err != nil {
			t.Fatal(err)
		}
		req, err := message.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := &Delivery{
			ReceivedAt: time.Date(2026, 12, 2, 15, 0, i, 123456789, time.FixedZone("CET", 3600)),
			Source:     "capture :8080", RemoteAddr: "127.0.0.1:50000", Provider: "stripe",
			EventID: "evt_1QjsonlA", EventType: "invoice.payment_succeeded",
			Identity: map[string]string{"account": "acct_1"},
			Method:   req.Method, Target: req.Target, Proto: req.Proto, Headers: req.Headers,
			Raw: raw, Body: req.Body, Verification: "valid (stripe, v1)",
		}
		if i == 1 {
			d.Provider, d.EventID, d.EventType, d.Identity, d.Verification = "generic", "", "", nil, ""
		}
		if err := s.InsertDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := s.SetResponse(ctx, d.ID, 200, message.Headers{{Name: "Content-Type", Value: "text/plain"}},
				[]byte("ok\n"), 0, 12345678*time.Nanosecond, ""); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := s.SetResponse(ctx, d.ID, 0, nil, nil, 0, 0, "dial tcp 127.0.0.1:9: connection refused"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.GetDelivery(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// jsonlSame compares two deliveries field by field, ids aside.
func jsonlSame(t *testing.T, want, got *Delivery) {
	t.Helper()
	if !got.ReceivedAt.Equal(want.ReceivedAt) {
		t.Errorf("received_at %v, want %v", got.ReceivedAt, want.ReceivedAt)
	}
	w, g := *want, *got
	w.ID, g.ID = 0, 0
	w.ReceivedAt, g.ReceivedAt = time.Time{}, time.Time{}
	norm := func(d *Delivery) {
		if len(d.Identity) == 0 {
			d.Identity = nil
		}
		if len(d.Headers) == 0 {
			d.Headers = nil
		}
		if len(d.ResponseHeaders) == 0 {
			d.ResponseHeaders = nil
		}
		if len(d.ResponseBody) == 0 {
			d.ResponseBody = nil
		}
		if len(d.Body) == 0 {
			d.Body = nil
		}
	}
	norm(&w)
	norm(&g)
	if !reflect.DeepEqual(w, g) {
		t.Errorf("delivery differs:\n got  %+v\n want %+v", g, w)
	}
}

func TestJSONLRoundTrip(t *testing.T) { eachBackend(t, testJSONLRoundTrip) }

func testJSONLRoundTrip(t *testing.T, loc string) {
	src := deliveriesOpen(t, loc)
	ds := jsonlCaptured(t, src)
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, ds); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(ds) {
		t.Fatalf("%d lines for %d deliveries:\n%s", len(lines), len(ds), buf.String())
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"schema_version", "id", "received_at", "provider", "event_id", "event_type",
		"method", "target", "headers", "raw", "body", "response_status", "response_headers", "response_body",
		"latency_ns", "forward_error", "verification", "identity", "source", "remote_addr", "proto"} {
		if _, ok := first[key]; !ok {
			t.Errorf("line lacks %q", key)
		}
	}
	if first["received_at"] != "2026-12-02T14:00:00.123456789Z" {
		t.Errorf("received_at %v, want UTC RFC 3339 with nanoseconds", first["received_at"])
	}
	if h := first["headers"].([]any); len(h) != 7 || h[4].(map[string]any)["name"] != "x-duplicate" ||
		h[5].(map[string]any)["name"] != "X-Duplicate" {
		t.Errorf("headers lost order, case or duplicates: %v", h)
	}

	back, err := ReadJSONL(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(ds) {
		t.Fatalf("read %d deliveries, want %d", len(back), len(ds))
	}
	for i := range ds {
		if back[i].ID != ds[i].ID {
			t.Errorf("id %d, want the exported %d", back[i].ID, ds[i].ID)
		}
		jsonlSame(t, ds[i], back[i])
	}

	// Into a fresh store of the other backend (when there is a Postgres to
	// test with): new rows, everything but the id kept, bytes exact.
	dst := deliveriesOpen(t, otherBackend(t, loc))
	ctx := context.Background()
	if err := dst.InsertDelivery(ctx, &Delivery{Method: "GET", Target: "/", Raw: []byte("GET / HTTP/1.1\r\n\r\n")}); err != nil {
		t.Fatal(err)
	}
	if err := dst.ImportDeliveries(ctx, back); err != nil {
		t.Fatal(err)
	}
	for i, d := range back {
		if d.ID != int64(i+2) {
			t.Errorf("imported id %d, want %d", d.ID, i+2)
		}
		got, err := dst.GetDelivery(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Raw, ds[i].Raw) {
			t.Errorf("raw bytes changed through export and import")
		}
		jsonlSame(t, ds[i], got)
	}
}

func TestReadJSONLHandWritten(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, d *Delivery)
	}{
		{"handwritten.jsonl", func(t *testing.T, d *Delivery) {
			want := "POST /hooks/github HTTP/1.1\r\nHost: example.test\r\nX-GitHub-Event: push\r\n" +
				"X-GitHub-Delivery: 72d3162e-cc78-11e3-81ab-4c9367dc0958\r\nContent-Type: application/json\r\n" +
				"Content-Length: 25\r\n\r\n{\"ref\":\"refs/heads/main\"}"
			if string(d.Raw) != want {
				t.Errorf("raw built from the request:\n%q\nwant\n%q", d.Raw, want)
			}
			if d.ReceivedAt.UnixNano() != time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC).UnixNano() {
				t.Errorf("received_at %v", d.ReceivedAt)
			}
			if d.Proto != "HTTP/1.1" || d.EventType != "push" {
				t.Errorf("proto %q event type %q", d.Proto, d.EventType)
			}
		}},
		{"raw_only.jsonl", func(t *testing.T, d *Delivery) {
			raw, _ := os.ReadFile(filepath.Join("testdata", "jsonl", "stripe.http"))
			if !bytes.Equal(d.Raw, raw) {
				t.Error("raw changed")
			}
			if d.Method != "POST" || d.Target != "/hooks/stripe?src=cli" || d.Headers.Get("stripe-signature") == "" ||
				!bytes.HasPrefix(d.Body, []byte(`{"id":"evt_1QjsonlA"`)) {
				t.Errorf("request not parsed from raw: %s %s %v %q", d.Method, d.Target, d.Headers, d.Body)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "jsonl", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ds, err := ReadJSONL(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 {
				t.Fatalf("%d deliveries, want 1", len(ds))
			}
			tt.check(t, ds[0])
		})
	}
}

func TestReadJSONLErrors(t *testing.T) {
	tests := []struct{ file, want string }{
		{"not_json.jsonl", "line 2: not a JSON object"},
		{"truncated.jsonl", "line 2: invalid JSON"},
		{"pretty.jsonl", "line 1: invalid JSON: unexpected end of JSON input (each delivery must be on one line"},
		{"bad_base64.jsonl", "line 3: raw: illegal base64 data"},
		{"bad_time.jsonl", `line 1: received_at "yesterday" is not an RFC 3339 time`},
		{"array.jsonl", "line 1: not a JSON object"},
		{"empty_delivery.jsonl", "line 1: delivery has neither raw bytes"},
		{"wrong_type.jsonl", "line 1: response_status: want a int, got a JSON string"},
		{"newer_version.jsonl", "line 1: schema_version 99 is newer"},
		{"header_injection.jsonl", "line 1: header X-A: value holds a line break"},
		{"bad_target.jsonl", `line 1: target "/x y" is not a request target`},
		{"bad_raw.jsonl", "line 1: raw: not an HTTP request"},
		// Fields that say another request than raw: show --raw would show
		// one request and replay send the other.
		{"raw_disagrees_request.jsonl", `line 2: method "DELETE" disagrees with raw, whose request says "POST"`},
		{"raw_disagrees_header.jsonl", `line 1: header 2 "Content-Type: text/plain" disagrees with raw, whose header there is "Content-Type: application/json"`},
		{"raw_disagrees_body.jsonl", "line 1: body (12 bytes) disagrees with the body raw holds (12 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "jsonl", "bad", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			ds, err := ReadJSONL(bytes.NewReader(b))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if ds != nil {
				t.Error("deliveries returned with an error")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestReadJSONLEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "  \r\n"} {
		ds, err := ReadJSONL(strings.NewReader(in))
		if err != nil || len(ds) != 0 {
			t.Errorf("ReadJSONL(%q) = %d deliveries, %v", in, len(ds), err)
		}
	}
}

func TestImportDeliveriesAllOrNothing(t *testing.T) { eachBackend(t, testImportDeliveriesAllOrNothing) }

func testImportDeliveriesAllOrNothing(t *testing.T, loc string) {
	s := deliveriesOpen(t, loc)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ds := []*Delivery{{Method: "POST", Target: "/a", Raw: []byte("x")}}
	if err := s.ImportDeliveries(ctx, ds); err == nil {
		t.Fatal("import with a cancelled context succeeded")
	}
	got, err := s.ListDeliveries(context.Background(), Filter{})
	if err != nil || len(got) != 0 {
		t.Errorf("rows after a failed import: %d, %v", len(got), err)
	}
}

// FuzzReadJSONL: no input makes ReadJSONL panic, and what it accepts it
// writes back in a form it reads to the same deliveries.
func FuzzReadJSONL(f *testing.F) {
	for _, name := range []string{"handwritten.jsonl", "raw_only.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", "jsonl", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	bad, _ := filepath.Glob(filepath.Join("testdata", "jsonl", "bad", "*.jsonl"))
	for _, p := range bad {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ds, err := ReadJSONL(bytes.NewReader(in))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		var once bytes.Buffer
		if err := WriteJSONL(&once, ds); err != nil {
			t.Fatal(err)
		}
		again, err := ReadJSONL(bytes.NewReader(once.Bytes()))
		if err != nil {
			t.Fatalf("ReadJSONL rejects what WriteJSONL wrote: %v\n%s", err, once.String())
		}
		var twice bytes.Buffer
		if err := WriteJSONL(&twice, again); err != nil {
			t.Fatal(err)
		}
		// Strings are compared as decoded: JSON writes invalid UTF-8 as
		// \ufffd, which reads back as U+FFFD and is then written as itself.
		if !reflect.DeepEqual(jsonlLines(t, once.Bytes()), jsonlLines(t, twice.Bytes())) {
			t.Fatalf("not stable through write and read:\n%s\n%s", once.String(), twice.String())
		}
	})
}

func jsonlLines(t *testing.T, b []byte) []jsonlDelivery {
	t.Helper()
	var out []jsonlDelivery
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var j jsonlDelivery
		if err := json.Unmarshal(l, &j); err != nil {
			t.Fatalf("WriteJSONL wrote a line that is not JSON: %v\n%s", err, l)
		}
		out = append(out, j)
	}
	return out
}

// endlessLine is a JSONL line that never ends: a raw field of 'A's.
type endlessLine struct{ read int64 }

func (e *endlessLine) Read(p []byte) (int, error) {
	start := 0
	if e.read == 0 {
		start = copy(p, `{"raw":"`)
	}
	for i := start; i < len(p); i++ {
		p[i] = 'A'
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestJSONLLineBoundedWhileReading: a line longer than a delivery with a
// body of max-body can take is refused once that much of it is read, not
// after it is held whole (a multi-GB line would exhaust memory).
func TestJSONLLineBoundedWhileReading(t *testing.T) {
	const maxBody = 64 << 10
	in := &endlessLine{}
	err := EachJSONL(in, maxBody, func(int, *Delivery) error { t.Fatal("a delivery from an endless line"); return nil })
	if err == nil || !strings.Contains(err.Error(), "line 1: longer than 10496 KiB, the most a delivery with a body of up to 64 KiB takes in JSONL") {
		t.Fatalf("error %v", err)
	}
	if limit := JSONLLineLimit(maxBody); in.read > limit+128<<10 {
		t.Errorf("read %d bytes of the line before refusing it; the bound is %d", in.read, limit)
	}
}
