package verify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// mercadoPagoScheme: x-signature: ts=<unix seconds>,v1=<hex HMAC-SHA256>
// keyed with the application's secret signature over the manifest
// "id:<data.id>;request-id:<x-request-id>;ts:<ts>;", where data.id is the
// query parameter Mercado Pago appends to the notification URL
// (?data.id=…&type=…), lower-cased when alphanumeric. Mercado Pago's docs: a
// part whose value the notification lacks is left out of the manifest. The
// body is not signed: it is the query's data.id that a forged copy changes.
type mercadoPagoScheme struct{}

var (
	_ Scheme = mercadoPagoScheme{}
	_ Forger = mercadoPagoScheme{}
)

const (
	mpSig       = "x-signature"
	mpRequestID = "x-request-id"
)

func (mercadoPagoScheme) Name() string                       { return "mercadopago" }
func (mercadoPagoScheme) Title() string                      { return "Mercado Pago" }
func (mercadoPagoScheme) SignatureHeaders() []string         { return []string{mpRequestID, mpSig} }
func (mercadoPagoScheme) SignsURL() bool                     { return false }
func (mercadoPagoScheme) BodyEdited(*message.Request) string { return "" }
func (mercadoPagoScheme) IdentityInBody() bool               { return true }
func (mercadoPagoScheme) MarkRetry(*message.Request, int)    {}
func (mercadoPagoScheme) Challenge(*message.Request) string  { return "" }

// Tolerance: Mercado Pago signs a timestamp but sets no tolerance; its
// docs leave one to the integrator (its SDKs' validators take an optional
// one), so none is applied unless asked for.
func (mercadoPagoScheme) Tolerance() time.Duration { return 0 }

// IdentitySigned: a fresh event has a fresh data.id, which the manifest covers.
func (mercadoPagoScheme) IdentitySigned() bool { return true }

// NewEventID is a notification id as Mercado Pago numbers them.
func (mercadoPagoScheme) NewEventID() string { return "12" + randomString("0123456789", 9) }

// ResponseTimeout: "Mercado Pago will wait 22 seconds" for the 200/201.
func (mercadoPagoScheme) ResponseTimeout() time.Duration { return 22 * time.Second }

