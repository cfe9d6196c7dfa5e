package verify

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
)

// whatsappBatch is a WhatsApp envelope of n entries, each a message and a
// status: 1.3 MiB for 10,000.
func whatsappBatch(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"object":"whatsapp_business_account","entry":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id":"1","changes":[{"field":"messages","value":{"messages":[{"id":"wamid.m` + strconv.Itoa(i) + `"}],"statuses":[{"id":"wamid.s` + strconv.Itoa(i) + `","status":"read"}]}}]}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + json.Number(rune2(i)).String())
}

func rune2(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Bodies a sender controls, as large as capture's default --max-body
// allows and shaped to cost the most: a huge batch of small entries, deep
// nesting, a large body that is not JSON. Decoding a body whole held about
// 14 times it (106 MiB for a 7.6 MiB batch) and every scheme decodes what
// it sees, several times per delivery. Every scheme now reads each of them
// without a panic, allocating at most 4 times the body and 16 MiB across
// Identity, Verify, SignedAt and BodyEdited (for this 1.3 MiB batch
// WhatsApp's took 44 MiB, Linear's 58; now 17 at most).
func TestSchemesOnHostileBodies(t *testing.T) {
	bodies := map[string][]byte{
		"many entries": whatsappBatch(10000),
		"deep arrays":  []byte(strings.Repeat("[", 1<<18) + strings.Repeat("]", 1<<18)),
		"deep objects": []byte(strings.Repeat(`{"a":`, 1<<16) + "1" + strings.Repeat("}", 1<<16)),
		"deep member":  []byte(`{"id":"1","type":"payment","data":` + strings.Repeat("[", 1<<18) + strings.Repeat("]", 1<<18) + `}`),
		"not json":     []byte(strings.Repeat(`{"a":"b",`, 1<<16)),
	}
	for _, s := range Schemes() {
		for name, body := range bodies {
			hs := message.Headers{{Name: "Content-Type", Value: "application/json"}}
			for _, h := range s.SignatureHeaders() {
				hs = append(hs, message.Header{Name: h, Value: "ts=1,v1=00,t=1,sha256=00"})
			}
			req := &message.Request{Method: "POST", Target: "/hook?data.id=1&type=payment", Proto: "HTTP/1.1", Headers: hs, Body: body}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			s.Identity(req)
			VerifyWith(s, req, "secret", Options{Now: fuzzNow, URL: "https://example.com/hook?data.id=1&type=payment"})
			s.SignedAt(req)
			s.BodyEdited(req)
			runtime.ReadMemStats(&m1)
			if a := m1.TotalAlloc - m0.TotalAlloc; a > 4*uint64(len(body))+16<<20 {
				t.Errorf("%s, %s: %d MiB allocated for a body of %d KiB", s.Name(), name, a>>20, len(body)>>10)
			}
		}
	}
}

// A large body is decoded by parts: what is held is bounded (a 7.6 MiB
// batch held 106 MiB decoded whole, this 1.3 MiB one 18 MiB), its first 1,000 items of an array are
// kept whole, a value under 1 MiB is what json.Unmarshal gives, and a body
// that is not JSON, or nested past json's limit, is nil as before.
func TestJSONObjectOfALargeBody(t *testing.T) {
	body := whatsappBatch(10000)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	m := jsonObject(body)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if held := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); held > 4<<20 { // its first 1,000 entries: 1.9 MiB; whole, 18 MiB
		t.Errorf("decoding a %d KiB body holds %d KiB", len(body)>>10, held>>10)
	}
	entries, _ := m["entry"].([]any)
	if len(entries) != jsonItems || m["object"] != "whatsapp_business_account" {
		t.Fatalf("%d entries, object %v", len(entries), m["object"])
	}
	var whole map[string]any
	json.Unmarshal(body, &whole)
	if !reflect.DeepEqual(entries, whole["entry"].([]any)[:jsonItems]) {
		t.Fatal("the kept entries differ from json.Unmarshal's")
	}
	runtime.KeepAlive(m)
	id := Lookup("whatsapp").Identity(&message.Request{Method: "POST", Body: body})
	if !strings.HasPrefix(id.EventID, "wamid.m0") {
		t.Fatalf("identity %+v", id)
	}
	big := `{"pad":"` + strings.Repeat("x", 2<<20) + `","data":{"id":"123","items":` + string(whatsappBatch(3000)) + `},"type":"payment"}`
	m = jsonObject([]byte(big))
	data, _ := m["data"].(map[string]any)
	if m["type"] != "payment" || data["id"] != "123" || len(m["pad"].(string)) != 2<<20 {
		t.Fatalf("top-level and nested fields of a large body: %v %v", m["type"], data["id"])
	}
	for name, b := range map[string]string{
		"trailing":   big + "x",
		"not json":   strings.Repeat(`{"a":"b",`, 1<<18),
		"too deep":   strings.Repeat(`{"a":`, 20000) + `"` + strings.Repeat("x", 2<<20) + `"` + strings.Repeat("}", 20000),
		"not object": "[" + strings.Repeat(`1,`, 1<<20) + "1]",
	} {
		if m := jsonObject([]byte(b)); m != nil {
			t.Errorf("%s: %d members, want nil", name, len(m))
		}
	}
}
