package verify

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// slackScheme: X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<ts>:<body>">
// keyed with the signing secret, X-Slack-Request-Timestamp: <unix>.
type slackScheme struct{}

var _ Scheme = slackScheme{}

const (
	slackSig = "X-Slack-Signature"
	slackTS  = "X-Slack-Request-Timestamp"
)

func (slackScheme) Name() string                       { return "slack" }
func (slackScheme) Title() string                      { return "Slack" }
func (slackScheme) Detects(h message.Headers) bool     { return h.Has(slackSig) }
func (slackScheme) Tolerance() time.Duration           { return 300 * time.Second }
func (slackScheme) SignatureHeaders() []string         { return []string{slackTS, slackSig} }
func (slackScheme) SignsURL() bool                     { return false }
func (slackScheme) BodyEdited(*message.Request) string { return "" }
func (slackScheme) IdentityInBody() bool               { return true }
func (slackScheme) IdentitySigned() bool               { return true }

// ResponseTimeout: the Events API counts an answer slower than 3 s as failed.
func (slackScheme) ResponseTimeout() time.Duration { return 3 * time.Second }

// Retries: Events API, "up to 3 times ... nearly immediately, after 1
// minute, and after 5 minutes".
func (slackScheme) Retries() Schedule {
	return Schedule{
		Retries: []time.Duration{1 * time.Second, 1 * time.Minute, 5 * time.Minute},
		Final:   "event dropped (and the app's events may be disabled after repeated failures)",
		Source:  "https://api.slack.com/apis/events-api#retries (3 retries: nearly immediately, 1 min, 5 min)",
	}
}

// MarkRetry: Slack is the one provider that marks its retries
// (X-Slack-Retry-Num, X-Slack-Retry-Reason); its signature covers the
// timestamp and body, not these headers.
func (slackScheme) MarkRetry(r *message.Request, n int) {
	r.Headers = r.Headers.Set("X-Slack-Retry-Num", strconv.Itoa(n))
	r.Headers = r.Headers.Set("X-Slack-Retry-Reason", "http_timeout")
}

// Challenge: a url_verification request must get its challenge back
// before Slack enables an Events API URL.
func (sc slackScheme) Challenge(r *message.Request) string {
	if sc.Identity(r).EventType != "url_verification" {
		return ""
	}
	var v struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(r.Body, &v) != nil {
		return ""
	}
	return v.Challenge
}

var _ Handshaker = slackScheme{}

// Handshake: url_verification is the request Slack sends when an app's
// Request URL is set, not an event.
func (sc slackScheme) Handshake(r *message.Request) string {
	if sc.Identity(r).EventType != "url_verification" {
		return ""
	}
	return "Slack's url_verification handshake (sent when the app's Request URL is set)"
}

func (slackScheme) Samples() []Fixture {
	return []Fixture{
		{"slack", "event_callback", "slack/event_callback.json", "Events API app_mention in a channel"},
		{"slack", "message.channels", "slack/message.channels.json", "Events API event_callback: a message posted in a public channel"},
	}
}

func (slackScheme) Sample(r *message.Request, _, _ string, now time.Time) error {
	addHeaders(r,
		"Accept", "*/*",
		"Accept-Encoding", "gzip,deflate",
		"Content-Type", "application/json",
		"User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	stampTime(r, "event_time", now)
	return nil
}

func (slackScheme) NewEventID() string {
	return "Ev" + randomString("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 10)
}

func (slackScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: "slack"}
	m := jsonObject(r.Body)
	if m == nil {
		return id
	}
	id.EventID = str(m, "event_id")
	if ev, ok := m["event"].(map[string]any); ok {
		id.EventType = str(ev, "type")
	}
	if id.EventType == "" {
		id.EventType = str(m, "type")
	}
	return id
}

func parseUnix(s string) (time.Time, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

func (slackScheme) SignedAt(r *message.Request) (time.Time, bool) {
	return parseUnix(r.Headers.Get(slackTS))
}

func slackMAC(secret, ts string, body []byte) []byte {
	return macSHA256([]byte(secret), []byte("v0:"+ts+":"), body)
}

func (sc slackScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	for _, h := range []string{slackSig, slackTS} {
		if !r.Headers.Has(h) {
			return missing("slack", h), nil
		}
	}
	tsRaw := strings.TrimSpace(r.Headers.Get(slackTS))
	t, ok := parseUnix(tsRaw)
	if !ok {
		return invalid("slack", "v0", "malformed "+slackTS+" header: not a unix timestamp"), nil
	}
	ver, sig, ok := strings.Cut(strings.TrimSpace(r.Headers.Get(slackSig)), "=")
	if !ok || ver != "v0" {
		return invalid("slack", "v0", "malformed "+slackSig+" header: want v0=<hex>"), nil
	}
	if want := slackMAC(secret, tsRaw, r.Body); !equalHex(sig, want) {
		res := invalid("slack", "v0", mismatch([]string{sig}, want, false))
		res.SignedAt, res.CheckedAt = t, opt.Now
		return res, nil
	}
	return checkAge(valid("slack", "v0", t, opt.Now), t, opt.Now, tolOr(opt, sc.Tolerance()), false), nil
}

func (slackScheme) Sign(r *message.Request, secret string, opt Options) error {
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	r.Headers = r.Headers.Set(slackTS, ts)
	r.Headers = r.Headers.Set(slackSig, "v0="+hex.EncodeToString(slackMAC(secret, ts, r.Body)))
	return nil
}

func (slackScheme) Reidentify(r *message.Request, newID string) error {
	b, err := replaceTopLevelString(r.Body, "event_id", newID)
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}