// mpSigPattern is the shape of Mercado Pago's x-signature, which the
// generic name alone does not tell from another sender's.
var mpSigPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^\s*ts=\d+\s*,\s*v1=[0-9a-f]+`) })

func (mercadoPagoScheme) Detects(h message.Headers) bool {
	return h.Has(mpRequestID) && mpSigPattern().MatchString(h.Get(mpSig))
}

// mpParsed is an x-signature header read as Mercado Pago's SDK validators
// read it: comma-separated key=value parts, keys trimmed and lower-cased,
// values trimmed, unknown keys ignored.
type mpParsed struct {
	ts, v1 string
}

func parseMPSignature(h string) mpParsed {
	var p mpParsed
	for _, part := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "ts":
			p.ts = strings.TrimSpace(v)
		case "v1":
			p.v1 = strings.TrimSpace(v)
		}
	}
	return p
}

// mpDataID is the data.id query parameter of r's target ("" when absent).
func mpDataID(r *message.Request) string {
	_, q, _ := strings.Cut(r.Target, "?")
	v, err := url.ParseQuery(q)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(v.Get("data.id"))
}

var alnum = regexp.MustCompile(`^[0-9A-Za-z]+$`)

// mpManifest builds the signed string: parts whose value is missing are
// left out; an alphanumeric data.id is lower-cased.
func mpManifest(dataID, requestID, ts string) string {
	var b strings.Builder
	if dataID != "" {
		if alnum.MatchString(dataID) {
			dataID = strings.ToLower(dataID)
		}
		b.WriteString("id:" + dataID + ";")
	}
	if requestID != "" {
		b.WriteString("request-id:" + requestID + ";")
	}
	b.WriteString("ts:" + ts + ";")
	return b.String()
}

func (mercadoPagoScheme) SignedAt(r *message.Request) (time.Time, bool) {
	p := parseMPSignature(r.Headers.Get(mpSig))
	n, err := strconv.ParseInt(p.ts, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return mpTime(n), true
}

// mpTime reads ts as seconds, or as milliseconds when it has 13 digits (as
// some of Mercado Pago's notifications and SDK tests carry it).
func mpTime(n int64) time.Time {
	if n > 1e12 {
		return time.UnixMilli(n)
	}
	return time.Unix(n, 0)
}

func (mercadoPagoScheme) Verify(r *message.Request, secret string, opt Options) (Result, error) {
	if !r.Headers.Has(mpSig) {
		return missing("mercadopago", mpSig), nil
	}
	p := parseMPSignature(r.Headers.Get(mpSig))
	switch {
	case p.ts == "" && p.v1 == "":
		return invalid("mercadopago", "v1", "malformed x-signature header: want ts=<unix>,v1=<hex>"), nil
	case p.ts == "":
		return invalid("mercadopago", "v1", "malformed x-signature header: no ts=<timestamp>"), nil
	case p.v1 == "":
		return invalid("mercadopago", "v1", "no v1 signature in x-signature header"), nil
	}
	n, err := strconv.ParseInt(p.ts, 10, 64)
	if err != nil {
		return invalid("mercadopago", "v1", "malformed x-signature header: ts is not a unix timestamp"), nil
	}
	signedAt := mpTime(n)
	dataID, requestID := mpDataID(r), strings.TrimSpace(r.Headers.Get(mpRequestID))
	want := macSHA256([]byte(secret), []byte(mpManifest(dataID, requestID, p.ts)))
	if !equalHex(p.v1, want) {
		reason := mismatch([]string{p.v1}, want, false)
		if dataID != "" && dataID != strings.ToLower(dataID) &&
			equalHex(p.v1, macSHA256([]byte(secret), []byte("id:"+dataID+";"+mpManifest("", requestID, p.ts)))) {
			reason = "signature mismatch: it was computed over data.id " + dataID + " as given; Mercado Pago's docs lower-case an alphanumeric data.id in the manifest"
		} else if dataID == "" {
			reason += " (the URL has no data.id query parameter, so the manifest leaves id: out: was the query string dropped on the way?)"
		}
		res := invalid("mercadopago", "v1", reason)
		res.SignedAt, res.CheckedAt = signedAt, opt.Now
		return res, nil
	}
	res := valid("mercadopago", "v1", signedAt, opt.Now)
	if opt.Tolerance > 0 {
		res = checkAge(res, signedAt, opt.Now, opt.Tolerance, false)
	}
	return res, nil
}

// Sign writes x-signature at opt.Now and, as every notification Mercado Pago
// sends carries its own, a fresh x-request-id.
func (mercadoPagoScheme) Sign(r *message.Request, secret string, opt Options) error {
	data, _ := jsonObject(r.Body)["data"].(map[string]any)
	if d := jsonScalar(data["id"]); d != "" && mpDataID(r) == "" {
		// Mercado Pago puts it in the query of every such notification; a
		// signature without it would not verify where the query has it.
		return fmt.Errorf("the body's data.id %s is not in the URL's query: Mercado Pago signs the query's data.id, so give the notification URL with ?data.id=%s", d, d)
	}
	ts := strconv.FormatInt(opt.Now.Unix(), 10)
	if old := parseMPSignature(r.Headers.Get(mpSig)).ts; len(old) == 13 {
		ts = strconv.FormatInt(opt.Now.UnixMilli(), 10) // keep the captured unit
	}
	reqID := newUUID()
	r.Headers = r.Headers.Set(mpRequestID, reqID)
	v1 := hex.EncodeToString(macSHA256([]byte(secret), []byte(mpManifest(mpDataID(r), reqID, ts))))
	r.Headers = r.Headers.Set(mpSig, "ts="+ts+",v1="+v1)
	return nil
}

func (mercadoPagoScheme) Identity(r *message.Request) Identity {
	m := jsonObject(r.Body)
	id := Identity{Provider: "mercadopago", EventID: jsonScalar(m["id"]), EventType: str(m, "action")}
	if id.EventType == "" {
		id.EventType = str(m, "type")
	}
	data, _ := m["data"].(map[string]any)
	d := jsonScalar(data["id"])
	if d == "" {
		d = mpDataID(r)
	}
	switch {
	case id.EventID == "":
		// A notification without an id of its own is known by its resource.
		id.EventID = d
	case d != "":
		id.Extra = map[string]string{"data_id": d}
	}
	return id
}

// jsonScalar renders a JSON string or integer as text ("" otherwise).
func jsonScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// Reidentify gives the notification the id newID (the body's "id", a number
// stays a number) and its resource a fresh id of the same shape, in the
// body's data.id and the query's data.id together: a handler dedupes on
// either, and the signature covers the query's.
func (s mercadoPagoScheme) Reidentify(r *message.Request, newID string) error {
	m := jsonObject(r.Body)
	if m == nil {
		return errors.New("body is not a JSON object")
	}
	var err error
	data, _ := m["data"].(map[string]any)
	old := jsonScalar(data["id"])
	if old == "" {
		old = mpDataID(r)
	}
	switch m["id"].(type) {
	case nil:
		// Known by its resource: data.id is the event id.
		if old == "" {
			return errors.New(`body has no top-level "id" and no data.id`)
		}
		mpSetDataID(r, old, newID)
		return nil
	case float64:
		if _, perr := strconv.ParseUint(newID, 10, 63); perr != nil {
			return fmt.Errorf("the body's id is a number and %q is not", newID)
		}
		r.Body, err = replaceTopLevelRaw(r.Body, "id", []byte(newID))
	case string:
		r.Body, err = replaceTopLevelString(r.Body, "id", newID)
	default:
		return errors.New(`body has no top-level "id"`)
	}
	if err != nil {
		return err
	}
	if old != "" {
		mpSetDataID(r, old, mpFreshLike(old))
	}
	return nil
}

var _ EventIDShaper = mercadoPagoScheme{}

// NewEventIDFor: a notification without a top-level "id" (the Orders API's)
// is known by its resource, data.id, so its fresh id is shaped like that
// one (ORD01… for an order), not numbered like a payment notification's.
func (mercadoPagoScheme) NewEventIDFor(r *message.Request) string {
	m := jsonObject(r.Body)
	if m == nil || m["id"] != nil {
		return ""
	}
	data, _ := m["data"].(map[string]any)
	old := jsonScalar(data["id"])
	if old == "" {
		old = mpDataID(r)
	}
	if old == "" {
		return ""
	}
	return mpFreshLike(old)
}

// mpSetDataID replaces the resource id old with fresh in the body and the
// query's data.id.
func mpSetDataID(r *message.Request, old, fresh string) {
	if b, n, err := replaceStrings(r.Body, map[string]string{old: fresh}); err == nil && n > 0 {
		r.Body = b
	}
	r.Target = setQueryParam(r.Target, "data.id", fresh)
}

// mpFreshLike returns a fresh resource id shaped like old: digits for a
// payment, the same prefix and alphabet for an order (ORD01J…).
func mpFreshLike(old string) string {
	if _, err := strconv.ParseUint(old, 10, 64); err == nil {
		return "1" + randomString("0123456789", max(len(old)-1, 9))
	}
	prefix := strings.TrimRightFunc(old, func(c rune) bool { return c >= '0' && c <= '9' })
	if len(prefix) > 5 {
		prefix = prefix[:5]
	}
	alpha := "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	if strings.ToLower(old) == old {
		alpha = "0123456789abcdef"
	}
	return prefix + randomString(alpha, max(len(old)-len(prefix), 10))
}

// setQueryParam replaces the value of every key= parameter in target's raw
// query, keeping every other byte; target is returned as it was when the
// query has no such parameter.
func setQueryParam(target, key, value string) string {
	path, q, ok := strings.Cut(target, "?")
	if !ok {
		return target
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		if dk, err := url.QueryUnescape(k); err == nil && dk == key {
			parts[i] = k + "=" + url.QueryEscape(value)
		}
	}
	return path + "?" + strings.Join(parts, "&")
}

var (
	_ MismatchExplainer = mercadoPagoScheme{}
	_ Refuser           = mercadoPagoScheme{}
)

// LibraryRefusal: Mercado Pago's manifest has rules of its own that a
// handler may not follow.
func (mercadoPagoScheme) LibraryRefusal(*message.Request) string {
	return "it builds another manifest than Mercado Pago's docs give (data.id taken from somewhere else than the query string, an alphanumeric data.id not lower-cased, " +
		"a part left in the manifest when the notification lacks it, or the x-signature parts not trimmed)"
}

// MismatchCauses: the body is not signed, so no re-encoding of it matters.
func (mercadoPagoScheme) MismatchCauses(secretName string) string {
	return "it was signed with another secret (check that " + secretName + " is the application's secret signature, from Your integrations → Webhooks; test and production have their own), " +
		"or the query string's data.id or the x-request-id header changed on the way (a proxy that rewrites the query or drops headers), " +
		"or the notification is not a Webhooks one (IPN and QR Code notifications are not signed this way)"
}

// Forge changes a correctly signed copy where the signature covers it: the
// query's data.id (the body is not signed), one character of it.
func (mercadoPagoScheme) Forge(r *message.Request) (string, bool) {
	old := mpDataID(r)
	if old == "" {
		return "", false
	}
	b := []byte(old)
	last := len(b) - 1
	switch c := b[last]; {
	case c >= '0' && c < '9', c >= 'a' && c < 'z', c >= 'A' && c < 'Z':
		b[last]++
	default:
		b[last] = '1'
	}
	r.Target = setQueryParam(r.Target, "data.id", string(b))
	return fmt.Sprintf("the query's data.id changed after signing (%s → %s; Mercado Pago signs it, not the body)", old, b), true
}

// Retries: "Mercado Pago will retry every 15 minutes... after the third
// attempt the interval is extended, but the notifications keep being sent".
// Past the third the intervals and horizon are not published: doubling to
// 24 h is modelled.
func (mercadoPagoScheme) Retries() Schedule {
	return Schedule{
		Retries: []time.Duration{15 * time.Minute, 30 * time.Minute, 45 * time.Minute,
			90 * time.Minute, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour},
		Final:  "notification no longer sent (Mercado Pago publishes no end; 24 h modelled)",
		Source: "https://www.mercadopago.com.br/developers/en/docs/your-integrations/notifications/webhooks (no 200/201 within 22 s: retried every 15 minutes, at longer intervals after the third; later intervals and horizon not published, doubling to 24 h modelled)",
	}
}

func (mercadoPagoScheme) Samples() []Fixture {
	return []Fixture{
		{"mercadopago", "payment.created", "mercadopago/payment.created.json", "a payment created (topic payment; data.id the payment)"},
		{"mercadopago", "payment.updated", "mercadopago/payment.updated.json", "a payment updated, e.g. approved"},
		{"mercadopago", "order.processed", "mercadopago/order.processed.json", "an Orders API order processed (alphanumeric ORD… id, lower-cased in the manifest)"},
	}
}

// Sample: Mercado Pago appends ?data.id=<resource id>&type=<topic> to the
// notification URL it was configured with.
func (mercadoPagoScheme) Sample(r *message.Request, _, _ string, _ time.Time) error {
	m := jsonObject(r.Body)
	data, _ := m["data"].(map[string]any)
	if d := jsonScalar(data["id"]); d != "" && mpDataID(r) == "" {
		sep := "?"
		if strings.Contains(r.Target, "?") {
			sep = "&"
		}
		r.Target += sep + "data.id=" + url.QueryEscape(d)
		if t := str(m, "type"); t != "" {
			r.Target += "&type=" + url.QueryEscape(t)
		}
	}
	addHeaders(r,
		"Accept", "*/*",
		"Content-Type", "application/json")
	return nil
}
