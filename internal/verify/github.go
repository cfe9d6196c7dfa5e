package verify

import (
	"encoding/hex"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// githubScheme: X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>,
// and the legacy X-Hub-Signature: sha1=<hex HMAC-SHA1>.
type githubScheme struct{}

var _ Scheme = githubScheme{}

const (
	githubSig256   = "X-Hub-Signature-256"
	githubSig1     = "X-Hub-Signature"
	githubDelivery = "X-GitHub-Delivery"
)

func (githubScheme) Name() string                       { return "github" }
func (githubScheme) Title() string                      { return "GitHub" }
func (githubScheme) Tolerance() time.Duration           { return 0 }
func (githubScheme) SignatureHeaders() []string         { return []string{githubSig1, githubSig256} }
func (githubScheme) SignsURL() bool                     { return false }
func (githubScheme) BodyEdited(*message.Request) string { return "" }
func (githubScheme) IdentityInBody() bool               { return false }
func (githubScheme) IdentitySigned() bool               { return false }
func (githubScheme) NewEventID() string                 { return newUUID() }
func (githubScheme) ResponseTimeout() time.Duration     { return 10 * time.Second }
func (githubScheme) MarkRetry(*message.Request, int)    {}
func (githubScheme) Challenge(*message.Request) string  { return "" }
func (githubScheme) Detects(h message.Headers) bool {
	return h.Has("X-GitHub-Event") || h.Has(githubDelivery)
}
func (githubScheme) SignedAt(*message.Request) (time.Time, bool) {
	return time.Time{}, false
}

func (githubScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: "github", EventID: r.Headers.Get(githubDelivery), EventType: r.Headers.Get("X-GitHub-Event")}
	if m := githubPayload(r); m != nil && id.EventType != "" {
		if a := str(m, "action"); a != "" {
			id.EventType += "." + a
		}
	}
	return id
}

var _ Handshaker = githubScheme{}

// Handshake: ping is what GitHub sends when a webhook is created (and on
// "Redeliver" of that ping), not an event of the repository.
func (githubScheme) Handshake(r *message.Request) string {
	if !strings.EqualFold(r.Headers.Get("X-GitHub-Event"), "ping") {
		return ""
	}
	return "GitHub's ping (sent when the webhook is created)"
}

// githubPayload decodes the event JSON: the body, or for a webhook whose
// content type is application/x-www-form-urlencoded, its payload parameter.
func githubPayload(r *message.Request) map[string]any {
	if m := jsonObject(r.Body); m != nil {
		return m
	}
	ct, _, _ := mime.ParseMediaType(r.Headers.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return nil
	}
	v, err := url.ParseQuery(string(r.Body))
	if err != nil {
		return nil
	}
	return jsonObject([]byte(v.Get("payload")))
}

// parseGitHubSignature splits "sha256=<hex>" and checks the algorithm prefix.
func parseGitHubSignature(header, value, algo string) (string, string) {
	// The prefix is matched exactly: @octokit/webhooks-methods compares the
	// whole "sha256=<hex>" string.
	a, sig, ok := strings.Cut(value, "=")
	if !ok || a != algo {
		return "", "malformed " + header + " header: want " + algo + "=<hex>"
	}
	if _, err := hex.DecodeString(sig); err != nil || len(sig) == 0 {
		return "", "malformed " + header + " header: signature is not hex"
	}
	return sig, ""
}

func (githubScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	// The SHA-256 header wins when present; the SHA-1 one is legacy.
	if r.Headers.Has(githubSig256) {
		sig, bad := parseGitHubSignature(githubSig256, r.Headers.Get(githubSig256), "sha256")
		if bad != "" {
			return invalid("github", "sha256", bad), nil
		}
		if want := macSHA256([]byte(secret), r.Body); !equalHex(sig, want) {
			return invalid("github", "sha256", mismatch([]string{sig}, want, false)), nil
		}
		return valid("github", "sha256", time.Time{}, opt.Now), nil
	}
	if r.Headers.Has(githubSig1) {
		sig, bad := parseGitHubSignature(githubSig1, r.Headers.Get(githubSig1), "sha1")
		if bad != "" {
			return invalid("github", "sha1", bad), nil
		}
		if want := macSHA1([]byte(secret), r.Body); !equalHex(sig, want) {
			return invalid("github", "sha1", mismatch([]string{sig}, want, false)), nil
		}
		return valid("github", "sha1", time.Time{}, opt.Now), nil
	}
	return missing("github", githubSig256), nil
}

