package exchange

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), the parts
// hookreplay reads and writes. Fields other tools add are ignored on
// import; on export each entry carries "_hookreplay", the delivery's JSONL
// line (custom fields start with "_" in HAR), so a HAR written by
// hookreplay imports back byte for byte.
type harFile struct {
	Log harLog `json:"log"`
}

type harLog struct {
	Version string     `json:"version"`
	Creator harCreator `json:"creator"`
	Entries []harEntry `json:"entries"`
}

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type harEntry struct {
	StartedDateTime string          `json:"startedDateTime"`
	Time            float64         `json:"time"`
	Request         harRequest      `json:"request"`
	Response        harResponse     `json:"response"`
	Cache           struct{}        `json:"cache"`
	Timings         harTimings      `json:"timings"`
	ServerIPAddress string          `json:"serverIPAddress,omitempty"`
	Hookreplay      json.RawMessage `json:"_hookreplay,omitempty"`
}

type harRequest struct {
	Method      string         `json:"method"`
	URL         string         `json:"url"`
	HTTPVersion string         `json:"httpVersion"`
	Cookies     []harNameValue `json:"cookies"`
	Headers     []harNameValue `json:"headers"`
	QueryString []harNameValue `json:"queryString"`
	PostData    *harPostData   `json:"postData,omitempty"`
	HeadersSize int            `json:"headersSize"`
	BodySize    int            `json:"bodySize"`
}

type harNameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harPostData struct {
	MimeType string         `json:"mimeType"`
	Text     string         `json:"text"`
	Encoding string         `json:"encoding,omitempty"`
	Params   []harNameValue `json:"params,omitempty"`
}

type harResponse struct {
	Status      int            `json:"status"`
	StatusText  string         `json:"statusText"`
	HTTPVersion string         `json:"httpVersion"`
	Cookies     []harNameValue `json:"cookies"`
	Headers     []harNameValue `json:"headers"`
	Content     harContent     `json:"content"`
	RedirectURL string         `json:"redirectURL"`
	HeadersSize int            `json:"headersSize"`
	BodySize    int            `json:"bodySize"`
}

type harContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
	Encoding string `json:"encoding,omitempty"`
}

type harTimings struct {
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// readHAR reads every entry of a HAR file as a delivery.
func readHAR(data []byte, o ReadOptions) ([]*store.Delivery, error) {
	var out []*store.Delivery
	err := EachHAR(bytes.NewReader(data), o, func(d *store.Delivery) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// notRequest reports whether a HAR entry's URL names something that was
// never an HTTP request on the wire (data:, blob:, about:, WebSocket frames'
// ws: entries, browser extension resources).
func notRequest(u string) bool {
	scheme, _, ok := strings.Cut(u, ":")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "data", "blob", "about", "ws", "wss", "chrome-extension", "moz-extension", "chrome", "file":
		return true
	}
	return false
}

// harDelivery rebuilds one entry's request. A hookreplay-written entry whose
// request fields still match its "_hookreplay" line is imported from that
// line (exact bytes, identity, response); an edited or foreign entry is
// rebuilt from method, URL, headers and body.
func harDelivery(e harEntry, o ReadOptions) (*store.Delivery, error) {
	method, target, proto, hs, body, err := harParts(e.Request)
	if err != nil {
		return nil, err
	}
	if len(e.Hookreplay) > 0 {
		// The encoder indented the line with the rest of the file: one line again.
		var line bytes.Buffer
		if json.Compact(&line, e.Hookreplay) == nil {
			line.WriteByte('\n')
		}
		if ds, err := store.ReadJSONL(&line); err == nil && len(ds) == 1 {
			d := ds[0]
			// The line's strings are compared as JSON carries them (its
			// request is raw's, byte for byte; the entry's is JSON text).
			if d.Method == method && store.JSONText(d.Target) == store.JSONText(target) && bytes.Equal(d.Body, body) && sameHeaders(d.Headers, hs) {
				if int64(len(d.Body)) > o.maxBody() {
					return nil, errors.New(bodyTooLarge(len(d.Body), o.maxBody()))
				}
				return d, nil
			}
		}
	}
	d, err := build(method, target, proto, hs, body, o.maxBody())
	if err != nil {
		return nil, err
	}
	if t, err := time.Parse(time.RFC3339Nano, e.StartedDateTime); err == nil {
		d.ReceivedAt = t
	}
	harResponseInto(d, e)
	return d, nil
}

// harParts returns the request of an entry: pseudo-headers of HTTP/2 and 3
// (":authority", ":method", ...) are dropped, ":authority" becoming Host
// in its place; without either, Host is the URL's authority, first.
func harParts(r harRequest) (method, target, proto string, hs message.Headers, body []byte, err error) {
	method = r.Method
	authority, target, err := targetOf(r.URL)
	if err != nil {
		return
	}
	hasHost := false
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, "Host") {
			hasHost = true
		}
	}
	for _, h := range r.Headers {
		if strings.HasPrefix(h.Name, ":") {
			if strings.EqualFold(h.Name, ":authority") && !hasHost {
				hs = append(hs, message.Header{Name: "Host", Value: h.Value})
				hasHost = true
			}
			continue
		}
		hs = append(hs, message.Header{Name: h.Name, Value: h.Value})
	}
	if !hasHost {
		if authority == "" {
			err = fmt.Errorf("URL %q has no host and the request has no Host header", message.Printable(r.URL))
			return
		}
		hs = append(message.Headers{{Name: "Host", Value: authority}}, hs...)
	}
	proto = strings.ToUpper(r.HTTPVersion)
	if p := r.PostData; p != nil {
		switch {
		case strings.EqualFold(p.Encoding, "base64"):
			if body, err = base64.StdEncoding.DecodeString(p.Text); err != nil {
				err = fmt.Errorf("postData.text is not base64: %v", err)
				return
			}
		case p.Text != "":
			body = []byte(p.Text)
		case len(p.Params) > 0:
			// Only params (some tools' form posts): encode them as the form was.
			v := make([]string, len(p.Params))
			for i, kv := range p.Params {
				v[i] = url.QueryEscape(kv.Name) + "=" + url.QueryEscape(kv.Value)
			}
			body = []byte(strings.Join(v, "&"))
		}
	}
	return
}

