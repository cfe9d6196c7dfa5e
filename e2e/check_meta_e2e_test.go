package e2e

// WhatsApp Cloud API deliveries (issue 27 §1): check judges a handler
// written from Meta's documented verification code, list and the report
// show every message id of a batched POST, and Meta's GET verification
// request is named for what it is.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

const waSecret = "5f4dcc3b5aa765d61d8327deb882cf99"

// A POST batching three messages: the handler that works each wamid once
// passes every phase; the one that works every message it is sent (the
// shape of Meta's sample apps) fails dups and burst. Both check the
// signature as Meta documents it, so tamper passes for both.
func TestCheckWhatsAppHandlerFromMetaDocs(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	checkHandlerFromDocs(t, handlerFromDocs{
		start: func(t *testing.T, mode string) string {
			return startNode(t, "testdata/handlers/whatsapp.js", "SECRET="+waSecret, "MODE="+mode)
		},
		insert: func(t *testing.T, db string) int64 {
			return checkInsertSample(t, db, "whatsapp", "messages.batch", waSecret)
		},
		route: "/webhook", secret: waSecret,
		flags: []string{"-n", "3", "--burst", "5", "--phases", "first,dups,tamper,burst,lost,latency"},
		pass:  []string{"first", "tamper"},
		also: func(t *testing.T, mode string, c *report.Check) {
			if got := c.Deliveries[0].EventIDs; len(got) != 3 || got[0] != c.Deliveries[0].EventID {
				t.Fatalf("the report should list the three wamids: %q", got)
			}
			if first := checkPhase(t, c, "first"); !strings.Contains(first.Message, "+3") {
				t.Fatalf("first should see three messages worked: %s %s", first.Status, first.Message)
			}
			// Meta documents no answer timeout: said once, plainly.
			if m := checkPhase(t, c, "latency").Message; !strings.Contains(m, "(the default timeout 10s; no timeout is known for provider whatsapp: set --provider-timeout to its own)") {
				t.Fatalf("latency: %s", m)
			}
			if got := checkPhase(t, c, "lost"); mode == "correct" && got.Status != report.Pass {
				t.Fatalf("lost: %s, want %s: %s", got.Status, report.Pass, got.Message)
			}
		},
	})
}

// Meta's GET verification request is stored like any request; check says it
// is not an event instead of asking for a probe; list and show name it.
func TestCheckMetaHandshakeIsNotADelivery(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	base := startNode(t, "testdata/handlers/whatsapp.js", "SECRET="+waSecret)
	db := filepath.Join(t.TempDir(), "h.db")
	hs := &message.Request{Method: "GET", Target: "/webhook?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock",
		Proto: "HTTP/1.1", Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "User-Agent", Value: "facebookplatform/1.0 (+http://developers.facebook.com)"}}}
	id := checkInsert(t, db, hs)
	r, c := checkRunJSON(t, db, "--to", base+"/webhook", "--probe-http", base+"/work", "--secret", waSecret,
		"--settle", "50ms", fmt.Sprint(id))
	if r.Code != 3 || c == nil {
		t.Fatalf("want exit 3, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if m := checkPhase(t, c, "first").Message; !strings.Contains(m, "Meta's webhook verification request") || !strings.Contains(m, "not an event") {
		t.Fatalf("first should say the request is Meta's verification, not an event: %s", m)
	}
	// No effect is due, so none is waited for: waiting for one took at
	// least 2 s (check's wait for a first change) before saying so.
	if d := checkPhase(t, c, "first").Duration; d >= 2*time.Second {
		t.Fatalf("first waited %s for an effect of a handshake", d)
	}
	if strings.Contains(strings.Join(c.Notes, "\n"), "need a fresh id") {
		t.Fatalf("the handshake should not be blamed for lacking an event id: %q", c.Notes)
	}
	// The verdict's last line says so too, instead of asking for a probe.
	tr := runBin(t, db, nil, "runs", "show", "1", "--report", "text=-")
	if last := strings.TrimSpace(tr.Stdout[strings.LastIndex(strings.TrimSpace(tr.Stdout), "\n")+1:]); !strings.HasPrefix(last, fmt.Sprintf("exit 3: nothing was proven: delivery #%d is a provider's handshake, not an event", id)) ||
		strings.Contains(last, "probe what the handler changes") {
		t.Fatalf("the exit line should say the delivery is a handshake: %q", last)
	}
	lr := runBin(t, db, nil, "list", "--json")
	var list []report.DeliverySummary
	if err := json.Unmarshal([]byte(lr.Stdout), &list); err != nil || len(list) != 1 || list[0].Provider != "whatsapp" || list[0].EventType != "hub.subscribe" {
		t.Fatalf("list --json: %v %s", err, lr.Stdout)
	}
}

