package verify

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// GitHub and Meta share X-Hub-Signature-256: a Meta delivery is never taken
// for GitHub's and a GitHub delivery never for Meta's, whatever the other
// carries; the three Meta products are told apart by the body's object.
func TestDetectMetaAndGitHubApart(t *testing.T) {
	for _, f := range Fixtures() {
		if f.Provider != "github" && f.Provider != "whatsapp" && f.Provider != "messenger" && f.Provider != "instagram" {
			continue
		}
		req := build(t, f, t0)
		if got := Detect(req).Provider; got != f.Provider {
			t.Errorf("%s %s detected as %s", f.Provider, f.Event, got)
		}
	}
	meta := build(t, Fixture{Provider: "whatsapp", Event: "messages"}, t0)
	// A GitHub delivery whose body happens to be Meta's envelope (a
	// repository_dispatch carrying one, say) is GitHub's.
	gh := meta.Clone()
	gh.Headers = gh.Headers.Set("User-Agent", "GitHub-Hookshot/044aadd").Set("X-GitHub-Event", "repository_dispatch").Set("X-GitHub-Delivery", newUUID())
	if got := Detect(gh).Provider; got != "github" {
		t.Errorf("GitHub headers with Meta's body detected as %s", got)
	}
	// Only the delivery id (no event header) is enough too.
	gh.Headers = gh.Headers.Del("X-GitHub-Event")
	if got := Detect(gh).Provider; got != "github" {
		t.Errorf("X-GitHub-Delivery with Meta's body detected as %s", got)
	}
	// Meta's envelope without a signature or Meta's User-Agent is nobody's.
	bare := &message.Request{Method: "POST", Target: "/", Body: meta.Body}
	if got := Detect(bare).Provider; got != Generic {
		t.Errorf("unsigned Meta envelope detected as %s", got)
	}
	// X-Hub-Signature-256 over a body that is not Meta's envelope: neither.
	other := &message.Request{Method: "POST", Target: "/", Body: []byte(`{"object":"page"}`),
		Headers: message.Headers{{Name: "X-Hub-Signature-256", Value: "sha256=00"}}}
	if got := Detect(other).Provider; got != Generic {
		t.Errorf("signed body without entry detected as %s", got)
	}
	// Meta's User-Agent alone (a delivery whose signature header was
	// stripped by a proxy) is still Meta's.
	ua := &message.Request{Method: "POST", Target: "/", Body: meta.Body, Headers: message.Headers{{Name: "User-Agent", Value: "facebookexternalua"}}}
	if got := Detect(ua).Provider; got != "whatsapp" {
		t.Errorf("facebookexternalua detected as %s", got)
	}
	// An object of Meta's this registry does not know stays generic.
	user := meta.Clone()
	user.Body = []byte(`{"object":"user","entry":[{"id":"1","changes":[{"field":"photos","value":{"verb":"update"}}]}]}`)
	if got := Detect(user).Provider; got != Generic {
		t.Errorf("object user detected as %s", got)
	}
	// GitHub's own verification still owns GitHub deliveries.
	ghs := build(t, Fixture{Provider: "github", Event: "push"}, t0)
	if r, _ := Verify(ghs, "", secretOf("github"), Options{}); !r.Valid || r.Provider != "github" {
		t.Errorf("github sample: %+v", r)
	}
}

func TestMetaIdentity(t *testing.T) {
	batch := build(t, Fixture{Provider: "whatsapp", Event: "messages.batch"}, t0)
	id := Detect(batch)
	ids := EventIDs(id.EventID, id.Extra)
	if id.EventType != "messages" || len(ids) != 3 || ids[0] != id.EventID {
		t.Fatalf("batch identity %+v, ids %q", id, ids)
	}
	for _, w := range ids {
		if !strings.HasPrefix(w, "wamid.") || !bytes.Contains(batch.Body, []byte(w)) {
			t.Fatalf("id %q is not a wamid of the body", w)
		}
	}
	// The message a reply quotes (context.id) is not one of the POST's.
	if bytes.Count(batch.Body, []byte(`"wamid.`)) != 4 {
		t.Fatal("the batch fixture should quote one earlier message")
	}
	st := Detect(build(t, Fixture{Provider: "whatsapp", Event: "statuses"}, t0))
	if st.EventType != "statuses" || !strings.HasPrefix(st.EventID, "wamid.") || st.Extra["status"] != "delivered" || st.Extra[ExtraEventIDs] != "" {
		t.Fatalf("statuses identity %+v", st)
	}
	// Messages and statuses in one POST: both types, every id.
	mixed := &message.Request{Method: "POST", Headers: message.Headers{{Name: "X-Hub-Signature-256", Value: "sha256=00"}},
		Body: []byte(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messages":[{"id":"wamid.A"}],"statuses":[{"id":"wamid.B","status":"read"}]}}]},` +
			`{"id":"2","changes":[{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":12}}]}]}`)}
	m := Detect(mixed)
	if m.EventType != "messages,statuses,message_template_status_update" || strings.Join(EventIDs(m.EventID, m.Extra), " ") != "wamid.A wamid.B" || m.Extra["status"] != "read" {
		t.Fatalf("mixed identity %+v", m)
	}
	for _, tc := range []struct{ provider, event, typ, prefix string }{
		{"messenger", "messages", "messages", "m_"},
		{"messenger", "messaging_postbacks", "messaging_postbacks", "m_"},
		{"instagram", "messages", "messages", "aWdf"},
	} {
		got := Detect(build(t, Fixture{Provider: tc.provider, Event: tc.event}, t0))
		if got.EventType != tc.typ || !strings.HasPrefix(got.EventID, tc.prefix) {
			t.Errorf("%s %s: %+v", tc.provider, tc.event, got)
		}
	}
}

