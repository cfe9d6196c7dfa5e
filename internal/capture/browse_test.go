package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

func browseDelivery() *store.Delivery {
	return &store.Delivery{ID: 7, ReceivedAt: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), Provider: "stripe",
		EventID: "evt_1", EventType: "invoice.paid", Method: "POST", Target: "/hooks", Proto: "HTTP/1.1",
		Headers: message.Headers{{Name: "b-Second", Value: "2"}, {Name: "A-first", Value: "1"}},
		Raw:     []byte("POST /hooks HTTP/1.1\r\n\r\n\x00"), Body: []byte(`{"a":1}`), ResponseStatus: 503,
		ResponseHeaders: message.Headers{{Name: "X", Value: "y"}}, ResponseBody: []byte("down"), Latency: time.Millisecond}
}

func TestListTableAlignedWithColour(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	ios.SetColor(true)
	d2 := browseDelivery()
	d2.ID, d2.ResponseStatus, d2.EventType = 12345, 200, "a.much.longer.event.type"
	if err := WriteList(ios, []*store.Delivery{d2, browseDelivery()}); err != nil {
		t.Fatal(err)
	}
	plain := stripANSI(out.String())
	lines := strings.Split(strings.TrimSpace(plain), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", plain)
	}
	col := strings.Index(lines[0], "STATUS")
	for _, l := range lines[1:] {
		if len(l) < col+3 || (l[col:col+3] != "200" && l[col:col+3] != "503") {
			t.Fatalf("STATUS column not aligned at %d:\n%s", col, plain)
		}
	}
	if !strings.Contains(out.String(), "\x1b[") {
		t.Fatal("no colour with colour on")
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestDetailJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteDetailJSON(&buf, browseDelivery()); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["received_at"] != "2026-01-02T03:04:05.000000600Z" {
		t.Errorf("received_at %v", got["received_at"])
	}
	hs := got["headers"].([]any)
	if first := hs[0].([]any); first[0] != "b-Second" || first[1] != "2" {
		t.Errorf("headers not ordered pairs: %v", hs)
	}
	raw, _ := base64.StdEncoding.DecodeString(got["raw_base64"].(string))
	if string(raw) != "POST /hooks HTTP/1.1\r\n\r\n\x00" {
		t.Errorf("raw_base64 %q", raw)
	}
	resp := got["response"].(map[string]any)
	if resp["status"].(float64) != 503 || resp["body_base64"] != base64.StdEncoding.EncodeToString([]byte("down")) {
		t.Errorf("response %v", resp)
	}
}

func TestDetailHumanView(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	d := browseDelivery()
	d.Body = []byte{0, 1, 2, 0xff}
	if err := WriteDetail(ios, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"delivery 7  stripe  invoice.paid  evt_1", "POST /hooks HTTP/1.1", "b-Second: 2\nA-first: 1",
		"(4 bytes of binary data; hookreplay show 7 --body writes them)", "response 503 Service Unavailable from the handler in 1.0ms", "down"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("colour with colour off")
	}
}

func TestUnits(t *testing.T) {
	sizes := map[string]int64{"10MiB": 10 << 20, "512KB": 512000, "4096": 4096, "1.5mib": 3 << 19, "2k": 2048, "1GB": 1e9, " 7 MiB ": 7 << 20}
	for in, want := range sizes {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1", "0", "ten", "10XB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	ages := map[string]time.Duration{"7d": 7 * 24 * time.Hour, "2h": 2 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, "2w": 14 * 24 * time.Hour, "1.5h": 90 * time.Minute}
	for in, want := range ages {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "7", "d", "7days", "-1h", "0s", "yesterday"} {
		if _, err := ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
	if FormatSize(10<<20) != "10MiB" || FormatSize(1500) != "1500 bytes" {
		t.Errorf("FormatSize: %s %s", FormatSize(10<<20), FormatSize(1500))
	}
	for in, ok := range map[string]bool{"12": true, "#12": true, "0": false, "x": false, "-3": false} {
		if _, err := ParseID(in); (err == nil) != ok {
			t.Errorf("ParseID(%q) err %v", in, err)
		}
	}
}

func TestForwardURL(t *testing.T) {
	cases := []struct{ base, target, want string }{
		{"http://localhost:3000", "/webhooks/stripe?x=1", "http://localhost:3000/webhooks/stripe?x=1"},
		{"http://localhost:3000/", "/a", "http://localhost:3000/a"},
		{"http://localhost:3000/base/", "/a/b", "http://localhost:3000/base/a/b"},
		{"http://h/base?k=v", "/a?x=1", "http://h/base/a?k=v&x=1"},
		{"http://h/base", "http://other.example/p%2Fq?z", "http://h/base/p%2Fq?z"},
		{"https://h", "*", "https://h/"},
		{"http://h/webhooks/stripe", "/", "http://h/webhooks/stripe"},
		{"http://h/webhooks/stripe", "/?x=1", "http://h/webhooks/stripe?x=1"},
		{"http://h/base/", "/", "http://h/base/"},
		{"http://h", "/", "http://h/"},
	}
	for _, tc := range cases {
		u, err := ParseForwardURL(tc.base)
		if err != nil {
			t.Fatal(err)
		}
		if got := forwardURL(u, tc.target); got != tc.want {
			t.Errorf("forwardURL(%s, %s) = %s, want %s", tc.base, tc.target, got, tc.want)
		}
	}
	for _, bad := range []string{"localhost:3000", "/webhooks", "ftp://h/x", "http://"} {
		if _, err := ParseForwardURL(bad); err == nil {
			t.Errorf("ParseForwardURL(%q) accepted", bad)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:9000": true, "localhost:9000": true, "[::1]:9000": true,
		"127.1.2.3:80": true, "0.0.0.0:9000": false, ":9000": false, "192.168.1.5:9000": false, "[::]:9000": false} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%s) = %v", addr, got)
		}
	}
}

func TestDetailShowsTrailers(t *testing.T) {
	raw := fixture(t, "chunked_trailers.http")
	d := browseDelivery()
	d.Raw, d.Body = raw, []byte(`{"id":"evt_chunked","type":"a.b"}`)
	ios, _, out, _ := iostreams.Test()
	if err := WriteDetail(ios, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "trailers (after the last chunk):\nX-Checksum: abc123\nX-Other: tail\n") {
		t.Fatalf("trailers missing:\n%s", out)
	}
	if tr := trailers(fixture(t, "odd_case_order.http")); tr != nil {
		t.Fatalf("trailers of a request without chunking: %v", tr)
	}
}
