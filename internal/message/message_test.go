package message

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

func TestParseKeepsOrderCaseAndDuplicates(t *testing.T) {
	raw, err := os.ReadFile("testdata/chunked.http")
	if err != nil {
		t.Fatal(err)
	}
	req, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != "POST" || req.Target != "/hooks/stripe?x=1" || string(req.Body) != `{"a":1}` {
		t.Fatalf("parsed %+v body %q", req, req.Body)
	}
	want := []string{"host", "X-Dup", "Stripe-Signature", "X-Dup", "Transfer-Encoding", "Content-Type"}
	if len(req.Headers) != len(want) {
		t.Fatalf("headers %v", req.Headers)
	}
	for i, h := range req.Headers {
		if h.Name != want[i] {
			t.Fatalf("header %d is %q, want %q", i, h.Name, want[i])
		}
	}
	if got := req.Headers.Values("x-dup"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("duplicates %v", got)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	raw, _ := os.ReadFile("testdata/chunked.http")
	req, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	wire := req.Encode("127.0.0.1:8080", "/other")
	back, err := Parse(wire)
	if err != nil {
		t.Fatalf("parse encoded: %v\n%s", err, wire)
	}
	if !bytes.Equal(back.Body, req.Body) || back.Target != "/other" || back.Headers.Get("Host") != "127.0.0.1:8080" {
		t.Fatalf("round trip: %+v", back)
	}
	if back.Headers.Has("Transfer-Encoding") || back.Headers.Get("Content-Length") != "7" {
		t.Fatalf("framing not replaced: %v", back.Headers)
	}
	// Headers keep their order: host first, then X-Dup, Stripe-Signature, X-Dup.
	if back.Headers[0].Name != "host" || back.Headers[1].Name != "X-Dup" || back.Headers[2].Name != "Stripe-Signature" {
		t.Fatalf("order lost: %v", back.Headers)
	}
}

func TestEncodeAddsHostFirst(t *testing.T) {
	req := &Request{Method: "POST", Target: "/a", Headers: Headers{{"X-A", "1"}}, Body: []byte("x")}
	wire := string(req.Encode("h:1", ""))
	want := "POST /a HTTP/1.1\r\nHost: h:1\r\nX-A: 1\r\nContent-Length: 1\r\n\r\nx"
	if wire != want {
		t.Fatalf("got %q want %q", wire, want)
	}
}

func TestHeadersSetDel(t *testing.T) {
	h := Headers{{"a", "1"}, {"B", "2"}, {"A", "3"}}
	h = h.Set("A", "9")
	if len(h) != 2 || h[0].Name != "a" || h[0].Value != "9" {
		t.Fatalf("set: %v", h)
	}
	h = h.Del("b")
	if len(h) != 1 {
		t.Fatalf("del: %v", h)
	}
}

func TestParseHeaderLine(t *testing.T) {
	if h, err := ParseHeaderLine("X-A:  b c "); err != nil || h.Name != "X-A" || h.Value != "b c" {
		t.Fatalf("%v %v", h, err)
	}
	for _, bad := range []string{"nocolon", ": v", "a b: c"} {
		if _, err := ParseHeaderLine(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, in := range []string{"", "GET\r\n\r\n", "GET / HTTP/1.1\r\nbad header\r\n\r\n"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Fatalf("%q parsed", in)
		}
	}
}

func TestHeadRecorderResponseHeaders(t *testing.T) {
	for _, tc := range []struct{ name, raw string }{
		{"crlf", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nx-B: 1\r\nContent-Length: 2\r\n\r\nok"},
		{"bare lf", "HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\nx-B: 1\nContent-Length: 2\n\nok"},
	} {
		rec := &HeadRecorder{R: strings.NewReader(tc.raw)}
		if _, err := io.ReadAll(rec); err != nil {
			t.Fatal(err)
		}
		rec.Stop()
		hs := rec.ResponseHeaders(2)
		if len(hs) != 2 || hs[0].Name != "x-B" || hs[0].Value != "1" || hs[1].Name != "Content-Length" {
			t.Fatalf("%s: %v", tc.name, hs)
		}
	}
}
