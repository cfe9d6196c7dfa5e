package verify

import (
	"encoding/hex"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// intercomScheme: X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body>, keyed
// with the app's client secret. GitHub and Meta use the same header name;
// an Intercom delivery is told apart by its body, a notification_event
// ({"type":"notification_event","topic":…,"id":"notif_…"}), and carries no
// X-GitHub-* header.
type intercomScheme struct{}

var (
	_ Scheme          = intercomScheme{}
	_ RequestDetector = intercomScheme{}
)

const intercomSig = "X-Hub-Signature"

func (intercomScheme) Name() string                                { return "intercom" }
func (intercomScheme) Title() string                               { return "Intercom" }
func (intercomScheme) Tolerance() time.Duration                    { return 0 }
func (intercomScheme) SignatureHeaders() []string                  { return []string{intercomSig} }
func (intercomScheme) SignsURL() bool                              { return false }
func (intercomScheme) BodyEdited(*message.Request) string          { return "" }
func (intercomScheme) IdentityInBody() bool                        { return true }
func (intercomScheme) IdentitySigned() bool                        { return true }
func (intercomScheme) NewEventID() string                          { return "notif_" + newUUID() }
func (intercomScheme) MarkRetry(*message.Request, int)             {}
func (intercomScheme) Challenge(*message.Request) string           { return "" }
func (intercomScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

// ResponseTimeout: Intercom counts a notification not answered within 5
// seconds as failed.
func (intercomScheme) ResponseTimeout() time.Duration { return 5 * time.Second }

// Retries: Intercom publishes no retry timetable; none is modelled.
func (intercomScheme) Retries() Schedule { return Schedule{} }

// Detects is false: the header alone is GitHub's as much as Intercom's.
func (intercomScheme) Detects(message.Headers) bool { return false }

func (intercomScheme) DetectsRequest(r *message.Request) bool {
	h := r.Headers
	if !h.Has(intercomSig) || h.Has("X-GitHub-Event") || h.Has(githubDelivery) {
		return false
	}
	m := jsonObject(r.Body)
	return str(m, "type") == "notification_event" && str(m, "topic") != ""
}

func (intercomScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	return Identity{Provider: "intercom", EventID: str(m, "id"), EventType: str(m, "topic")}
}

func (intercomScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(intercomSig) {
		return missing("intercom", intercomSig), nil
	}
	sig, ok := strings.CutPrefix(r.Headers.Get(intercomSig), "sha1=")
	if !ok {
		return invalid("intercom", "sha1", "malformed "+intercomSig+" header: no sha1= prefix"), nil
	}
	if want := macSHA1([]byte(secret), r.Body); !equalHex(sig, want) {
		return invalid("intercom", "sha1", mismatch([]string{sig}, want, false)), nil
	}
	return valid("intercom", "sha1", time.Time{}, opt.Now), nil
}

func (intercomScheme) Sign(r *message.Request, secret string, _ Options) error {
	r.Headers = r.Headers.Set(intercomSig, "sha1="+hex.EncodeToString(macSHA1([]byte(secret), r.Body)))
	return nil
}

func (intercomScheme) Reidentify(r *message.Request, newID string) error {
	b, err := replaceTopLevelString(r.Body, "id", newID)
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

func (intercomScheme) Samples() []Fixture {
	return []Fixture{
		{"intercom", "conversation.user.created", "intercom/conversation.user.created.json", "a customer started a conversation in the Messenger"},
		{"intercom", "contact.user.created", "intercom/contact.user.created.json", "a user contact created"},
	}
}

func (intercomScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json")
	return nil
}
