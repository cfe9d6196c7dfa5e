package verify

import (
	"crypto/ed25519"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// discordScheme is Discord's interactions endpoint: X-Signature-Ed25519 is
// the hex Ed25519 signature of X-Signature-Timestamp followed by the body,
// made with the application's private key; handlers verify it with the
// public key the Developer Portal shows. hookreplay verifies with that
// public key and signs only with the private key of a test key pair (see
// KeyPair).
type discordScheme struct{}

var (
	_ Scheme     = discordScheme{}
	_ KeyPair    = discordScheme{}
	_ Handshaker = discordScheme{}
)

const (
	discordSig = "X-Signature-Ed25519"
	discordTS  = "X-Signature-Timestamp"
)

func (discordScheme) Name() string                       { return "discord" }
func (discordScheme) Title() string                      { return "Discord interactions" }
func (discordScheme) SignatureHeaders() []string         { return []string{discordSig, discordTS} }
func (discordScheme) SignsURL() bool                     { return false }
func (discordScheme) BodyEdited(*message.Request) string { return "" }
func (discordScheme) IdentityInBody() bool               { return true }
func (discordScheme) IdentitySigned() bool               { return true }
func (discordScheme) MarkRetry(*message.Request, int)    {}
func (discordScheme) Challenge(*message.Request) string  { return "" }
func (discordScheme) Detects(h message.Headers) bool {
	return h.Has(discordSig) && h.Has(discordTS)
}

// Tolerance: Discord's docs and its discord-interactions library check
// the signature and not the timestamp's age, so neither does hookreplay.
func (discordScheme) Tolerance() time.Duration { return 0 }

// SignedAt reports no timestamp: the timestamp is signed but no age is
// enforced by Discord's own verification, so an old signature is not a
// forgery a handler must refuse (check sends no hour-old copy).
func (discordScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

// ResponseTimeout: an interaction must be answered within 3 seconds.
func (discordScheme) ResponseTimeout() time.Duration { return 3 * time.Second }

// Retries: Discord does not resend an interaction; the user sees "The
// application did not respond".
func (discordScheme) Retries() Schedule { return Schedule{} }

// NewEventID is a snowflake of now: milliseconds since the Discord epoch
// (2015) shifted left 22 bits, the low bits random.
func (discordScheme) NewEventID() string {
	ms := time.Now().UnixMilli() - 1420070400000
	low, _ := strconv.ParseUint(randomString("0123456789", 6), 10, 64)
	return strconv.FormatUint(uint64(ms)<<22|low%(1<<22), 10)
}

var discordTypes = map[float64]string{1: "PING", 2: "APPLICATION_COMMAND", 3: "MESSAGE_COMPONENT", 4: "APPLICATION_COMMAND_AUTOCOMPLETE", 5: "MODAL_SUBMIT"}

func (discordScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	id := Identity{Provider: "discord", EventID: str(m, "id")}
	if t, ok := m["type"].(float64); ok {
		id.EventType = discordTypes[t]
		if id.EventType == "" {
			id.EventType = strconv.FormatFloat(t, 'f', -1, 64)
		}
	}
	return id
}

// Handshake: Discord sends a PING when the interactions endpoint URL is
// saved (and now and then), to be answered {"type":1}.
func (s discordScheme) Handshake(r *message.Request) string {
	if s.Identity(r).EventType != "PING" {
		return ""
	}
	return "Discord's PING (sent when the interactions endpoint URL is saved, answered {\"type\":1})"
}

func (discordScheme) CanSign(secret string) bool {
	priv, _, err := ed25519Key(secret)
	return err == nil && priv != nil
}

func (discordScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	_, pub, err := ed25519Key(secret)
	if err != nil {
		return Result{}, err
	}
	for _, h := range []string{discordSig, discordTS} {
		if !r.Headers.Has(h) {
			return missing("discord", h), nil
		}
	}
	sig, err := hex.DecodeString(strings.TrimSpace(r.Headers.Get(discordSig)))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return invalid("discord", "ed25519", "malformed "+discordSig+" header: not a hex Ed25519 signature"), nil
	}
	msg := append([]byte(r.Headers.Get(discordTS)), r.Body...)
	if !ed25519.Verify(pub, msg, sig) {
		return invalid("discord", "ed25519", "signature mismatch"), nil
	}
	return valid("discord", "ed25519", time.Time{}, opt.Now), nil
}

func (discordScheme) Sign(r *message.Request, secret string, opt Options) error {
	priv, _, err := ed25519Key(secret)
	if err != nil {
		return err
	}
	if priv == nil {
		return publicKeyOnly("Discord")
	}
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	r.Headers = r.Headers.Set(discordSig, hex.EncodeToString(ed25519.Sign(priv, append([]byte(ts), r.Body...))))
	r.Headers = r.Headers.Set(discordTS, ts)
	return nil
}

// Reidentify sets the interaction's id; its token is left as it is.
func (discordScheme) Reidentify(r *message.Request, newID string) error {
	b, err := replaceTopLevelString(r.Body, "id", newID)
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

func (discordScheme) Samples() []Fixture {
	return []Fixture{
		{"discord", "APPLICATION_COMMAND", "discord/application_command.json", "the /order slash command with two options, in a guild channel"},
		{"discord", "MESSAGE_COMPONENT", "discord/message_component.json", "a click on a message's Confirm button"},
	}
}

func (discordScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json", "User-Agent", "Discord-Interactions/1.0 (+https://discord.com)")
	return nil
}