// Given no probe, check of Meta's verification request says what it is
// (docs/signatures.md) instead of asking for a probe no handshake needs; a
// delivery of an event still asks for the probe.
func TestCheckMetaHandshakeWithoutProbeSaysWhatItIs(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	hs := &message.Request{Method: "GET", Target: "/webhook?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock",
		Proto: "HTTP/1.1", Headers: message.Headers{{Name: "Host", Value: "example.com"}, {Name: "User-Agent", Value: "facebookplatform/1.0 (+http://developers.facebook.com)"}}}
	id := checkInsert(t, db, hs)
	ev := checkInsertSample(t, db, "whatsapp", "messages", waSecret)
	r := runBin(t, db, nil, "check", fmt.Sprint(id), "--to", "http://127.0.0.1:1/webhook", "--secret", waSecret)
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "Meta's webhook verification request") ||
		!strings.Contains(r.Stderr, "not an event") || strings.Contains(r.Stderr, "no probe given") {
		t.Fatalf("check of the handshake without a probe: want exit 2 and one line saying it is Meta's verification request, got %d %q", r.Code, r.Stderr)
	}
	r = runBin(t, db, nil, "check", fmt.Sprint(ev), "--to", "http://127.0.0.1:1/webhook", "--secret", waSecret)
	if r.Code != 2 || !strings.Contains(r.Stderr, "no probe given") {
		t.Fatalf("check of an event without a probe: want exit 2 asking for a probe, got %d %q", r.Code, r.Stderr)
	}
}