// Meta escapes "/" in its JSON ("image\/jpeg"); a wamid holding one is
// found and replaced whatever its escaping, and nothing else changes.
func TestMetaReidentifyEscapedIDs(t *testing.T) {
	body := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messages":[` +
		`{"id":"wamid.AB\/CD==","type":"image","image":{"mime_type":"image\/jpeg"}},{"id":"wamid.E\u0046","context":{"id":"wamid.OLD"}}]}}]}]}`)
	req := &message.Request{Method: "POST", Target: "/", Body: body, Headers: message.Headers{{Name: "X-Hub-Signature-256", Value: "sha256=00"}}}
	before := Detect(req)
	if got := EventIDs(before.EventID, before.Extra); strings.Join(got, " ") != "wamid.AB/CD== wamid.EF" {
		t.Fatalf("ids %q", got)
	}
	c, err := Reidentify(req, "whatsapp", "wamid.NEW", "s3cret", t0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	after := Detect(c)
	ids := EventIDs(after.EventID, after.Extra)
	if len(ids) != 2 || ids[0] != "wamid.NEW" || ids[1] == "wamid.EF" || !strings.HasPrefix(ids[1], "wamid.") {
		t.Fatalf("fresh ids %q", ids)
	}
	want := strings.Replace(strings.Replace(string(body), `"wamid.AB\/CD=="`, `"wamid.NEW"`, 1), `"wamid.E\u0046"`, `"`+ids[1]+`"`, 1)
	if string(c.Body) != want {
		t.Fatalf("body\n%s\nwant\n%s", c.Body, want)
	}
	if r, _ := Verify(c, "", "s3cret", Options{}); !r.Valid {
		t.Fatalf("re-identified copy: %+v", r)
	}
	if _, err := Reidentify(&message.Request{Body: []byte(`{"object":"page","entry":[]}`)}, "messenger", "", "", t0, Options{}); err == nil {
		t.Fatal("a body without message ids was re-identified")
	}
}

// Meta's GET verification request is captured like any request and named
// for what it is: not an event, not signed, nothing to re-sign.
func TestMetaHandshake(t *testing.T) {
	hs := &message.Request{Method: "GET", Target: "/webhook?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock",
		Headers: message.Headers{{Name: "User-Agent", Value: "facebookplatform/1.0 (+http://developers.facebook.com)"}}}
	id := Detect(hs)
	if id.Provider != "whatsapp" || id.EventType != "hub.subscribe" || id.EventID != "" {
		t.Fatalf("handshake identity %+v", id)
	}
	for _, p := range []string{"whatsapp", "messenger", "instagram"} {
		if h := Handshake(Lookup(p), hs); !strings.Contains(h, "verification request") {
			t.Errorf("%s: handshake %q", p, h)
		}
	}
	if h := Handshake(Lookup("whatsapp"), build(t, Fixture{Provider: "whatsapp", Event: "messages"}, t0)); h != "" {
		t.Errorf("an event called a handshake: %q", h)
	}
	// Meta never signs the GET: not signed (ErrUnsigned, as capture stores
	// "unverified: …"), not "invalid", which reads as tampering.
	r, err := Verify(hs, "", "s3cret", Options{})
	if !errors.Is(err, ErrUnsigned) || r.Valid || !strings.Contains(err.Error(), "verification request") {
		t.Fatalf("verify handshake: %+v %v", r, err)
	}
	c, err := Sign(hs, "", "s3cret", Options{})
	if err != nil || len(c.Headers) != len(hs.Headers) {
		t.Fatalf("signing the handshake: %v %v", c, err)
	}
	post := hs.Clone()
	post.Method = "POST"
	if Detect(post).Provider != Generic {
		t.Fatal("a POST with hub.* parameters is not the handshake")
	}
}

func TestMetaRetries(t *testing.T) {
	h, src, ok := RetryHorizon(Lookup("whatsapp"))
	if !ok || h != 7*24*time.Hour || !strings.Contains(src, "developers.facebook.com") {
		t.Fatalf("whatsapp horizon %s %q", h, src)
	}
	if h, _, _ := RetryHorizon(Lookup("messenger")); h != 36*time.Hour {
		t.Fatalf("messenger horizon %s", h)
	}
	s, _ := SchemeFor("whatsapp")
	rs := s.Retries().Retries
	if rs[0] != time.Minute {
		t.Fatalf("first retry %s", rs[0])
	}
	for i := 1; i < len(rs); i++ {
		if rs[i] <= rs[i-1] {
			t.Fatalf("retries not increasing: %v", rs)
		}
	}
}

// A body claiming more messages than Meta batches keeps a bounded
// identity: the first 1000 ids; re-identifying still renews every one.
func TestMetaIdentityBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messages":[`)
	for i := range 1500 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":"wamid.%04d","type":"text"}`, i)
	}
	b.WriteString(`]}}]}]}`)
	req := &message.Request{Method: "POST", Body: []byte(b.String()), Headers: message.Headers{{Name: "X-Hub-Signature-256", Value: "sha256=00"}}}
	id := Detect(req)
	if ids := EventIDs(id.EventID, id.Extra); len(ids) != 1000 || ids[999] != "wamid.0999" {
		t.Fatalf("%d ids", len(ids))
	}
	c, err := Reidentify(req, "whatsapp", "", "", t0, Options{})
	if err != nil || bytes.Contains(c.Body, []byte("wamid.1499")) {
		t.Fatalf("the 1500th message kept its id: %v", err)
	}
}
