package address

import (
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "3000", want: "http://127.0.0.1:3000"},
		{in: ":3000", want: "http://127.0.0.1:3000"},
		{in: " 3000 ", want: "http://127.0.0.1:3000"},
		{in: "3000/webhooks/stripe", want: "http://127.0.0.1:3000/webhooks/stripe"},
		{in: "localhost:3000", want: "http://localhost:3000"},
		{in: "localhost:3000/", want: "http://localhost:3000/"},
		{in: "localhost:3000/hook?x=1", want: "http://localhost:3000/hook?x=1"},
		{in: "[::1]:8080/h", want: "http://[::1]:8080/h"},
		{in: "https://example.com:8443/h", want: "https://example.com:8443/h"},
		{in: "https://example.com/h", want: "https://example.com/h"},
		{in: "http://127.0.0.1:1/", want: "http://127.0.0.1:1/"},
		{in: "http://localhost:3000/a/3000", want: "http://localhost:3000/a/3000"},

		{in: "", err: "empty: want a URL"},
		{in: "not a url", err: Forms},
		{in: "example.com/webhooks", err: Forms},
		{in: "localhost", err: Forms},
		{in: "ftp://x/", err: Forms},
		{in: "http://:3000/", err: Forms},
		{in: "http:///h", err: Forms},
		{in: "http:x", err: Forms},
		{in: "99999", err: "port 99999 is out of range (1 to 65535)"},
		{in: ":99999", err: "port 99999 is out of range (1 to 65535)"},
		{in: "0", err: "port 0 is out of range (1 to 65535)"},
		{in: "70000/hook", err: "port 70000 is out of range (1 to 65535)"},
		{in: "localhost:70000", err: "port 70000 is out of range (1 to 65535)"},
		{in: "http://localhost:70000/", err: "port 70000 is out of range (1 to 65535)"},
		{in: "http://localhost:abc/", err: Forms},
		{in: "+3000", err: Forms},
	} {
		u, err := Handler(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Handler(%q) = %v, %v; want error containing %q", tc.in, u, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("Handler(%q): error is not one line: %q", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Handler(%q): %v", tc.in, err)
			continue
		}
		if got := Complete(tc.in); got != tc.want {
			t.Errorf("Complete(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if u.Scheme+"://"+u.Host != tc.want[:len(u.Scheme+"://"+u.Host)] {
			t.Errorf("Handler(%q) = %v, want %s", tc.in, u, tc.want)
		}
	}
}
