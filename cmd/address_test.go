package cmd

import (
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

func TestHandlerURLAndListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"3000":                         "http://127.0.0.1:3000",
		":3000":                        "http://127.0.0.1:3000",
		"3000/webhooks/stripe":         "http://127.0.0.1:3000/webhooks/stripe",
		"localhost:3000":               "http://localhost:3000",
		"localhost:3000/":              "http://localhost:3000/",
		"localhost:3000/hook?x=1":      "http://localhost:3000/hook?x=1",
		"[::1]:8080/h":                 "http://[::1]:8080/h",
		"https://example.com:8443/h":   "https://example.com:8443/h",
		"http://127.0.0.1:1/":          "http://127.0.0.1:1/",
		"not a url":                    "not a url",
		"":                             "",
		"99999":                        "99999",
		"example.com/webhooks":         "example.com/webhooks",
		"http://localhost:3000/a/3000": "http://localhost:3000/a/3000",
	} {
		if got := handlerURL(in); got != want {
			t.Errorf("handlerURL(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"3000":         "127.0.0.1:3000",
		":3000":        ":3000",
		"0.0.0.0:3000": "0.0.0.0:3000",
		"localhost:1":  "localhost:1",
	} {
		if got := listenAddr(in); got != want {
			t.Errorf("listenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAddressFlags: every address flag takes a bare port.
func TestAddressFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := newFactory(io)
	var r *replayOptions
	if code, msg := captureRunFlags(newReplayCmd(f, func(o *replayOptions) error { r = o; return nil }), io, []string{"1", "--to", "3000/webhooks"}); code != 0 || r.To != "http://127.0.0.1:3000/webhooks" {
		t.Errorf("replay --to 3000/webhooks: %d %s %+v", code, msg, r)
	}
	var c *checkOptions
	if code, msg := captureRunFlags(newCheckCmd(f, func(o *checkOptions) error { c = o; return nil }), io, []string{"1", "--to", "localhost:3000"}); code != 0 || c.To != "http://localhost:3000" {
		t.Errorf("check --to localhost:3000: %d %s %+v", code, msg, c)
	}
	var cp *captureOptions
	if code, msg := captureRunFlags(newCaptureCmd(f, func(o *captureOptions) error { cp = o; return nil }), io, []string{"--listen", "9001", "--forward", "3000"}); code != 0 || cp.Listen != "127.0.0.1:9001" || cp.Forward != "http://127.0.0.1:3000" {
		t.Errorf("capture --listen 9001 --forward 3000: %d %s %+v", code, msg, cp)
	}
	var s *sendOptions
	if code, msg := captureRunFlags(newSendCmd(f, func(o *sendOptions) error { s = o; return nil }), io, []string{"--provider", "stripe", "--event", "invoice.paid", "--to", "3000/webhooks/stripe", "--secret", "whsec_x"}); code != 0 || s.To != "http://127.0.0.1:3000/webhooks/stripe" {
		t.Errorf("send --to 3000/webhooks/stripe: %d %s %+v", code, msg, s)
	}
}
