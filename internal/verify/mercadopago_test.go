package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

const mpTestSecret = "8f0e6c2a4b1d9e7f3a5c8b2d6e4f1a9c"

// mpHand signs manifest as Mercado Pago's documented code does, written
// out here independently of the scheme.
func mpHand(manifest string) string {
	m := hmac.New(sha256.New, []byte(mpTestSecret))
	m.Write([]byte(manifest))
	return hex.EncodeToString(m.Sum(nil))
}

func mpReq(target, sig, reqID string) *message.Request {
	r := &message.Request{Method: "POST", Target: target, Body: []byte(`{"action":"payment.updated","data":{"id":"91245737483"},"id":123456789012,"type":"payment"}`)}
	r.Headers = message.Headers{{Name: "Content-Type", Value: "application/json"}}
	if reqID != "" {
		r.Headers = append(r.Headers, message.Header{Name: "x-request-id", Value: reqID})
	}
	if sig != "" {
		r.Headers = append(r.Headers, message.Header{Name: "x-signature", Value: sig})
	}
	return r
}

// Mercado Pago's manifest, as its docs give it: absent parts left out, an
// alphanumeric data.id lower-cased, the signature header's parts trimmed.
func TestMercadoPagoManifest(t *testing.T) {
	const rid = "bb56a2f1-6aae-46ac-982e-9dcd3581d08e"
	now := time.Unix(1704908010, 0)
	for _, tc := range []struct {
		name, target, sig, reqID string
		valid                    bool
		reason                   string
	}{
		{"documented", "/n?data.id=91245737483&type=payment", "ts=1704908010,v1=" + mpHand("id:91245737483;request-id:"+rid+";ts:1704908010;"), rid, true, ""},
		{"spaces after the comma", "/n?data.id=91245737483&type=payment", "ts=1704908010, v1=" + mpHand("id:91245737483;request-id:"+rid+";ts:1704908010;"), rid, true, ""},
		{"order id lower-cased", "/n?data.id=ORD01JQ4S4KY8HWQ6NA5PXB65B3D3&type=order", "ts=1704908010,v1=" + mpHand("id:ord01jq4s4ky8hwq6na5pxb65b3d3;request-id:"+rid+";ts:1704908010;"), rid, true, ""},
		{"order id as given", "/n?data.id=ORD01JQ4S4KY8HWQ6NA5PXB65B3D3&type=order", "ts=1704908010,v1=" + mpHand("id:ORD01JQ4S4KY8HWQ6NA5PXB65B3D3;request-id:"+rid+";ts:1704908010;"), rid, false, "lower-case"},
		{"no data.id", "/n?type=payment", "ts=1704908010,v1=" + mpHand("request-id:"+rid+";ts:1704908010;"), rid, true, ""},
		{"no request id", "/n?data.id=91245737483", "ts=1704908010,v1=" + mpHand("id:91245737483;ts:1704908010;"), "", true, ""},
		{"data.id dropped on the way", "/n", "ts=1704908010,v1=" + mpHand("id:91245737483;request-id:"+rid+";ts:1704908010;"), rid, false, "no data.id query parameter"},
		{"body's id instead of data.id", "/n?data.id=91245737483", "ts=1704908010,v1=" + mpHand("id:123456789012;request-id:"+rid+";ts:1704908010;"), rid, false, "signature mismatch"},
		{"no v1", "/n?data.id=1", "ts=1704908010", rid, false, "no v1"},
		{"no ts", "/n?data.id=1", "v1=00", rid, false, "no ts"},
		{"no header", "/n?data.id=1", "", rid, false, "missing header x-signature"},
	} {
		r, err := Verify(mpReq(tc.target, tc.sig, tc.reqID), "mercadopago", mpTestSecret, Options{Now: now})
		if err != nil || r.Valid != tc.valid || !strings.Contains(r.Reason, tc.reason) {
			t.Errorf("%s: %+v %v, want valid=%v reason ~%q", tc.name, r, err, tc.valid, tc.reason)
		}
	}
}

// No tolerance unless asked for (Mercado Pago sets none); asked, it applies.
// A 13-digit ts is read as milliseconds.
func TestMercadoPagoTolerance(t *testing.T) {
	sig := "ts=1704908010,v1=" + mpHand("id:91245737483;request-id:r1;ts:1704908010;")
	req := mpReq("/n?data.id=91245737483", sig, "r1")
	late := time.Unix(1704908010, 0).Add(time.Hour)
	if r, _ := Verify(req, "", mpTestSecret, Options{Now: late}); !r.Valid {
		t.Fatalf("an hour old without a tolerance: %+v", r)
	}
	if r, _ := Verify(req, "", mpTestSecret, Options{Now: late, Tolerance: 5 * time.Minute}); r.Valid || !strings.Contains(r.Reason, "outside tolerance 300s") {
		t.Fatalf("an hour old with --tolerance 5m: %+v", r)
	}
	ms := mpReq("/n?data.id=1", "ts=1704908010123,v1="+mpHand("id:1;request-id:r1;ts:1704908010123;"), "r1")
	if at, ok := SignedAt(ms, "mercadopago"); !ok || at.UnixMilli() != 1704908010123 {
		t.Fatalf("13-digit ts: %v %v", at, ok)
	}
	c, _ := Sign(ms, "mercadopago", mpTestSecret, Options{Now: late})
	if ts := parseMPSignature(c.Headers.Get("x-signature")).ts; len(ts) != 13 {
		t.Fatalf("a millisecond ts re-signed as %q", ts)
	}
}