// sameHeaders compares header lists exactly (order, case, values).
func sameHeaders(a, b message.Headers) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || store.JSONText(a[i].Value) != store.JSONText(b[i].Value) {
			return false
		}
	}
	return true
}

// harResponseInto records an entry's response on d, when it has one.
func harResponseInto(d *store.Delivery, e harEntry) {
	r := e.Response
	if r.Status <= 0 || r.Status > 999 {
		return
	}
	d.ResponseStatus = r.Status
	for _, h := range r.Headers {
		if !strings.HasPrefix(h.Name, ":") {
			d.ResponseHeaders = append(d.ResponseHeaders, message.Header{Name: h.Name, Value: h.Value})
		}
	}
	if strings.EqualFold(r.Content.Encoding, "base64") {
		d.ResponseBody, _ = base64.StdEncoding.DecodeString(r.Content.Text)
	} else {
		d.ResponseBody = []byte(r.Content.Text)
	}
	if e.Time > 0 {
		d.Latency = time.Duration(e.Time * float64(time.Millisecond))
	}
}

// writeHAR writes the deliveries as one HAR 1.2 log, an entry at a time:
// the bytes are those of encoding the whole log at once (two-space indent,
// HTML left unescaped), without holding every entry.
func writeHAR(w io.Writer, each Each, version string) error {
	bw := bufio.NewWriter(w)
	var doc bytes.Buffer
	enc := json.NewEncoder(&doc)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	f := harFile{Log: harLog{Version: "1.2", Creator: harCreator{Name: "hookreplay", Version: version}, Entries: []harEntry{}}}
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("write har: %w", err)
	}
	// The empty log, cut around its entries' "[]".
	head, tail, _ := bytes.Cut(doc.Bytes(), []byte(`"entries": []`))
	head = append(head, `"entries": [`...)
	tail = append([]byte("]"), tail...)
	const indent = "      " // an entry's depth: {"log": {"entries": [ … ]}}
	var entry bytes.Buffer
	eenc := json.NewEncoder(&entry)
	eenc.SetEscapeHTML(false)
	eenc.SetIndent(indent, "  ")
	n := 0
	err := each(func(d *store.Delivery) error {
		e, err := harEntryOf(d)
		if err != nil {
			return err
		}
		entry.Reset()
		if err := eenc.Encode(e); err != nil {
			return fmt.Errorf("write har: %w", err)
		}
		if n == 0 {
			bw.Write(head)
		} else {
			bw.WriteString(",")
		}
		n++
		bw.WriteString("\n" + indent)
		// C1, DEL and bidi controls escaped as in every JSON hookreplay
		// writes: the same values, nothing a terminal or viewer acts on.
		_, err = bw.Write(message.EscapeJSON(bytes.TrimSuffix(entry.Bytes(), []byte("\n"))))
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		bw.Write(doc.Bytes())
	} else {
		bw.WriteString("\n    ")
		bw.Write(tail)
	}
	return bw.Flush()
}

