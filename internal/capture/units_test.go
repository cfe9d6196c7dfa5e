package capture

import (
	"testing"
	"time"
)

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
}

func TestForwardURL(t *testing.T) {
	cases := []struct{ base, target, want string }{
		{"http://localhost:3000", "/webhooks/stripe?x=1", "http://localhost:3000/webhooks/stripe?x=1"},
		{"http://localhost:3000/", "/a", "http://localhost:3000/a"},
		{"http://localhost:3000/base/", "/a/b", "http://localhost:3000/base/a/b"},
		{"http://h/base?k=v", "/a?x=1", "http://h/base/a?k=v&x=1"},
		{"http://h/base", "http://other.example/p%2Fq?z", "http://h/base/p%2Fq?z"},
		{"https://h", "*", "https://h/"},
		{"http://h/base", "example.com:443", "http://h/base"}, // CONNECT's authority-form: was http://h/baseexample.com:443
		{"http://h", "example.com:443", "http://h/"},
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