func (githubScheme) Sign(r *message.Request, secret string, opt Options) error {
	// GitHub sends both headers; keep a request that only had the SHA-256
	// one that way, so a re-signed copy differs only in signature bytes.
	if r.Headers.Has(githubSig1) || !r.Headers.Has(githubSig256) {
		r.Headers = r.Headers.Set(githubSig1, "sha1="+hex.EncodeToString(macSHA1([]byte(secret), r.Body)))
	}
	r.Headers = r.Headers.Set(githubSig256, "sha256="+hex.EncodeToString(macSHA256([]byte(secret), r.Body)))
	return nil
}

func (githubScheme) Reidentify(r *message.Request, newID string) error {
	r.Headers = r.Headers.Set(githubDelivery, newID)
	return nil
}

// Retries: GitHub documents no automatic redelivery for repository and
// organisation webhooks (failed deliveries are redelivered by hand or
// through the REST API within 3 days). This timetable models a sender
// that retries 8 times within ~8 hours and then gives up, the policy
// hookreplay's issue asks for; geometric factor 2.58, last at 8 h.
func (githubScheme) Retries() Schedule {
	return Schedule{
		Retries: []time.Duration{
			1 * time.Minute,
			3*time.Minute + 35*time.Second,
			10*time.Minute + 14*time.Second,
			27*time.Minute + 23*time.Second,
			1*time.Hour + 11*time.Minute + 38*time.Second,
			3*time.Hour + 5*time.Minute + 44*time.Second,
			8 * time.Hour,
		},
		Final:  "delivery marked failed (redeliver manually within 3 days)",
		Source: "https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries (no automatic redelivery documented; 8 attempts in ~8 h modelled)",
	}
}

func (githubScheme) Samples() []Fixture {
	return []Fixture{
		{"github", "push", "github/push.json", "one commit pushed to Codertocat/Hello-World main"},
		{"github", "issues.opened", "github/issues.opened.json", "issue #1 opened in Codertocat/Hello-World"},
		{"github", "pull_request.opened", "github/pull_request.opened.json", "pull request #2 opened in Codertocat/Hello-World"},
		{"github", "installation.created", "github/installation.created.json", "GitHub App installed on octo-org, two repositories"},
	}
}

// Sample: X-GitHub-Event is the event's name before the dot (the action is
// in the body). A payload with an "installation" object is one a GitHub App
// receives: its hook belongs to the app ("integration", the app's id).
func (githubScheme) Sample(r *message.Request, event, id string, _ time.Time) error {
	ev, _, _ := strings.Cut(event, ".")
	if ev == "" {
		return &OptionError{Field: "Event", Provider: "github", Detail: "X-GitHub-Event"}
	}
	targetType, targetID := "repository", "186853002"
	if inst, ok := jsonObject(r.Body)["installation"].(map[string]any); ok {
		targetType, targetID = "integration", "982311"
		if app, ok := inst["app_id"].(float64); ok {
			targetID = strconv.FormatInt(int64(app), 10)
		}
	}
	addHeaders(r,
		"Accept", "*/*",
		"Content-Type", "application/json",
		"User-Agent", "GitHub-Hookshot/"+randomString("0123456789abcdef", 7),
		githubDelivery, id,
		"X-GitHub-Event", ev,
		"X-GitHub-Hook-ID", "482173901",
		"X-GitHub-Hook-Installation-Target-ID", targetID,
		"X-GitHub-Hook-Installation-Target-Type", targetType)
	return nil
}
