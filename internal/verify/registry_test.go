package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// TestRegistry: names are unique and lower case, Providers follows the
// registry, and every sample a scheme lists is an embedded file of its own.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for i, s := range Schemes() {
		n := s.Name()
		if n == "" || n != strings.ToLower(n) || seen[n] {
			t.Errorf("scheme %d: bad or duplicate name %q", i, n)
		}
		seen[n] = true
		if Providers[i] != n {
			t.Errorf("Providers[%d] = %q, registry has %q", i, Providers[i], n)
		}
		if s.Title() == "" {
			t.Errorf("%s has no title", n)
		}
		for _, f := range s.Samples() {
			if f.Provider != n {
				t.Errorf("%s lists a sample of %s", n, f.Provider)
			}
			if _, err := fixtureFS.ReadFile("fixtures/" + f.File); err != nil {
				t.Errorf("%s sample %s: %v", n, f.Event, err)
			}
		}
	}
	if Schemes()[len(Schemes())-1].Name() != Generic {
		t.Error("generic must come last: it detects nothing and is the fallback")
	}
}

// TestDetectSvixOverStandard: Svix may send the webhook-* headers as well as
// its own; such a request is Svix's, as it was before the registry decided.
func TestDetectSvixOverStandard(t *testing.T) {
	both := &message.Request{Headers: message.Headers{
		{Name: "webhook-id", Value: "msg_1"}, {Name: "webhook-signature", Value: "v1,x"}, {Name: "svix-id", Value: "msg_1"},
	}}
	if p := Detect(both).Provider; p != "svix" {
		t.Errorf("webhook-* and svix-* headers detected as %q, want svix", p)
	}
	std := &message.Request{Headers: message.Headers{{Name: "webhook-id", Value: "msg_1"}, {Name: "webhook-signature", Value: "v1,x"}}}
	if p := Detect(std).Provider; p != "standard" {
		t.Errorf("webhook-* headers detected as %q, want standard", p)
	}
	if p := Detect(&message.Request{}).Provider; p != Generic {
		t.Errorf("no headers detected as %q, want generic", p)
	}
}

// TestMarkRetry: Slack marks a retry in two headers on a copy; the others
// resend the request as it was.
func TestMarkRetry(t *testing.T) {
	req := &message.Request{Method: "POST", Target: "/", Headers: message.Headers{{Name: "X-Slack-Signature", Value: "v0=1"}}}
	got := MarkRetry(req, Lookup("slack"), 2)
	if got.Headers.Get("X-Slack-Retry-Num") != "2" || got.Headers.Get("X-Slack-Retry-Reason") != "http_timeout" {
		t.Errorf("slack retry headers: %v", got.Headers)
	}
	if req.Headers.Has("X-Slack-Retry-Num") {
		t.Error("MarkRetry changed the caller's request")
	}
	for _, p := range []string{"stripe", "github", "shopify", "twilio", "standard", "svix", "generic", "paypal"} {
		if got := MarkRetry(req, Lookup(p), 1); len(got.Headers) != len(req.Headers) {
			t.Errorf("%s marked a retry: %v", p, got.Headers)
		}
	}
}

// TestSlackChallenge: a url_verification request asks for its challenge back.
func TestSlackChallenge(t *testing.T) {
	s, _ := SchemeFor("slack")
	hs := &message.Request{Body: []byte(`{"token":"t","challenge":"3eZbrw1aB","type":"url_verification"}`)}
	if c := s.Challenge(hs); c != "3eZbrw1aB" {
		t.Errorf("challenge %q", c)
	}
	ev := &message.Request{Body: []byte(`{"type":"event_callback","challenge":"x","event":{"type":"app_mention"}}`)}
	if c := s.Challenge(ev); c != "" {
		t.Errorf("an event callback answered challenge %q", c)
	}
}

// TestErrorsNameNoFlag: verify words its errors without command-line flags;
// an OptionError says which setting is missing so cmd can name its flag.
func TestErrorsNameNoFlag(t *testing.T) {
	body := &message.Request{Method: "POST", Target: "/", Body: []byte("a=b"), Headers: message.Headers{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}}}
	cases := []struct {
		provider string
		opt      Options
		field    string
	}{
		{"twilio", Options{}, "URL"},
		{"generic", Options{}, "Header"},
		{"generic", Options{Header: "X-Sig", Algo: "md5"}, "Algo"},
		{"generic", Options{Header: "X-Sig", Encoding: "base32"}, "Encoding"},
		{"", Options{}, "Provider"},
	}
	for _, c := range cases {
		body := body
		if c.provider == "twilio" {
			body = body.Clone()
			body.Headers = body.Headers.Set("X-Twilio-Signature", "c2ln")
		}
		_, verr := Verify(body, c.provider, "s", c.opt)
		_, serr := Sign(body, c.provider, "s", c.opt)
		for _, err := range []error{verr, serr} {
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Field != c.field {
				t.Errorf("%s %+v: %v, want an OptionError for %s", c.provider, c.opt, err, c.field)
				continue
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("%s: error names a flag: %v", c.provider, err)
			}
		}
	}
}

// RetryHeaders names what MarkRetry adds: Slack's two headers, nothing for
// providers that resend a retry unmarked (or unknown ones).
func TestRetryHeaders(t *testing.T) {
	if got := strings.Join(RetryHeaders(Lookup("slack")), ","); got != "X-Slack-Retry-Num,X-Slack-Retry-Reason" {
		t.Errorf("slack: %q", got)
	}
	for _, p := range []string{"stripe", "github", "shopify", "standard", "svix", "twilio", "generic", "nope"} {
		if got := RetryHeaders(Lookup(p)); len(got) != 0 {
			t.Errorf("%s: %q, want none", p, got)
		}
	}
}

// Handshake names the set-up requests a provider sends instead of events.
func TestHandshake(t *testing.T) {
	slack := &message.Request{Method: "POST", Target: "/", Headers: message.Headers{{Name: "Content-Type", Value: "application/json"}},
		Body: []byte(`{"token":"t","challenge":"c","type":"url_verification"}`)}
	ping := &message.Request{Method: "POST", Target: "/", Headers: message.Headers{{Name: "X-GitHub-Event", Value: "ping"}}, Body: []byte(`{"zen":"z"}`)}
	push := &message.Request{Method: "POST", Target: "/", Headers: message.Headers{{Name: "X-GitHub-Event", Value: "push"}}, Body: []byte(`{}`)}
	event := &message.Request{Method: "POST", Target: "/", Body: []byte(`{"type":"event_callback","event_id":"Ev1"}`)}
	for _, tc := range []struct {
		provider string
		req      *message.Request
		want     string
	}{
		{"slack", slack, "url_verification"}, {"github", ping, "ping"},
		{"github", push, ""}, {"slack", event, ""}, {"stripe", slack, ""}, {"nope", ping, ""},
	} {
		got := Handshake(Lookup(tc.provider), tc.req)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q, want one naming %q", tc.provider, tc.req.Body, got, tc.want)
		}
	}
}
