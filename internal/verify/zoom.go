package verify

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// zoomScheme: x-zm-signature: v0=<hex HMAC-SHA256 of "v0:<ts>:<body>">,
// x-zm-request-timestamp <ts>, keyed with the app's webhook secret token.
// A delivery carries no event id: a retry resends the same event and
// event_ts (milliseconds), which is what handlers key on with the event
// name. Zoom validates the endpoint with an endpoint.url_validation request
// answered {plainToken, encryptedToken}.
type zoomScheme struct{}

var (
	_ Scheme     = zoomScheme{}
	_ Handshaker = zoomScheme{}
)

const (
	zoomSig = "X-Zm-Signature"
	zoomTS  = "X-Zm-Request-Timestamp"
)

func (zoomScheme) Name() string                       { return "zoom" }
func (zoomScheme) Title() string                      { return "Zoom" }
func (zoomScheme) Detects(h message.Headers) bool     { return h.Has(zoomSig) }
func (zoomScheme) SignatureHeaders() []string         { return []string{zoomSig, zoomTS} }
func (zoomScheme) SignsURL() bool                     { return false }
func (zoomScheme) BodyEdited(*message.Request) string { return "" }
func (zoomScheme) IdentityInBody() bool               { return true }
func (zoomScheme) IdentitySigned() bool               { return true }
func (zoomScheme) MarkRetry(*message.Request, int)    {}
func (zoomScheme) Challenge(*message.Request) string  { return "" }

// NewEventID is a fresh event_ts: now in milliseconds, and never one this
// process handed out before (two fresh events within a millisecond differ).
func (zoomScheme) NewEventID() string {
	for {
		last := zoomLastTS.Load()
		ts := max(time.Now().UnixMilli(), last+1)
		if zoomLastTS.CompareAndSwap(last, ts) {
			return strconv.FormatInt(ts, 10)
		}
	}
}

var zoomLastTS atomic.Int64

// Tolerance: Zoom's docs and sample code check the signature and not the
// timestamp's age, so neither does hookreplay, and SignedAt reports no
// timestamp (check sends no hour-old copy a handler following them accepts).
func (zoomScheme) Tolerance() time.Duration                    { return 0 }
func (zoomScheme) SignedAt(*message.Request) (time.Time, bool) { return time.Time{}, false }

// ResponseTimeout: Zoom expects a 200 or 204 within 3 seconds.
func (zoomScheme) ResponseTimeout() time.Duration { return 3 * time.Second }

// Retries: an event not answered 200/204 within 3 seconds is sent 3 more
// times: 5 minutes after the first attempt, 20 minutes after the first
// retry and 60 minutes after the second; then notifications of that event
// stop.
func (zoomScheme) Retries() Schedule {
	return Schedule{
		Retries: cumulative(5*time.Minute, 20*time.Minute, 60*time.Minute),
		Final:   "no further notification of that event",
		Source:  "https://devsupport.zoom.us/hc/en-us/articles/360059893812-Webhook-delays (3 retries: 5 min after the first attempt, then 20 min, then 60 min)",
	}
}

func (zoomScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	id := Identity{Provider: "zoom", EventType: str(m, "event")}
	if ts, ok := m["event_ts"].(float64); ok {
		id.EventID = strconv.FormatFloat(ts, 'f', -1, 64)
	}
	return id
}

func (s zoomScheme) Handshake(r *message.Request) string {
	if s.Identity(r).EventType != "endpoint.url_validation" {
		return ""
	}
	return "Zoom's endpoint.url_validation (answered with plainToken and its encryptedToken)"
}

func zoomMAC(secret, ts string, body []byte) []byte {
	return macSHA256([]byte(secret), []byte("v0:"+ts+":"), body)
}

func (zoomScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	for _, h := range []string{zoomSig, zoomTS} {
		if !r.Headers.Has(h) {
			return missing("zoom", h), nil
		}
	}
	sig, ok := strings.CutPrefix(r.Headers.Get(zoomSig), "v0=")
	if !ok {
		return invalid("zoom", "v0", "malformed "+zoomSig+" header: no v0= prefix"), nil
	}
	if want := zoomMAC(secret, r.Headers.Get(zoomTS), r.Body); !equalHex(sig, want) {
		return invalid("zoom", "v0", mismatch([]string{sig}, want, false)), nil
	}
	return valid("zoom", "v0", time.Time{}, opt.Now), nil
}

func (zoomScheme) Sign(r *message.Request, secret string, opt Options) error {
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	r.Headers = r.Headers.Set(zoomTS, ts)
	r.Headers = r.Headers.Set(zoomSig, "v0="+hex.EncodeToString(zoomMAC(secret, ts, r.Body)))
	return nil
}

// Reidentify gives the event a fresh event_ts (newID, milliseconds).
func (zoomScheme) Reidentify(r *message.Request, newID string) error {
	if _, err := strconv.ParseInt(newID, 10, 64); err != nil {
		return errors.New("a Zoom event is identified by its event_ts, a number, not " + strconv.Quote(newID))
	}
	b, err := replaceTopLevelRaw(r.Body, "event_ts", []byte(newID))
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

func (zoomScheme) Samples() []Fixture {
	return []Fixture{
		{"zoom", "meeting.started", "zoom/meeting.started.json", "a scheduled meeting started by its host"},
		{"zoom", "recording.completed", "zoom/recording.completed.json", "a cloud recording of that meeting ready"},
	}
}

func (zoomScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	addHeaders(r, "Content-Type", "application/json; charset=utf-8")
	return nil
}