func harEntryOf(d *store.Delivery) (harEntry, error) {
	var line bytes.Buffer
	if err := store.WriteJSONL(&line, []*store.Delivery{d}); err != nil {
		return harEntry{}, err
	}
	host := d.Headers.Get("Host")
	if host == "" {
		host = "localhost"
	}
	u := d.Target
	if strings.HasPrefix(u, "/") || u == "*" {
		u = "http://" + host + strings.TrimPrefix(u, "*")
	}
	req := harRequest{
		Method: d.Method, URL: u, HTTPVersion: d.Proto,
		Cookies: harCookies(d.Headers.Values("Cookie")), Headers: harHeaders(d.Headers),
		QueryString: harQuery(d.Target), HeadersSize: headSize(d.Raw), BodySize: len(d.Body),
	}
	if len(d.Body) > 0 {
		req.PostData = &harPostData{MimeType: d.Headers.Get("Content-Type")}
		req.PostData.Text, req.PostData.Encoding = harText(d.Body)
	}
	resp := harResponse{
		Status: d.ResponseStatus, StatusText: statusText(d.ResponseStatus), HTTPVersion: "HTTP/1.1",
		Cookies: []harNameValue{}, Headers: harHeaders(d.ResponseHeaders),
		Content:     harContent{Size: responseSize(d), MimeType: d.ResponseHeaders.Get("Content-Type")},
		HeadersSize: -1, BodySize: len(d.ResponseBody),
	}
	resp.Content.Text, resp.Content.Encoding = harText(d.ResponseBody)
	ms := float64(d.Latency) / float64(time.Millisecond)
	return harEntry{
		StartedDateTime: d.ReceivedAt.UTC().Format("2006-01-02T15:04:05.000000000Z07:00"),
		Time:            ms,
		Request:         req,
		Response:        resp,
		Timings:         harTimings{Send: 0, Wait: ms, Receive: 0},
		Hookreplay:      json.RawMessage(bytes.TrimSpace(line.Bytes())),
	}, nil
}

// harText returns a body as HAR text: as is when it is UTF-8 without NUL,
// else base64 with encoding "base64".
func harText(b []byte) (string, string) {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return string(b), ""
	}
	return base64.StdEncoding.EncodeToString(b), "base64"
}

func harHeaders(hs message.Headers) []harNameValue {
	out := make([]harNameValue, len(hs))
	for i, h := range hs {
		out[i] = harNameValue{Name: h.Name, Value: h.Value}
	}
	return out
}

func harCookies(vals []string) []harNameValue {
	out := []harNameValue{}
	for _, v := range vals {
		for _, c := range strings.Split(v, ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(c), "=")
			if name != "" {
				out = append(out, harNameValue{Name: name, Value: value})
			}
		}
	}
	return out
}

func harQuery(target string) []harNameValue {
	out := []harNameValue{}
	_, q, ok := strings.Cut(target, "?")
	if !ok {
		return out
	}
	for _, kv := range strings.Split(q, "&") {
		if kv == "" {
			continue
		}
		name, value, _ := strings.Cut(kv, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		out = append(out, harNameValue{Name: name, Value: value})
	}
	return out
}

// headSize is the byte length of the request line and headers up to and
// including the blank line, or -1 when raw has none.
func headSize(raw []byte) int {
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		return i + 4
	}
	if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	return -1
}

func statusText(code int) string {
	if code == 0 {
		return ""
	}
	if t := http.StatusText(code); t != "" {
		return t
	}
	return strconv.Itoa(code)
}

// responseSize is the length of the handler's whole answer (capture may
// have kept only its first bytes).
func responseSize(d *store.Delivery) int {
	if d.ResponseSize > int64(len(d.ResponseBody)) {
		return int(d.ResponseSize)
	}
	return len(d.ResponseBody)
}
