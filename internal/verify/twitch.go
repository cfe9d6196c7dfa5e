package verify

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// twitchScheme is Twitch EventSub over webhooks:
// Twitch-Eventsub-Message-Signature is "sha256=" and the hex HMAC-SHA256 of
// Twitch-Eventsub-Message-Id + Twitch-Eventsub-Message-Timestamp + body,
// keyed with the secret given when subscribing. A subscription starts with a
// webhook_callback_verification request whose challenge is answered as is.
type twitchScheme struct{}

var (
	_ Scheme     = twitchScheme{}
	_ Handshaker = twitchScheme{}
)

const (
	twitchID      = "Twitch-Eventsub-Message-Id"
	twitchRetry   = "Twitch-Eventsub-Message-Retry"
	twitchType    = "Twitch-Eventsub-Message-Type"
	twitchSig     = "Twitch-Eventsub-Message-Signature"
	twitchTS      = "Twitch-Eventsub-Message-Timestamp"
	twitchSubType = "Twitch-Eventsub-Subscription-Type"
)

func (twitchScheme) Name() string                       { return "twitch" }
func (twitchScheme) Title() string                      { return "Twitch EventSub" }
func (twitchScheme) SignatureHeaders() []string         { return []string{twitchID, twitchTS, twitchSig} }
func (twitchScheme) SignsURL() bool                     { return false }
func (twitchScheme) BodyEdited(*message.Request) string { return "" }
func (twitchScheme) IdentityInBody() bool               { return false }
func (twitchScheme) NewEventID() string                 { return newUUID() }
func (twitchScheme) Detects(h message.Headers) bool     { return h.Has(twitchID) && h.Has(twitchSig) }

// IdentitySigned: the message id is part of the signed string.
func (twitchScheme) IdentitySigned() bool { return true }

// Tolerance: Twitch's docs tell handlers to refuse a message whose
// timestamp is more than 10 minutes old.
func (twitchScheme) Tolerance() time.Duration { return 10 * time.Minute }

// ResponseTimeout: Twitch counts a notification not answered 2xx "within a
// few seconds" as failed; hookreplay takes 3 s.
func (twitchScheme) ResponseTimeout() time.Duration { return 3 * time.Second }

// Retries: Twitch resends a failed notification with the same message id
// and Twitch-Eventsub-Message-Retry counting up, and revokes a subscription
// whose notifications keep failing (notification_failures_exceeded); it
// publishes no timetable, so hookreplay models none.
func (twitchScheme) Retries() Schedule { return Schedule{} }

// MarkRetry sets Twitch-Eventsub-Message-Retry, outside the signature.
func (twitchScheme) MarkRetry(r *message.Request, n int) {
	r.Headers = r.Headers.Set(twitchRetry, strconv.Itoa(n))
}

func (twitchScheme) Identity(r *message.Request) Identity {
	id := Identity{Provider: "twitch", EventID: r.Headers.Get(twitchID), EventType: r.Headers.Get(twitchSubType)}
	if mt := r.Headers.Get(twitchType); mt != "" && mt != "notification" {
		id.EventType = mt
	}
	return id
}

func (twitchScheme) Challenge(r *message.Request) string {
	if r.Headers.Get(twitchType) != "webhook_callback_verification" {
		return ""
	}
	return str(jsonObject(r.Body), "challenge")
}

// Handshake: the subscription's callback verification and a revocation
// are messages about the subscription, not events.
func (twitchScheme) Handshake(r *message.Request) string {
	switch r.Headers.Get(twitchType) {
	case "webhook_callback_verification":
		return "Twitch's webhook_callback_verification (sent when a subscription is created, answered with its challenge)"
	case "revocation":
		return "Twitch's revocation of the subscription"
	}
	return ""
}

func (twitchScheme) SignedAt(r *message.Request) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(r.Headers.Get(twitchTS)))
	return t, err == nil
}

func twitchMAC(secret, id, ts string, body []byte) []byte {
	return macSHA256([]byte(secret), []byte(id+ts), body)
}

func (s twitchScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	for _, h := range []string{twitchID, twitchTS, twitchSig} {
		if !r.Headers.Has(h) {
			return missing("twitch", h), nil
		}
	}
	t, ok := s.SignedAt(r)
	if !ok {
		return invalid("twitch", "sha256", "malformed "+twitchTS+" header: not an RFC 3339 timestamp"), nil
	}
	sig, found := strings.CutPrefix(r.Headers.Get(twitchSig), "sha256=")
	if !found {
		return invalid("twitch", "sha256", "malformed "+twitchSig+" header: no sha256= prefix"), nil
	}
	want := twitchMAC(secret, r.Headers.Get(twitchID), r.Headers.Get(twitchTS), r.Body)
	if !equalHex(sig, want) {
		res := invalid("twitch", "sha256", mismatch([]string{sig}, want, false))
		res.SignedAt, res.CheckedAt = t, opt.Now
		return res, nil
	}
	return checkAge(valid("twitch", "sha256", t, opt.Now), t, opt.Now, tolOr(opt, s.Tolerance()), true), nil
}

func (s twitchScheme) Sign(r *message.Request, secret string, opt Options) error {
	id := r.Headers.Get(twitchID)
	if id == "" {
		id = s.NewEventID()
		r.Headers = r.Headers.Set(twitchID, id)
	}
	ts := opt.Now.UTC().Format(time.RFC3339Nano)
	r.Headers = r.Headers.Set(twitchTS, ts)
	r.Headers = r.Headers.Set(twitchSig, "sha256="+hex.EncodeToString(twitchMAC(secret, id, ts, r.Body)))
	return nil
}

func (twitchScheme) Reidentify(r *message.Request, newID string) error {
	r.Headers = r.Headers.Set(twitchID, newID)
	return nil
}

func (twitchScheme) Samples() []Fixture {
	return []Fixture{
		{"twitch", "channel.follow", "twitch/channel.follow.json", "a user followed the channel"},
		{"twitch", "channel.subscribe", "twitch/channel.subscribe.json", "a tier 1 subscription to the channel"},
	}
}

// Sample: the subscription type is the event name; the message carries it
// and its version in headers.
func (twitchScheme) Sample(r *message.Request, event, id string, _ time.Time) error {
	if event == "" {
		return &OptionError{Field: "Event", Provider: "twitch", Detail: twitchSubType}
	}
	version := "1"
	if event == "channel.follow" {
		version = "2"
	}
	addHeaders(r,
		"Content-Type", "application/json",
		twitchID, id,
		twitchRetry, "0",
		twitchType, "notification",
		twitchSubType, event,
		"Twitch-Eventsub-Subscription-Version", version)
	return nil
}