// Mercado Pago's x-signature and x-request-id make it Mercado Pago's; an
// x-signature of another shape does not.
func TestMercadoPagoDetect(t *testing.T) {
	req := mpReq("/n?data.id=91245737483", "ts=1704908010,v1="+mpHand("x"), "r1")
	if id := Detect(req); id.Provider != "mercadopago" || id.EventID != "123456789012" || id.EventType != "payment.updated" || id.Extra["data_id"] != "91245737483" {
		t.Fatalf("identity %+v", id)
	}
	other := mpReq("/n", "sha256=abc", "r1")
	if p := Detect(other).Provider; p != Generic {
		t.Fatalf("x-signature: sha256=… detected as %s", p)
	}
	noID := mpReq("/n", "ts=1,v1=00", "")
	if p := Detect(noID).Provider; p != Generic {
		t.Fatalf("x-signature without x-request-id detected as %s", p)
	}
}

// Signing stamps a fresh ts and a fresh x-request-id; a fresh event has a
// new notification id and a new resource id in the body and the query
// alike, other query parameters kept; a forged copy changes the query's
// data.id, which the signature covers, and fails.
func TestMercadoPagoSignReidentifyForge(t *testing.T) {
	req := mpReq("/n?client=acme&data.id=91245737483&type=payment", "", "")
	a, _ := Sign(req, "mercadopago", mpTestSecret, Options{Now: t0})
	b, _ := Sign(a, "mercadopago", mpTestSecret, Options{Now: t0.Add(time.Second)})
	if a.Headers.Get("x-request-id") == b.Headers.Get("x-request-id") || a.Headers.Get("x-signature") == b.Headers.Get("x-signature") {
		t.Fatal("a re-signed copy kept its request id or signature")
	}
	c, err := Reidentify(b, "mercadopago", "129876543210", mpTestSecret, t0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := Detect(c)
	if id.EventID != "129876543210" || id.Extra["data_id"] == "91245737483" || !strings.Contains(c.Target, "data.id="+id.Extra["data_id"]+"&") ||
		!strings.HasPrefix(c.Target, "/n?client=acme&") || !strings.HasSuffix(c.Target, "&type=payment") {
		t.Fatalf("fresh event %+v at %s", id, c.Target)
	}
	if !strings.Contains(string(c.Body), `"id":129876543210`) {
		t.Fatalf("the body's numeric id: %s", c.Body)
	}
	if r, _ := Verify(c, "", mpTestSecret, Options{Now: t0}); !r.Valid {
		t.Fatalf("fresh event: %+v", r)
	}
	f := c.Clone()
	what, ok := Lookup("mercadopago").(Forger).Forge(f)
	if r, _ := Verify(f, "", mpTestSecret, Options{Now: t0}); !ok || r.Valid || !strings.Contains(what, "data.id") {
		t.Fatalf("forged copy %q: %+v", what, r)
	}
	// A body changed after signing is still valid: Mercado Pago does not sign it.
	g := c.Clone()
	g.Body = []byte(strings.Replace(string(g.Body), "payment.updated", "payment.created", 1))
	if r, _ := Verify(g, "", mpTestSecret, Options{Now: t0}); !r.Valid {
		t.Fatalf("the body is not signed: %+v", r)
	}
}

// A notification whose body names a resource but whose URL lost the
// query is not signed: the signature would leave data.id out and fail
// wherever the query has it.
func TestMercadoPagoSignNeedsTheQuery(t *testing.T) {
	if _, err := Sign(mpReq("/n", "", ""), "mercadopago", mpTestSecret, Options{Now: t0}); err == nil || !strings.Contains(err.Error(), "?data.id=91245737483") {
		t.Fatalf("signing without the query: %v", err)
	}
	noData := mpReq("/n", "", "")
	noData.Body = []byte(`{"action":"test.created","id":1}`)
	if _, err := Sign(noData, "mercadopago", mpTestSecret, Options{Now: t0}); err != nil {
		t.Fatalf("a notification without data.id signs without it: %v", err)
	}
}
