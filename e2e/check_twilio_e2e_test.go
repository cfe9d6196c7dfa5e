package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// twilioSidHandler dedupes incoming SMS webhooks on the form's MessageSid,
// the message's own id (the natural key of a Twilio message webhook): each
// MessageSid is worked once.
type twilioSidHandler struct {
	mu   sync.Mutex
	seen map[string]bool
	work int
}

func (h *twilioSidHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == "GET" {
		h.mu.Lock()
		fmt.Fprint(w, h.work)
		h.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	sid := form.Get("MessageSid")
	h.mu.Lock()
	defer h.mu.Unlock()
	if sid != "" && !h.seen[sid] {
		h.seen[sid] = true
		h.work++
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprint(w, "<Response/>")
}

// A fresh Twilio event is a new message: its copies carry a new MessageSid
// (and SmsSid, SmsMessageSid) as well as a new I-Twilio-Idempotency-Token,
// so a correct handler that dedupes on MessageSid is judged in burst and
// lost instead of being warned that it drops distinct events.
func TestCheckTwilioFreshEventHasFreshMessageSid(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	h := &twilioSidHandler{seen: map[string]bool{}}
	base := serveHandler(t, h)
	db := filepath.Join(t.TempDir(), "h.db")
	const secret = "twilio-auth-token-0123456789abcdef"
	req, err := verify.BuildDeliveryTo("twilio", "message.received", secret, base+"/sms", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id := checkInsert(t, db, req)
	r, c := checkRunJSON(t, db, "--to", base+"/sms", "--probe-http", base+"/work", "--secret", secret,
		"--settle", "50ms", "-n", "2", "--burst", "5", "--phases", "first,dups,burst,lost", fmt.Sprint(id))
	if r.Code != 0 || c == nil {
		t.Fatalf("want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if len(c.Warnings) > 0 {
		t.Fatalf("a handler deduping on MessageSid should not be warned: %q", c.Warnings)
	}
	for _, p := range []string{"burst", "lost"} {
		if got := checkPhase(t, c, p); string(got.Status) != "pass" {
			t.Fatalf("%s should be judged and pass, got %s: %s", p, got.Status, got.Message)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// first, the control event, the burst rounds and lost trials are each a
	// new message.
	if h.work < 4 || h.seen[twilioForm(t, req.Body).Get("MessageSid")] && h.work == 1 {
		t.Fatalf("fresh events should be new messages: %d worked, seen %v", h.work, h.seen)
	}
}

func twilioForm(t *testing.T, body []byte) url.Values {
	t.Helper()
	v, err := url.ParseQuery(string(body))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A handler that ignores an event type answers 2xx and changes nothing: the
// run is inconclusive (exit 3) and says the handler may not handle that type.
func TestCheckIgnoredEventTypeIsInconclusive(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == "GET" {
			fmt.Fprint(w, 0)
		}
	}))
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkInsertSample(t, db, "github", "issues.opened", "gh-secret")
	r, c := checkRunJSON(t, db, "--to", base+"/gh", "--probe-http", base+"/work", "--secret", "gh-secret",
		"--settle", "50ms", "--settle-max", "500ms", "--phases", "first", fmt.Sprint(id))
	if r.Code != 3 || c == nil {
		t.Fatalf("want exit 3, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if m := checkPhase(t, c, "first").Message; !strings.Contains(m, "ignores issues.opened events") {
		t.Fatalf("first should say the handler may ignore this event type: %s", m)
	}
}
