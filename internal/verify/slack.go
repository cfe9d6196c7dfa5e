package verify

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// slackScheme: X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<ts>:<body>">
// keyed with the signing secret, X-Slack-Request-Timestamp: <unix>.
type slackScheme struct{}

const (
	slackSig = "X-Slack-Signature"
	slackTS  = "X-Slack-Request-Timestamp"
)

func (slackScheme) Name() string               { return "slack" }
func (slackScheme) Tolerance() time.Duration   { return 300 * time.Second }
func (slackScheme) SignatureHeaders() []string { return []string{slackTS, slackSig} }
func (slackScheme) IdentityInBody() bool       { return true }
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
	if !equalHex(sig, slackMAC(secret, tsRaw, r.Body)) {
		res := invalid("slack", "v0", "signature mismatch")
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