// list and show show every message id of a batched POST; one id stays as it was.
func TestListShowsEveryWamid(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	batch, err := verify.BuildDelivery("whatsapp", "messages.batch", waSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	checkInsert(t, db, batch)
	checkInsertSample(t, db, "whatsapp", "messages", waSecret)
	ids := verify.Detect(batch)
	all := verify.EventIDs(ids.EventID, ids.Extra)
	lr := runBin(t, db, nil, "list", "--json")
	var list []report.DeliverySummary
	if err := json.Unmarshal([]byte(lr.Stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("list --json: %v %s", err, lr.Stdout)
	}
	if list[1].EventID != all[0] || strings.Join(list[1].EventIDs, " ") != strings.Join(all, " ") {
		t.Fatalf("batch: event_id %s, event_ids %q, want %q", list[1].EventID, list[1].EventIDs, all)
	}
	if list[0].EventIDs != nil || !strings.HasPrefix(list[0].EventID, "wamid.") {
		t.Fatalf("a single message: %+v", list[0])
	}
	table := runBin(t, db, nil, "list", "--no-color")
	if !strings.Contains(table.Stdout, "(+2)") {
		t.Fatalf("list should say the batch carries two more ids:\n%s", table.Stdout)
	}
	show := runBin(t, db, nil, "show", "1", "--no-color")
	for _, w := range all {
		if !strings.Contains(show.Stdout, w) {
			t.Fatalf("show lacks %s:\n%s", w, show.Stdout)
		}
	}
	// --event-id finds the batch by any of its message ids.
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	rp := runBin(t, db, nil, "replay", "--event-id", all[2], "--to", base, "--json")
	var run struct {
		Run struct {
			Options struct {
				Deliveries []int64 `json:"deliveries"`
			} `json:"options"`
		} `json:"run"`
	}
	if rp.Code != 0 || json.Unmarshal([]byte(rp.Stdout), &run) != nil || fmt.Sprint(run.Run.Options.Deliveries) != "[1]" {
		t.Fatalf("replay --event-id %s (the batch's third wamid): %+v", all[2], rp)
	}
	if rp := runBin(t, db, nil, "replay", "--event-id", "wamid.nope", "--to", base); rp.Code != 2 || !strings.Contains(rp.Stderr, `no captured delivery has event id "wamid.nope"`) {
		t.Fatalf("an unknown wamid: %+v", rp)
	}
}

// A handler that verifies the signature over its JSON parser's re-encoding
// of the body (an express.json() app hashing JSON.stringify(req.body))
// refuses Meta's own deliveries, whose JSON escapes "/" as "\/": check says
// it is a setup problem, exit 2, naming the re-encoded body, instead of
// judging idempotency.
func TestCheckWhatsAppReencodedBodyIsASetupProblem(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	base := startNode(t, "testdata/handlers/whatsapp.js", "SECRET="+waSecret, "MODE=reencode")
	db := filepath.Join(t.TempDir(), "h.db")
	id := checkInsertSample(t, db, "whatsapp", "messages.batch", waSecret)
	r := runBin(t, db, nil, "check", "--no-color", "--to", base+"/webhook", "--probe-http", base+"/work", "--secret", waSecret,
		"--settle", "50ms", "--phases", "first", fmt.Sprint(id))
	if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "rejected a correctly signed copy") || !strings.Contains(r.Stderr+r.Stdout, "re-encoded body") {
		t.Fatalf("want exit 2 naming a re-encoded body: %+v", r)
	}
}

// list and export --event-id find a batch by a later message id, as check
// --event-id does: a wamid from a handler's log leads to its delivery.
func TestListExportFindABatchByALaterWamid(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	batch, err := verify.BuildDelivery("whatsapp", "messages.batch", waSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id := checkInsert(t, db, batch)
	checkInsertSample(t, db, "whatsapp", "messages", waSecret)
	ids := verify.Detect(batch)
	last := verify.EventIDs(ids.EventID, ids.Extra)[2]
	lr := runBin(t, db, nil, "list", "--event-id", last, "--json")
	var list []report.DeliverySummary
	if err := json.Unmarshal([]byte(lr.Stdout), &list); err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("list --event-id %s: want delivery %d alone, got %v %s %s", last, id, err, lr.Stdout, lr.Stderr)
	}
	er := runBin(t, db, nil, "export", "--event-id", last, "-o", "-")
	if er.Code != 0 || strings.Count(strings.TrimSpace(er.Stdout), "\n") != 0 || !strings.Contains(er.Stdout, fmt.Sprintf(`"id":%d,`, id)) {
		t.Fatalf("export --event-id %s: want delivery %d alone, got %d %.200s %s", last, id, er.Code, er.Stdout, er.Stderr)
	}
}

// Meta's GET verification request, captured with --secret, reads as not
// signed, as a request no scheme signs: list and show said "invalid" (which
// reads as tampering) and verify exited 1; verify now exits 2 saying it is
// Meta's verification request, which Meta never signs.
func TestMetaHandshakeIsNotSignedNotInvalid(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	addr := freeAddr(t)
	p := startBin(t, db, "capture", "--listen", addr, "--secret", waSecret)
	waitListening(t, addr, p)
	req, _ := http.NewRequest("GET", "http://"+addr+"/webhook?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock", nil)
	req.Header.Set("User-Agent", "facebookplatform/1.0 (+http://developers.facebook.com)")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.stop(5 * time.Second)
	if string(b) != "1158201444" {
		t.Fatalf("capture answered %q, want the challenge", b)
	}
	lr := runBin(t, db, nil, "list")
	if lr.Code != 0 || !strings.Contains(lr.Stdout, "unverified") || strings.Contains(lr.Stdout, "invalid") {
		t.Fatalf("list should show the handshake unverified, not invalid: %d\n%s%s", lr.Code, lr.Stdout, lr.Stderr)
	}
	sr := runBin(t, db, nil, "show", "1")
	if sr.Code != 0 || !strings.Contains(sr.Stdout, "signature unverified: not signed: Meta's webhook verification request") {
		t.Fatalf("show should say the handshake is not signed: %d\n%s%s", sr.Code, sr.Stdout, sr.Stderr)
	}
	vr := runBin(t, db, nil, "verify", "1", "--secret", waSecret)
	if vr.Code != 2 || strings.Count(strings.TrimSpace(vr.Stderr), "\n") != 0 || !strings.Contains(vr.Stderr, "delivery 1 is not signed: Meta's webhook verification request") ||
		strings.Contains(vr.Stderr, "invalid") {
		t.Fatalf("verify of the handshake: want exit 2 and one line saying it is Meta's verification request, got %d %q", vr.Code, vr.Stderr)
	}
	// replay names it by provider and type, with no id to leave a gap for.
	h := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Query().Get("hub.challenge")) }))
	rr := runBin(t, db, nil, "replay", "1", "--to", h+"/webhook")
	if rr.Code != 0 || !strings.Contains(rr.Stdout, "replaying delivery 1 (whatsapp hub.subscribe) → ") {
		t.Fatalf("replay of the handshake: want exit 0 and 'replaying delivery 1 (whatsapp hub.subscribe) → …', got %d\n%s%s", rr.Code, rr.Stdout, rr.Stderr)
	}
}
